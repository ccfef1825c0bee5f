package deliver

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/observe"
)

// ready looks at the pane until the agent takes text: it waits for an
// agent still starting (up to req.Ready) and refuses a dead pane, another
// program, a dialog, a menu, and text in the input box unless req.Clear.
func (d *Deliverer) ready(ctx context.Context, req Request) (observe.State, error) {
	limit := req.Ready
	if limit <= 0 {
		limit = DefaultReady
	}
	deadline := d.Clock.Now().Add(limit)
	clears := 0
	var (
		foreign time.Time // when text was first seen in the box
		shown   time.Time // when the box was first seen ready
	)
	for {
		pane, screen, err := d.Mux.Inspect(ctx, req.Pane)
		if err != nil {
			return observe.State{}, fmt.Errorf("send to %s: %w", req.Pane, err)
		}
		if pane.Dead {
			return observe.State{Pane: pane, Screen: screen}, fmt.Errorf("send to %s (%s): %w", req.Pane, describeDead(pane), ErrPaneDead)
		}
		if !req.Profile.Runs(pane.CurrentCommand) {
			// A pane just started may still run party's launcher
			// (party exec-spec) before it execs the agent, or env: an
			// agent npm installs is a script run by #!/usr/bin/env node
			// (codex, gemini), env until it execs node.
			if (pane.CurrentCommand == launcher || pane.CurrentCommand == "env") && observe.Young(pane.PID, youngAgent) && d.Clock.Now().Before(deadline) {
				if err := d.Clock.Sleep(ctx, readyPoll); err != nil {
					return observe.State{Pane: pane, Screen: screen}, err
				}
				continue
			}
			return observe.State{Pane: pane, Screen: screen}, fmt.Errorf("send to %s: running %q, expected %s: %w",
				req.Pane, pane.CurrentCommand, strings.Join(req.Profile.Commands, " or "), ErrNotRunning)
		}
		if pane.InMode {
			// Copy mode shows the scrollback, not the agent: leave it.
			if err := d.Mux.LeaveMode(ctx, req.Pane); err != nil {
				return observe.State{}, fmt.Errorf("send to %s: leave copy mode: %w", req.Pane, err)
			}
			if screen, err = d.Mux.Capture(ctx, req.Pane, 0); err != nil {
				return observe.State{}, fmt.Errorf("send to %s: %w", req.Pane, err)
			}
		}
		st := observe.Read(req.Profile, pane, screen)
		switch {
		case req.Force:
			return st, nil
		case st.Dialog != "":
			return st, fmt.Errorf("send to %s: %q (answer it, or --force): %w", req.Pane, st.Dialog, ErrDialog)
		case st.Menu:
			return st, fmt.Errorf("send to %s: a completion menu is open over the input (Enter would pick from it); last screen:\n%s\n%w", req.Pane, tail(screen), ErrDialog)
		case st.HasInput && st.Input != "":
			if foreign.IsZero() {
				foreign = d.Clock.Now()
			}
			if !req.Clear && d.Clock.Now().Sub(foreign) < foreignGrace {
				break // an earlier submission may still be leaving the box
			}
			if !req.Clear {
				return st, fmt.Errorf("send to %s: it holds %q, not sent by party (someone typing?); --clear removes it first: %w",
					req.Pane, clip(st.Input, 80), ErrInputBusy)
			}
			if clears++; clears > maxClears {
				return st, fmt.Errorf("send to %s: the input box still holds %q after %d Ctrl-U: %w", req.Pane, clip(st.Input, 80), maxClears, ErrInputBusy)
			}
			if err := d.clearLine(ctx, req); err != nil {
				return st, fmt.Errorf("send to %s: clear the input: %w", req.Pane, err)
			}
		case st.Ready(req.Profile):
			// A freshly started agent may show its box before it takes
			// a paste as a paste.
			if w := req.Profile.Warmup; w > 0 && observe.Young(pane.PID, youngAgent) && fresh(req.Profile, st) {
				if shown.IsZero() {
					shown = d.Clock.Now()
				}
				if d.Clock.Now().Sub(shown) < w {
					break
				}
			}
			return st, nil
		case !d.Clock.Now().Before(deadline):
			return st, fmt.Errorf("send to %s: no input box on screen after %s: %w", req.Pane, limit, ErrNotReady)
		}
		if err := d.Clock.Sleep(ctx, readyPoll); err != nil {
			return st, fmt.Errorf("send to %s: waiting for the agent's input box: %w", req.Pane, err)
		}
	}
}

// maxClears bounds the Ctrl-U presses that empty a box (one per line in
// some agents).
const maxClears = 20

// foreignGrace is how long text in the input box is watched before it is
// taken for someone else's: the agent may still be clearing a submission.
const foreignGrace = 300 * time.Millisecond

// launcher is the pane command of party's launcher, which execs the agent.
const launcher = "party"

// youngAgent is the age under which an agent's Warmup applies.
const youngAgent = 30 * time.Second

// readyPoll is how often a starting agent is looked at.
const readyPoll = 50 * time.Millisecond

// fresh reports whether the agent has not taken a prompt yet, as far as
// its screen shows: its warm-up applies only then.
func fresh(p agent.Profile, st observe.State) bool {
	return p.Taken == nil || !p.Taken.MatchString(st.Screen)
}

// clearLine presses the agent's keys that empty one line of its input.
func (d *Deliverer) clearLine(ctx context.Context, req Request) error {
	keys := req.Profile.ClearKeys
	if len(keys) == 0 {
		keys = []string{"C-u"}
	}
	for _, k := range keys {
		if err := d.Mux.SendKey(ctx, req.Pane, k); err != nil {
			return err
		}
	}
	return nil
}

func describeDead(p mux.Pane) string {
	if p.DeadStatus != "" {
		return "exited with status " + p.DeadStatus
	}
	return "its program exited"
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
