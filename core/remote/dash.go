package remote

import (
	"context"
	"errors"
	"time"

	"github.com/partyhq/party/core/dash"
	"github.com/partyhq/party/core/hosts"
)

// dashWait bounds one look at a host for the dashboard: ssh's
// ConnectTimeout (5 s) and the party there reading its sessions.
const dashWait = 10 * time.Second

// Dash is h's part of the dashboard (party dash over hosts): party dash
// --once --json there, run by ssh with argv (Party: the version checked),
// within dashWait. A host that does not answer, refuses the keys or runs
// another version is offline, with the error's code; one without a tmux
// server is online with no sessions.
//
// The agents' states are what the party there reads of its own panes,
// hooks and screens (tmux operations of that host, as party check), which
// its supervisors' API does not carry: a runtime's status is the
// supervisor's, and a session without a supervisor has no API.
func (c Caller) Dash(ctx context.Context, h hosts.Host) dash.Host {
	start := c.Clock.Now()
	out := dash.Host{Name: h.Name, SSH: h.Dest, Sessions: []dash.Session{}}
	ctx, cancel := context.WithTimeout(ctx, dashWait)
	defer cancel()
	var m dash.Model
	err := c.Party(ctx, h, nil, &m, "dash", "--once")
	out.Elapsed = c.Clock.Now().Sub(start).Milliseconds()
	var re *hosts.RemoteError
	switch {
	case errors.As(err, &re) && re.Code == "NO_SERVER":
		err = nil
	case err == nil && m.Sessions != nil:
		out.Sessions = m.Sessions
	}
	if err != nil {
		out.Error = &dash.HostError{Code: c.Classify(err), Message: err.Error()}
		return out
	}
	out.Online, out.Seen = true, c.Clock.Now()
	return out
}
