package sim_test

import (
	"context"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/wait"
	"github.com/partyhq/party/sim"
)

var askedNonce = regexp.MustCompile(`PARTY_DONE_ immediately followed by ([a-z0-9]+)`)

// markerReply answers like an agent that follows the marker instruction.
func markerReply(prompt string) []string {
	if m := askedNonce.FindStringSubmatch(prompt); m != nil {
		return []string{"the answer", "PARTY_DONE_" + m[1]}
	}
	return []string{"no marker asked"}
}

// deliverAndWait delivers text with a marker instruction and waits for the answer,
// all in virtual time.
func deliverAndWait(t *testing.T, f *sim.Rig, timeout time.Duration) (wait.Result, error) {
	t.Helper()
	nonce := wait.NewNonce()
	text := "question" + wait.Instruction(nonce)
	var mark *wait.Mark
	_, err := f.Deliverer.Send(context.Background(), deliver.Request{Pane: f.ID, Profile: agent.Lookup(agent.Kind(f.Agent.Persona)), Text: text,
		Pasting: func(ctx context.Context) { mark, _ = wait.NewMark(ctx, f.Mux, f.ID) }})
	require.NoError(t, err)
	w := &wait.Waiter{Mux: f.Mux, Clock: f.Clock, Poll: time.Second}
	return w.Wait(context.Background(), wait.Turn{Pane: f.ID, Prompt: text, Nonce: nonce, Mark: mark, History: 200}, timeout)
}

func TestWaitMarker(t *testing.T) {
	f := sim.NewRig("generic", func(a *sim.Agent) { a.Think = 90 * time.Second; a.Reply = markerReply })
	start := f.Clock.Now()
	res, err := deliverAndWait(t, f, 5*time.Minute)
	require.NoError(t, err)
	assert.Equal(t, "marker", res.Via)
	assert.Equal(t, "the answer", res.Answer)
	assert.GreaterOrEqual(t, f.Clock.Now().Sub(start), 90*time.Second, "waited the agent's virtual think time")
}

func TestWaitTimeoutCarriesTheLastScreen(t *testing.T) {
	f := sim.NewRig("claude", func(a *sim.Agent) { a.Think = time.Hour })
	wall := time.Now()
	_, err := deliverAndWait(t, f, time.Minute)
	var te *wait.TimeoutError
	require.ErrorAs(t, err, &te)
	assert.ErrorIs(t, err, wait.ErrTimeout)
	assert.Contains(t, te.Screen, "Thinking…", "the evidence of what the agent was doing")
	assert.Less(t, time.Since(wall), 5*time.Second, "a minute of virtual time, not of real time")
}

func TestWaitEndsAtOnceWhenThePaneDies(t *testing.T) {
	f := sim.NewRig("claude", func(a *sim.Agent) { a.Think = time.Hour })
	f.Agent.DieAfter(10*time.Second, "3")
	start := f.Clock.Now()
	_, err := deliverAndWait(t, f, 10*time.Minute)
	require.ErrorIs(t, err, deliver.ErrPaneDead)
	assert.Contains(t, err.Error(), "status 3")
	assert.Less(t, f.Clock.Now().Sub(start), 15*time.Second, "ended at the death, not at the timeout")
}

func TestWaitOnHookEvents(t *testing.T) {
	for _, tt := range []struct {
		name   string
		events []hook.Event
		answer string
		err    error
	}{
		{"stop of our turn", []hook.Event{{Kind: hook.TurnComplete, Answer: "old turn"}, {Kind: hook.PromptSubmit, Prompts: []string{"q"}}, {Kind: hook.TurnComplete, Answer: "ours"}}, "ours", nil},
		{"failure", []hook.Event{{Kind: hook.PromptSubmit, Prompts: []string{"q"}}, {Kind: hook.TurnFailed, Type: "overloaded"}}, "", wait.ErrTurnFailed},
		{"permission", []hook.Event{{Kind: hook.PromptSubmit, Prompts: []string{"q"}}, {Kind: hook.Notification, Type: "permission_prompt"}}, "", wait.ErrPermission},
		{"another pane's stop is not ours", []hook.Event{{Kind: hook.PromptSubmit, Prompts: []string{"q"}, Pane: "%9"}, {Kind: hook.TurnComplete, Answer: "theirs", Pane: "%9"}}, "", wait.ErrTimeout},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := sim.NewRig("claude", func(a *sim.Agent) { a.Think = time.Hour })
			events := filepath.Join(t.TempDir(), state.EventLog)
			for _, ev := range tt.events {
				if ev.Pane == "" {
					ev.Pane = f.ID
				}
				require.NoError(t, state.AppendEvent(events, ev))
			}
			w := &wait.Waiter{Mux: f.Mux, Clock: f.Clock}
			res, err := w.Wait(context.Background(), wait.Turn{Pane: f.ID, Prompt: "q", Hooks: true, Events: events}, time.Minute)
			if tt.err != nil {
				assert.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.answer, res.Answer)
			assert.Equal(t, "hook", res.Via)
		})
	}
}
