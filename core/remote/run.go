package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/partyhq/party/core/hosts"
)

// Party runs party with args and --json on h (hosts.RunInput), stdin on
// its stdin (nil: nothing), and decodes what it printed into out. What a
// person or an agent wrote goes in stdin only: args are plain words
// (hosts.CheckWord refuses anything else).
//
// A failure the remote party reported in its --json (the "error" member
// of what it printed, or of the first element of a list that has one)
// is a *hosts.RemoteError with the remote's code, and out holds what it
// printed all the same; so the error table gives the local command the
// remote's code and status. A failure of ssh is a *hosts.Error (its
// Reason), stdout that is no JSON of party's an error that says so.
func (c Caller) Party(ctx context.Context, h hosts.Host, stdin io.Reader, out any, args ...string) error {
	b, err := hosts.RunInput(ctx, c.SSH, h, stdin, append(args, "--json")...)
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
