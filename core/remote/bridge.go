package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/partyhq/party/core/hosts"
	"github.com/partyhq/party/core/roles"
	"github.com/partyhq/party/core/supervise"
)

// Client is a client of the API of session's supervisor on h as the
// operator, through the API bridge (party supervise bridge there): HTTP
// on one ssh connection, made now (so that an ssh failure, another
// version or no supervisor there is its error) and reused for the
// client's life; HTTP.CloseIdleConnections ends it. A connection that
// broke is made again on the next call.
func (c Caller) Client(ctx context.Context, h hosts.Host, session string) (*supervise.Client, error) {
	first, _, err := hosts.Dial(ctx, c.Clock, c.SSH, h, session, c.Version)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	return supervise.NewClient(func(ctx context.Context) (net.Conn, error) {
		mu.Lock()
		defer mu.Unlock()
		if conn := first; conn != nil {
			first = nil
			return conn, nil
		}
		conn, _, err := hosts.Dial(ctx, c.Clock, c.SSH, h, session, c.Version)
		return conn, err
	}), nil
}

// Trigger records req for its role in session on h, through the API
// bridge: the request, text and all, goes in the body of the API call,
// never on a command line. With wait it returns once the trigger ended
// or timeout passed (supervise.Ended); a bridge that broke meanwhile is
// an error that says the turn goes on there.
func (c Caller) Trigger(ctx context.Context, h hosts.Host, session string, req supervise.TriggerRequest, wait bool, timeout time.Duration) (supervise.Trigger, bool, error) {
	cl, err := c.Client(ctx, h, session)
	if err != nil {
		return supervise.Trigger{}, false, err
	}
	defer cl.HTTP.CloseIdleConnections()
	t, created, err := cl.Submit(ctx, req)
	if err != nil || !wait {
		return t, created, err
	}
	deadline := c.Clock.Now().Add(timeout)
	for {
		left := deadline.Sub(c.Clock.Now())
		got, err := cl.AwaitTrigger(ctx, t.ID, max(0, min(left, supervise.MaxWait)))
		if err != nil {
			// The bridge broke: the turn there goes on.
			return t, created, fmt.Errorf("host %s: waiting for trigger %s (it goes on there: party trigger show): %w", h.Name, t.ID, err)
		}
		t = got
		if !got.Status.Open() || left <= 0 {
			break
		}
	}
	t, err = supervise.Ended(t, timeout)
	return t, created, err
}

// SessionOf is the one party session on h whose panes carry role.
func (c Caller) SessionOf(ctx context.Context, h hosts.Host, role string) (string, error) {
	sessions, err := c.sessions(ctx, h)
	if err != nil {
		return "", err
	}
	var hits []string
	for _, s := range sessions {
		if slices.Contains(s.Roles, role) {
			hits = append(hits, s.Name)
		}
	}
	switch len(hits) {
	case 0:
		return "", fmt.Errorf("no party session on host %s has a pane with role %q: %w", h.Name, role, roles.ErrNotFound)
	case 1:
		return hits[0], nil
	}
	return "", fmt.Errorf("role %q is in %d sessions on host %s (%s): give --session: %w", role, len(hits), h.Name, strings.Join(hits, ", "), roles.ErrAmbiguous)
}

// Bridge is the remote end of the API bridge (party supervise bridge):
// it says hello (version) on out and copies in to conn, the API socket
// of session's supervisor, and back until either side closes. When
// there is no conn (err says why: no such session, no supervisor
// serving), the hello says why, with the error's code (classify), and
// so does its error.
func Bridge(ctx context.Context, version, session string, conn net.Conn, err error, classify func(error) string, in io.Reader, out io.Writer) error {
	hello := hosts.Hello{Version: version, Session: session}
	if err != nil {
		hello.Error = &hosts.RemoteError{Code: classify(err), Message: err.Error()}
		if serr := hosts.Serve(ctx, hello, nil, in, out); serr != nil {
			return errors.Join(err, serr)
		}
		return err
	}
	return hosts.Serve(ctx, hello, conn, in, out)
}

// TheSession is the one party session on h, for a call that names no
// role (party runtimes --host): several are session.ErrUnresolved's
// kind of error, left to the caller to type (unresolved).
func (c Caller) TheSession(ctx context.Context, h hosts.Host, unresolved error) (string, error) {
	sessions, err := c.sessions(ctx, h)
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(sessions))
	for _, s := range sessions {
		names = append(names, s.Name)
	}
	switch len(names) {
	case 1:
		return names[0], nil
	case 0:
		return "", fmt.Errorf("no party session on host %s: %w", h.Name, unresolved)
	}
	return "", fmt.Errorf("%d party sessions on host %s (%s): pick one with --session: %w", len(names), h.Name, strings.Join(names, ", "), unresolved)
}

// Runtimes are the runtimes of session's supervisor on h, through the
// API bridge (one connection).
func (c Caller) Runtimes(ctx context.Context, h hosts.Host, session string) ([]supervise.Runtime, error) {
	return c.runtimes(ctx, h, session)
}

// Send puts req into a role's inbox in session on h through the API
// bridge, as the operator: the text goes in the body of the API call.
func (c Caller) Send(ctx context.Context, h hosts.Host, session string, req supervise.MessageRequest) (supervise.Message, error) {
	cl, err := c.Client(ctx, h, session)
	if err != nil {
		return supervise.Message{}, err
	}
	defer cl.HTTP.CloseIdleConnections()
	return cl.Send(ctx, req)
}
