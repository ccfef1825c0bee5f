package panes

import (
	"context"
	"fmt"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/tmux"
)

// Watch is tmux telling of changes to the session's panes: a
// control client subscribed to every pane's death (tmux checks it every
// second) and told of windows and layouts that change, which from then on
// also answers tm's queries (tmux.Client.Queries). Nil when no control
// client could attach: then the loop's scans alone see them, and every
// query runs a tmux process. Call it before tm is shared.
func Watch(ctx context.Context, tm *tmux.Client, session string, logf func(string, ...any)) <-chan struct{} {
	cc, err := tm.Control(ctx, session, false)
	if err != nil {
		logf("no tmux control client (%v): panes are looked at every scan only", err)
		return nil
	}
	if _, err := cc.Command(ctx, "refresh-client", "-B", "party-panes:%*:#{pane_dead}-#{pane_pid}"); err != nil {
		logf("tmux subscription: %v", err)
	}
	// The supervisor's scans, looks and waits ask tmux over it, not a
	// tmux process each (issue 40: 10 display-messages a trigger).
	tm.Queries = cc
	changed := make(chan struct{}, 1)
	go func() { // ends with ctx or the control client
		defer cc.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case <-cc.Done():
				return
			case <-cc.Notifications():
				select {
				case changed <- struct{}{}:
				default:
				}
			}
		}
	}()
	return changed
}

// StopPane ends the agent of a stopping runtime (supervise.Ops.StopPane):
// C-c, a second at half the grace, the pane killed once the agent exited
// or after grace (zero: 5 s).
func StopPane(tm *tmux.Client, clk clock.Clock) func(ctx context.Context, rt supervise.Runtime, grace time.Duration) (string, error) {
	return func(ctx context.Context, rt supervise.Runtime, grace time.Duration) (string, error) {
		if grace == 0 {
			grace = 5 * time.Second
		}
		// The agents ask for a second C-c to quit when idle (Claude, Codex
		// and Gemini alike): the second comes at half the grace.
		how := "exited on C-c"
		if err := tm.SendKey(ctx, rt.Pane, "C-c"); err == nil {
			start := clk.Now()
			again := true
			for {
				p, err := tm.Pane(ctx, rt.Pane)
				if err != nil || p.Dead || p.Role != rt.Role {
					break
				}
				waited := clk.Now().Sub(start)
				if waited >= grace {
					how = fmt.Sprintf("still running %s after C-c: pane killed", grace)
					break
				}
				if again && waited >= min(grace/2, time.Second) {
					again = false
					_ = tm.SendKey(ctx, rt.Pane, "C-c")
				}
				if err := clk.Sleep(ctx, 100*time.Millisecond); err != nil {
					return how, err
				}
			}
		}
		if p, err := tm.Pane(ctx, rt.Pane); err == nil && p.Role == rt.Role {
			if err := tm.KillPane(ctx, rt.Pane); err != nil {
				return how, err
			}
		}
		return how, nil
	}
}
