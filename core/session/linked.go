package session

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/partyhq/party/core/shellwords"
	"github.com/partyhq/party/core/task"
	"github.com/partyhq/party/core/tmux"
)

// Linked returns the party session of the team linked from cwd on
// tc's server: the one started in the linked directory or below it, where
// no other link is nearer (the working directory its session record
// holds). None, or more than one, is an error wrapping
// ErrUnresolved. party pm jump switches to it.
func Linked(ctx context.Context, tc *tmux.Client, cwd string) (string, error) {
	link, err := task.FindLink(cwd)
	if err != nil {
		return "", err
	}
	snap, err := tc.Snapshot(ctx)
	if err != nil {
		return "", err
	}
	dirs := map[string]string{}
	for _, s := range snap.Sessions {
		if s.StateDir != "" {
			dirs[s.Name] = s.StateDir
		}
	}
	found := sessionsIn(link.Dir, dirs)
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no party session on %s runs in %s; start one there with 'party start': %w", tc.Socket, link.Dir, ErrUnresolved)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%d party sessions run in %s (%s); pick one with --session: %w", len(found), link.Dir, strings.Join(found, ", "), ErrUnresolved)
}

// sessionsIn returns the party sessions, given as name -> state dir, that
// were started in dir or below it where no other link is nearer, in name
// order. A state dir without a readable session record is left out.
func sessionsIn(dir string, stateDirs map[string]string) []string {
	dir = filepath.Clean(dir)
	var out []string
	for name, sd := range stateDirs {
		rec, err := ReadRecord(sd)
		if err != nil || rec.Cwd == "" {
			continue
		}
		if l, err := task.FindLink(rec.Cwd); err == nil && l.Dir == dir {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Jump is what SwitchTo did.
type Jump struct {
	// Attach is the command line that attaches a terminal to Session.
	Attach   string `json:"attach"`
	Session  string `json:"session"`
	Switched bool   `json:"switched"`
}

// Text is what party pm jump prints: "switched to SESSION", else the
// attach command.
func (j Jump) Text() string {
	if j.Switched {
		return "switched to " + j.Session
	}
	return j.Attach
}

// SwitchTo switches the tmux client this process runs in (inTmux) to
// session name of tc's server. Outside tmux, or when that client is
// another server's (refused), it switches nothing: Attach is then the
// command to run.
func SwitchTo(ctx context.Context, tc *tmux.Client, name string, inTmux bool) (j Jump, refused bool) {
	target := tmux.SessionTarget(name)
	j = Jump{Session: name, Attach: shellwords.Join(tc.Argv("attach-session", "-t", target))}
	if !inTmux {
		return j, false
	}
	if _, err := tc.Run(ctx, "switch-client", "-t", target); err != nil {
		return j, true
	}
	j.Switched = true
	return j, false
}
