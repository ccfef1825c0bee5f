package sim_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/talk"
	"github.com/partyhq/party/core/wait"
	"github.com/partyhq/party/sim"
)

// talkFixture is one session of simulated panes and what talk.Run needs
// to talk to them, all in virtual time.
type talkFixture struct {
	clock *sim.Clock
	mux   *sim.Mux
	deps  talk.Deps
}

func newTalkFixture(t *testing.T) *talkFixture {
	t.Helper()
	clock := sim.NewClock()
	m := sim.NewMux(clock)
	dir := t.TempDir()
	cfg := config.Defaults()
	cfg.PollInterval = time.Second
	return &talkFixture{clock: clock, mux: m, deps: talk.Deps{
		Mux: m, Clock: clock, Getenv: func(string) string { return "" }, Config: cfg,
		StateDir: filepath.Join(dir, "state"), LockDir: filepath.Join(dir, "locks"),
		Deliverer: &deliver.Deliverer{Mux: m, Clock: clock, Locker: &sim.Locker{}},
	}}
}

// add starts agent in a pane with role; hooks says how it reports turns
// (empty: it does not, and talk asks for a marker).
func (f *talkFixture) add(role string, a *sim.Agent, hooks string) mux.Pane {
	p := f.mux.Add("s", role, a)
	p.Info.Hooks = hooks
	return p.Info
}

func (f *talkFixture) run(t *testing.T, opts talk.Options) []talk.Result {
	t.Helper()
	opts.Wait = true
	res, err := talk.Run(context.Background(), f.deps, opts)
	require.NoError(t, err)
	require.Len(t, res, len(opts.Targets))
	return res
}

func TestTalkCompletesOnAHookEvent(t *testing.T) {
	f := newTalkFixture(t)
	events := filepath.Join(f.deps.StateDir, state.EventLog)
	var pane string
	a := sim.NewAgent("claude")
	a.Think = 30 * time.Second
	// The agent's hooks: its turn's prompt, then its Stop with the answer.
	a.Reply = func(prompt string) []string {
		_ = state.AppendEvent(events, hook.Event{Time: f.clock.Now(), Pane: pane, Agent: "claude", Kind: hook.PromptSubmit, Prompts: []string{prompt}})
		_ = state.AppendEvent(events, hook.Event{Time: f.clock.Now(), Pane: pane, Agent: "claude", Kind: hook.TurnComplete, Answer: "the hook's answer"})
		return []string{"what the screen shows"}
	}
	p := f.add("reviewer", a, "claude")
	pane = p.ID
	start := f.clock.Now()

	res := f.run(t, talk.Options{Targets: []mux.Pane{p}, Text: "question", Timeout: 5 * time.Minute})

	require.NoError(t, res[0].Err)
	assert.Equal(t, deliver.Submitted, res[0].Outcome)
	require.NotNil(t, res[0].Answer)
	assert.Equal(t, "the hook's answer", *res[0].Answer)
	assert.Equal(t, "hook", res[0].Via)
	assert.GreaterOrEqual(t, f.clock.Now().Sub(start), 30*time.Second, "waited the agent's virtual think time")
	require.Len(t, a.Submissions, 1)
	assert.NotContains(t, a.Submissions[0].Text, "PARTY_DONE_", "a hook-wired agent is not asked for a marker")
}

func TestTalkQueueTimeCountsAgainstTheTimeout(t *testing.T) {
	f := newTalkFixture(t)
	a := sim.NewAgent("claude")
	a.Think, a.Reply = 40*time.Second, markerReply
	p := f.add("worker", a, "")

	// Two talks to one agent: the second waits for the first (40s) and
	// then needs 40s of its own, past its 60s counted from when it queued.
	res := f.run(t, talk.Options{Targets: []mux.Pane{p, p}, Text: "question", Timeout: time.Minute})

	var answered, timedOut []talk.Result
	for _, r := range res {
		if r.Err == nil {
			answered = append(answered, r)
		} else {
			timedOut = append(timedOut, r)
		}
	}
	require.Len(t, answered, 1, "the first in the queue is answered")
	require.Len(t, timedOut, 1, "the second runs out of time")
	assert.Equal(t, "the answer", *answered[0].Answer)
	assert.ErrorIs(t, timedOut[0].Err, wait.ErrTimeout)
	assert.Less(t, timedOut[0].Elapsed, 70*time.Second, "timed out a minute after it queued, not a minute after its turn began")
	assert.GreaterOrEqual(t, timedOut[0].Elapsed, time.Minute)
	require.Len(t, a.Submissions, 2, "the second was sent once the first was answered")
	assert.False(t, a.Submissions[1].At.Before(a.Submissions[0].At.Add(40*time.Second)), "never sent while the first was waiting")
}

func TestTalkQueuedPastTheTimeoutNeverSends(t *testing.T) {
	f := newTalkFixture(t)
	a := sim.NewAgent("claude")
	a.Think, a.Reply = 90*time.Second, markerReply
	p := f.add("worker", a, "")

	res := f.run(t, talk.Options{Targets: []mux.Pane{p, p}, Text: "question", Timeout: time.Minute})

	for _, r := range res {
		assert.ErrorIs(t, r.Err, wait.ErrTimeout)
	}
	assert.Len(t, a.Submissions, 1, "the queued talk gave up in the queue")
}

func TestTalkToAPaneThatDies(t *testing.T) {
	f := newTalkFixture(t)
	a := sim.NewAgent("codex")
	a.Think = time.Hour
	p := f.add("coder", a, "")
	a.DieAfter(10*time.Second, "3") // once on the mux's clock

	res := f.run(t, talk.Options{Targets: []mux.Pane{p}, Text: "question", Timeout: 10 * time.Minute})

	require.ErrorIs(t, res[0].Err, deliver.ErrPaneDead)
	assert.Contains(t, res[0].Err.Error(), "status 3")
	assert.Equal(t, deliver.Submitted, res[0].Outcome, "it was sent, then died")
	assert.Less(t, res[0].Elapsed, 15*time.Second, "ended at the death, not at the timeout")
}

func TestTalkNoQueueRefusesABusyAgent(t *testing.T) {
	f := newTalkFixture(t)
	a := sim.NewAgent("claude")
	p := f.add("worker", a, "")
	// Another talk holds the agent's request lock.
	unlock, err := state.Locker{Dir: f.deps.LockDir}.Lock(context.Background(), "request-"+p.ID)
	require.NoError(t, err)
	defer unlock()

	res := f.run(t, talk.Options{Targets: []mux.Pane{p}, Text: "question", Timeout: time.Minute, NoQueue: true})

	assert.ErrorIs(t, res[0].Err, talk.ErrBusy)
	assert.Empty(t, a.Submissions, "nothing sent")
}
