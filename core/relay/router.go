package relay

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/blocks"
	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/route"
	"github.com/partyhq/party/core/wait"
)

// Router runs a Switchboard over the role panes of a session: it scans
// every role's screen, forwards each new block to the role it names
// through the delivery protocol, and logs what it did.
type Router struct {
	Mux      mux.Multiplexer
	Clock    clock.Clock
	Session  string
	Panes    []mux.Pane // the session's panes
	HopLimit int
	Deliver  *deliver.Deliverer
	// Profile is the profile to deliver to role's pane with.
	Profile func(role string, p mux.Pane) agent.Profile
	// Log appends one event to the session's event log.
	Log func(ev map[string]any)
	// Progress gets one line per decision (stderr).
	Progress io.Writer

	sb     *Switchboard
	roleOf map[string]mux.Pane
}

// Start notes the blocks on screen now: they were there before the
// switchboard, so they are not routed.
func (r *Router) Start(ctx context.Context) error {
	r.sb = &Switchboard{Roles: route.Roles(r.Panes), HopLimit: r.HopLimit}
	r.roleOf = map[string]mux.Pane{}
	for _, p := range r.Panes {
		if p.Role != "" {
			r.roleOf[p.Role] = p
		}
	}
	for _, p := range r.roleOf {
		found, err := r.scan(ctx, p)
		if err != nil {
			return err
		}
		for _, b := range found {
			r.sb.Ignore(b.ID)
		}
	}
	return nil
}

// Roles is the roles the switchboard serves.
func (r *Router) Roles() []string { return r.sb.Roles }

// Run routes until ctx ends or done is closed (the session ended). It
// re-scans when wake fires (any pane printed) and at least every second.
// Start must have been called.
func (r *Router) Run(ctx context.Context, wake, done <-chan struct{}) error {
	r.Log(map[string]any{"time": r.Clock.Now().UTC(), "kind": "route.start", "roles": r.sb.Roles, "hop_limit": r.HopLimit})
	fmt.Fprintf(r.Progress, "party: switchboard on %s: %d roles, hop limit %d\n", r.Session, len(r.roleOf), r.HopLimit)
	for {
		r.pass(ctx)
		if !r.pause(ctx, wake, done) {
			return nil
		}
	}
}

// pass scans every role once and acts on the new blocks.
func (r *Router) pass(ctx context.Context) {
	for role, p := range r.roleOf {
		found, err := r.scan(ctx, p)
		if err != nil {
			continue // a pane that went away
		}
		for _, dec := range r.sb.See(role, found) {
			ev := map[string]any{"time": r.Clock.Now().UTC(), "id": dec.Block.ID, "from": role, "to": dec.Block.To, "hop": dec.Hop}
			if dec.To == "" {
				ev["kind"] = "route." + dec.Reason
				r.Log(ev)
				fmt.Fprintf(r.Progress, "party: block %s from %s to %q not forwarded: %s\n", dec.Block.ID, role, dec.Block.To, dec.Reason)
				continue
			}
			to := r.roleOf[dec.To]
			res, err := r.Deliver.Send(ctx, deliver.Request{Pane: to.ID, Profile: r.Profile(dec.To, to), Text: Forward(dec)})
			ev["kind"], ev["outcome"] = "route.forward", res.Outcome
			if err != nil {
				ev["error"] = err.Error()
			}
			r.Log(ev)
			fmt.Fprintf(r.Progress, "party: block %s %s -> %s: %s\n", dec.Block.ID, role, dec.To, res.Outcome)
		}
	}
}

// pause waits for a wake-up or a second; false means stop.
func (r *Router) pause(ctx context.Context, wake, done <-chan struct{}) bool {
	select {
	case <-done:
		return false
	default:
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if done != nil {
		go func() { // ends with pause
			select {
			case <-done:
				cancel()
			case <-sctx.Done():
			}
		}()
	}
	w := &wait.Waiter{Clock: r.Clock, Wake: wake}
	_ = w.Sleep(sctx, time.Second)
	return sctx.Err() == nil
}

func (r *Router) scan(ctx context.Context, p mux.Pane) ([]blocks.Block, error) {
	s, err := r.Mux.Capture(ctx, p.ID, History)
	if err != nil {
		return nil, err
	}
	found, _ := blocks.Parse(s)
	return found, nil
}
