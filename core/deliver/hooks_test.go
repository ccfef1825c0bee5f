package deliver_test

// The first Enter and its confirmation beside the agent's hooks and queue
// (a turn ending, a submission announced, a hook running), in virtual
// time as in deliver_test.go.

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/observe"
	"github.com/partyhq/party/sim"
)

// Claude announces the prompt it took (UserPromptSubmit) and an Esc before
// the first token puts it back into the box: the text in the box again is
// not a lost Enter, and pressing again would submit what the user stopped.
func TestPromptPutBackIsNotSubmittedAgain(t *testing.T) {
	clock := sim.NewClock()
	m := sim.NewMux(clock)
	events := filepath.Join(t.TempDir(), "events.jsonl")
	a := sim.NewAgent("claude")
	p := m.Add("s", "claude", a)
	p.Info.Hooks = "claude"
	a.Announce(events, p.Info.ID).PutBackAfter(time.Millisecond)
	d := &deliver.Deliverer{Mux: m, Clock: clock, Locker: &sim.Locker{}, Events: observe.Events{Path: events}}
	res, err := d.Send(context.Background(), deliver.Request{Pane: p.Info.ID, Profile: agent.Lookup(agent.Claude), Text: "slow job"})
	require.NoError(t, err)
	assert.Equal(t, deliver.Submitted, res.Outcome)
	assert.Equal(t, "event", res.Via)
	assert.Equal(t, 1, res.Enters, "presses: %s", m.History(p.Info.ID))
	assert.Len(t, a.Submissions, 1)
	assert.Equal(t, "slow job", a.Input(), "the prompt stays where the agent put it back")
}

// The real Claude announces a prompt (UserPromptSubmit) before it clears
// its box: a send returns once the box is clear, so that a talk reading
// the turn next does not take the text still there for a prompt put back.
func TestAnnouncedPromptIsTakenOnceTheBoxClears(t *testing.T) {
	clock := sim.NewClock()
	m := sim.NewMux(clock)
	events := filepath.Join(t.TempDir(), "events.jsonl")
	a := sim.NewAgent("claude")
	p := m.Add("s", "claude", a)
	p.Info.Hooks = "claude"
	a.Announce(events, p.Info.ID).ClearAfter(100 * time.Millisecond)
	d := &deliver.Deliverer{Mux: m, Clock: clock, Locker: &sim.Locker{}, Events: observe.Events{Path: events}}
	res, err := d.Send(context.Background(), deliver.Request{Pane: p.Info.ID, Profile: agent.Lookup(agent.Claude), Text: "six times seven?"})
	require.NoError(t, err)
	assert.Equal(t, deliver.Submitted, res.Outcome)
	assert.Equal(t, 1, res.Enters, "presses: %s", m.History(p.Info.ID))
	assert.Empty(t, a.Input(), "the box had cleared when Send returned")
	assert.Len(t, a.Submissions, 1)
}

// The real Claude runs its UserPromptSubmit hook after the Enter that took
// a prompt and before it clears its box and reads another key; on a
// loaded machine the hook takes seconds. Text an operator types then is
// not on the screen, which still shows party's text in the box: an Enter
// pressed again then (the first not seen taken in its confirm window) is
// read after their text and submits it. While the agent runs its hook
// (Announcing) no Enter is pressed: the operator's text stays in the box,
// and the agent took party's once.
func TestNoEnterBehindTextTypedWhileTheSubmitHookRuns(t *testing.T) {
	clock := sim.NewClock()
	m := sim.NewMux(clock)
	events := filepath.Join(t.TempDir(), "events.jsonl")
	a := sim.NewAgent("claude")
	p := m.Add("s", "claude", a)
	p.Info.Hooks = "claude"
	a.Announce(events, p.Info.ID).HookFor(3*time.Second).TypeAfter(500*time.Millisecond, "operator draft")
	d := &deliver.Deliverer{Mux: m, Clock: clock, Locker: &sim.Locker{}, Events: observe.Events{Path: events},
		Announcing: func(mux.Pane) bool { return a.Hooking() }}
	res, err := d.Send(context.Background(), deliver.Request{Pane: p.Info.ID, Profile: agent.Lookup(agent.Claude), Text: "[BRIDGE_TRIGGER id=acc-24 thread=t]\njob 24\n[/BRIDGE_TRIGGER]"})
	require.NoError(t, err)
	assert.Equal(t, deliver.Submitted, res.Outcome)
	assert.Equal(t, 1, res.Enters, "presses: %s", m.History(p.Info.ID))
	require.Len(t, a.Submissions, 1, "submissions: %+v", a.Submissions)
	assert.Contains(t, a.Submissions[0].Text, "acc-24")
	assert.Equal(t, "operator draft", a.Input(), "the operator's text stays in the box, not submitted")
}

// typeBeforeEnter is a pane where someone types text just before the
// first Enter reaches the agent: after the sender's last look.
type typeBeforeEnter struct {
	*sim.Mux
	agent *sim.Agent
	text  string
}

func (m *typeBeforeEnter) SendKey(ctx context.Context, id, key string) error {
	if key == "Enter" && m.text != "" {
		m.agent.Type(m.text)
		m.text = ""
	}
	return m.Mux.SendKey(ctx, id, key)
}

// Keys typed into the box between the sender's last look and its Enter go
// with the text (the agent reads them before the Enter): the delivery
// finds them after its text in the prompt the agent announced, says so,
// and types them back into the emptied box, where the operator left them.
func TestKeysTypedBeforeEnterAreGivenBack(t *testing.T) {
	clock := sim.NewClock()
	m := sim.NewMux(clock)
	events := filepath.Join(t.TempDir(), "events.jsonl")
	a := sim.NewAgent("claude")
	p := m.Add("s", "claude", a)
	p.Info.Hooks = "claude"
	a.Announce(events, p.Info.ID)
	d := &deliver.Deliverer{Mux: &typeBeforeEnter{Mux: m, agent: a, text: "operator"}, Clock: clock, Locker: &sim.Locker{},
		Events: observe.Events{Path: events}, Announcing: func(mux.Pane) bool { return a.Hooking() }}
	text := "[BRIDGE_TRIGGER id=acc-9 thread=t]\njob 9\n[/BRIDGE_TRIGGER]"
	res, err := d.Send(context.Background(), deliver.Request{Pane: p.Info.ID, Profile: agent.Lookup(agent.Claude), Text: text})
	require.NoError(t, err)
	assert.Equal(t, deliver.Submitted, res.Outcome)
	require.Len(t, a.Submissions, 1, "submissions: %+v", a.Submissions)
	assert.Equal(t, text+"operator", a.Submissions[0].Text)
	assert.Equal(t, "operator", res.TypedAfter)
	assert.True(t, res.GivenBack)
	assert.Equal(t, "operator", a.Input(), "the operator's keys are back in the box")
}

// Keys typed just before an Enter the agent takes for a new line (Gemini
// does for an Enter in a burst of typed keys) leave the box holding the
// text and their keys: the text is taken out, their keys typed back into
// the emptied box, and nothing is submitted (ErrInputBusy: the sender
// tries again when the box is clear).
func TestKeysTypedBeforeALostEnterAreLeftAlone(t *testing.T) {
	clock := sim.NewClock()
	m := sim.NewMux(clock)
	a := sim.NewAgent("claude").LoseEnters(1)
	p := m.Add("s", "claude", a)
	d := &deliver.Deliverer{Mux: &typeBeforeEnter{Mux: m, agent: a, text: "operator"}, Clock: clock, Locker: &sim.Locker{}}
	res, err := d.Send(context.Background(), deliver.Request{Pane: p.Info.ID, Profile: agent.Lookup(agent.Claude), Text: "job 3"})
	require.ErrorIs(t, err, deliver.ErrInputBusy, "%+v %+v %s", res, a.Submissions, m.History(p.Info.ID))
	assert.Contains(t, err.Error(), `"operator"`)
	assert.Empty(t, a.Submissions, "nothing submitted")
	assert.Equal(t, "operator", a.Input(), "their keys are back, ours gone")
	assert.Equal(t, "operator", res.TypedAfter)
	assert.True(t, res.GivenBack)
}

// enterClock records when the first Enter was pressed.
type enterClock struct {
	*sim.Mux
	clock *sim.Clock
	at    time.Time
	onKey func() // told of each key, when set
}

func (m *enterClock) SendKey(ctx context.Context, id, key string) error {
	if m.onKey != nil {
		m.onKey()
	}
	if key == "Enter" && m.at.IsZero() {
		m.at = m.clock.Now()
	}
	return m.Mux.SendKey(ctx, id, key)
}

// hooked is a claude with hooks in a sim pane, sent to by a Deliverer
// over mux (the sim's, or one made from it) whose Announcing says hook.
type hooked struct {
	clock *sim.Clock
	agent *sim.Agent
	keys  *enterClock
	d     *deliver.Deliverer
	send  func() (deliver.Result, error)
}

func newHooked(t *testing.T, hook func(now time.Time) bool, wrap func(*enterClock) mux.Multiplexer) hooked {
	clock := sim.NewClock()
	m := sim.NewMux(clock)
	a := sim.NewAgent("claude")
	p := m.Add("s", "claude", a)
	p.Info.Hooks = "claude"
	keys := &enterClock{Mux: m, clock: clock}
	var mx mux.Multiplexer = keys
	if wrap != nil {
		mx = wrap(keys)
	}
	d := &deliver.Deliverer{Mux: mx, Clock: clock, Locker: &sim.Locker{},
		Events:     observe.Events{Path: filepath.Join(t.TempDir(), "events.jsonl")},
		Announcing: func(mux.Pane) bool { return hook(clock.Now()) }}
	return hooked{clock: clock, agent: a, keys: keys, d: d, send: func() (deliver.Result, error) {
		return d.Send(context.Background(), deliver.Request{Pane: p.Info.ID, Profile: agent.Lookup(agent.Claude), Text: "next"})
	}}
}

func noHook(time.Time) bool { return false }

// As a turn ends the real Claude runs its Stop hook, then one
// UserPromptSubmit hook per queued message it takes; an Enter read then
// ran a text and kept it queued too. The first Enter waits until no hook
// of the agent has run for a while.
func TestFirstEnterWaitsForTheAgentsHooks(t *testing.T) {
	var hookUntil time.Time
	h := newHooked(t, func(now time.Time) bool { return now.Before(hookUntil) }, nil)
	hookUntil = h.clock.Now().Add(time.Second)
	res, err := h.send()
	require.NoError(t, err)
	assert.Equal(t, deliver.Submitted, res.Outcome)
	assert.Equal(t, 1, res.Enters)
	require.False(t, h.keys.at.IsZero())
	assert.GreaterOrEqual(t, h.keys.at.Sub(hookUntil), 120*time.Millisecond, "Enter %v after the hook ended", h.keys.at.Sub(hookUntil))
	require.Len(t, h.agent.Submissions, 1)
}

// An idle agent that runs no hook has no turn ending: its Enter is not
// held back.
func TestIdleAgentsEnterIsNotHeldBack(t *testing.T) {
	h := newHooked(t, noHook, nil)
	start := h.clock.Now()
	_, err := h.send()
	require.NoError(t, err)
	assert.Less(t, h.keys.at.Sub(start), agent.Lookup(agent.Claude).Settle+100*time.Millisecond)
}

// queueMux shows a queued message above the box until a time: an agent
// whose turn ended and that has yet to take its queue.
type queueMux struct {
	*enterClock
	until time.Time
}

func (m *queueMux) Inspect(ctx context.Context, id string) (mux.Pane, string, error) {
	p, screen, err := m.Mux.Inspect(ctx, id)
	if m.clock.Now().Before(m.until) {
		screen = "  ❯ an earlier queued message\n" + screen
	}
	return p, screen, err
}

// An idle Claude showing a queued message is about to take its queue: the
// first Enter waits until it did.
func TestFirstEnterWaitsForTheQueueToBeTaken(t *testing.T) {
	var q *queueMux
	h := newHooked(t, noHook, func(keys *enterClock) mux.Multiplexer {
		q = &queueMux{enterClock: keys, until: keys.clock.Now().Add(time.Second)}
		return q
	})
	_, err := h.send()
	require.NoError(t, err)
	require.False(t, h.keys.at.IsZero())
	assert.False(t, h.keys.at.Before(q.until), "Enter %v before the queue was taken", q.until.Sub(h.keys.at))
	require.Len(t, h.agent.Submissions, 1)
}

// A hook too short for any look to see it run (a loaded machine starts
// it and it ends between two looks) ended just before the look under the
// pane's key gate: the gate's stamp says so, and the Enter waits until
// hookQuiet has passed since; it is pressed with the gate held, which is
// let go once the agent read it.
func TestEnterGoesUnderTheKeyGate(t *testing.T) {
	h := newHooked(t, noHook, nil)
	var (
		ended      time.Time
		held       bool
		heldAtKey  bool
		holds      int
		hookEnded  = h.clock.Now().Add(agent.Lookup(agent.Claude).Settle - 20*time.Millisecond)
		releasedAt time.Time
	)
	h.d.Gate = func(context.Context, mux.Pane) (time.Time, func()) {
		require.False(t, held, "the gate is held once at a time")
		held, holds = true, holds+1
		if !h.clock.Now().Before(hookEnded) {
			ended = hookEnded
		}
		return ended, func() { held, releasedAt = false, h.clock.Now() }
	}
	h.keys.onKey = func() { heldAtKey = held }
	res, err := h.send()
	require.NoError(t, err)
	assert.Equal(t, deliver.Submitted, res.Outcome)
	assert.Equal(t, 1, res.Enters)
	assert.True(t, heldAtKey, "Enter pressed under the gate")
	assert.False(t, held, "let go")
	assert.GreaterOrEqual(t, h.keys.at.Sub(hookEnded), 120*time.Millisecond, "Enter %v after the hook ended", h.keys.at.Sub(hookEnded))
	assert.Greater(t, holds, 1, "let go while waiting, taken again")
	assert.False(t, releasedAt.Before(h.keys.at), "held until the key was read")
	require.Len(t, h.agent.Submissions, 1)
}
