package party

import (
	"context"
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/observe"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/wait"
)

// gateWait bounds the wait for a pane's key gate, which a hook holds
// while it runs: one that takes longer is looked at unheld (the look
// still sees the hook run).
const gateWait = 2 * time.Second

// NewDeliverer is the delivery protocol over m for the session whose state
// dir is stateDir, its panes locked in lockDir. It reads the agents'
// submissions from the session's event log, and notes there each text it
// pastes into a pane (as soon as it is in, before Enter, with the role
// roles gives the pane) and wakes the session, so that a recording shows
// it as input at the right moment. With no state dir it does neither.
func NewDeliverer(m mux.Multiplexer, clk clock.Clock, getenv func(string) string, lockDir, stateDir string, roles map[string]string) *deliver.Deliverer {
	d := &deliver.Deliverer{Mux: m, Clock: clk, Locker: state.Locker{Dir: lockDir}}
	// Codex streaming an answer shows no busy line: its rollout tells.
	d.Working = func(kind agent.Kind, p mux.Pane) bool {
		return kind == agent.Codex && wait.CodexWorking(wait.CodexRolloutFiles(p.PID, hook.CodexHome(getenv), clk.Now)())
	}
	// An agent that runs its submit hook took the last Enter.
	d.Announcing = func(p mux.Pane) bool { return wait.HookRunning(p.PID) }
	if stateDir == "" {
		return d
	}
	events := filepath.Join(stateDir, state.EventLog)
	d.Events = observe.Events{Path: events}
	d.Unheard = func(pane string, since time.Time) bool {
		_, ok := hook.LastUnheard(getenv, stateDir, pane, since)
		return ok
	}
	// Claude's hooks hold its pane's key gate while they run: a key is
	// pressed under it (state.HoldGate).
	d.Gate = func(ctx context.Context, p mux.Pane) (time.Time, func()) {
		ended, release, err := state.HoldGate(ctx, clk, state.GatePath(stateDir, p.ID), gateWait)
		if err != nil {
			return time.Time{}, func() {}
		}
		return ended, func() { release(false) }
	}
	d.Pasted = func(pane, text string) {
		_ = state.AppendEvent(events, map[string]any{"time": clk.Now().UTC(), "kind": "input", "pane": pane, "role": roles[pane], "text": text})
		state.WakeSession(getenv, stateDir)
	}
	return d
}
