package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/partyhq/party/core/hosts"
)

// CallerFlag is the hidden flag of every party command by which a party
// that runs a command on another host tells that party its version
// (--caller-version=V): the party there refuses to act for another
// version (CheckCaller), as the bridge's hello does.
const CallerFlag = "--caller-version"

// CheckCaller is the check of CallerFlag on the host that was called: an
// error (hosts.ErrVersion: VERSION_MISMATCH, exit 11) when the calling
// party's version caller is not this one's, own.
func CheckCaller(caller, own string) error {
	if caller != own {
		return fmt.Errorf("the party there is %s, the calling party %s: install the same party version on both: %w", own, caller, hosts.ErrVersion)
	}
	return nil
}

// Party runs party with args and --json on h (hosts.RunInput), stdin on
// its stdin (nil: nothing), and decodes what it printed into out. What a
// person or an agent wrote goes in stdin only: args are plain words
// (hosts.CheckWord refuses anything else). The party there is told this
// party's version (CallerFlag) and refuses another; one too old to know
// the flag is hosts.ErrNoBridge (REMOTE_TOO_OLD).
//
// A failure the remote party reported in its --json (the "error" member
// of what it printed, or of the first element of a list that has one)
// is a *hosts.RemoteError with the remote's code, and out holds what it
// printed all the same; so the error table gives the local command the
// remote's code and status. A failure of ssh is a *hosts.Error (its
// Reason), stdout that is no JSON of party's an error that says so.
func (c Caller) Party(ctx context.Context, h hosts.Host, stdin io.Reader, out any, args ...string) error {
	words := args
	if hosts.CheckWord(c.Version) == nil {
		words = append([]string{args[0], CallerFlag + "=" + c.Version}, args[1:]...)
	}
	b, err := hosts.RunInput(ctx, c.SSH, h, stdin, append(words, "--json")...)
	var he *hosts.Error
	if err != nil && !(errors.As(err, &he) && he.Reason == hosts.ReasonFailed) {
		return err // ssh's, or a remote party that could not start
	}
	if derr := json.Unmarshal(b, out); derr != nil {
		if reported := reportedError(h.Name, b); reported != nil {
			return reported
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("host %s: party %s --json printed no JSON of party's (%.80q): %w", h.Name, args[0], b, hosts.ErrRemote)
	}
	if err == nil {
		return nil
	}
	if reported := reportedError(h.Name, b); reported != nil {
		return reported
	}
	return err
}

// reportedError is the error a remote party's --json output b reports
// (its "error" member, or the first element's of a list), as a
// *hosts.RemoteError; nil when it reports none.
func reportedError(host string, b []byte) error {
	type failed struct {
		Error *ErrorInfo `json:"error"`
	}
	var one failed
	if json.Unmarshal(b, &one) == nil && one.Error != nil {
		if one.Error.Code == "USAGE" && strings.Contains(one.Error.Message, "unknown flag: "+CallerFlag) {
			return &hosts.Error{Host: host, Reason: hosts.ReasonNoBridge, Exit: 2, Stderr: one.Error.Message}
		}
		return &hosts.RemoteError{Host: host, Code: one.Error.Code, Message: one.Error.Message}
	}
	var list []failed
	if json.Unmarshal(b, &list) == nil {
		for _, f := range list {
			if f.Error != nil {
				return &hosts.RemoteError{Host: host, Code: f.Error.Code, Message: f.Error.Message}
			}
		}
	}
	return nil
}
