package deliver_test

// The delivery protocol, step by step, against sim's fake mux and
// simulated agents in virtual time; the same protocol is proven on real
// tmux by the scenarios.

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/sim"
)

// fixture is one pane with one simulated agent (sim.Rig).
type fixture struct{ *sim.Rig }

func newFixture(persona string, setup func(*sim.Agent)) fixture {
	return fixture{sim.NewRig(persona, setup)}
}

func (f fixture) send(text string, force bool) (deliver.Result, error) {
	kind := agent.Kind(f.Agent.Persona)
	return f.Deliverer.Send(context.Background(), deliver.Request{Pane: f.ID, Profile: agent.Lookup(kind), Text: text, Force: force})
}

func TestDelivery(t *testing.T) {
	tests := []struct {
		name      string
		persona   string
		setup     func(*sim.Agent)
		text      string
		force     bool
		outcome   deliver.Outcome
		err       error
		enters    int
		submitted []sim.Submission // Text and Mode compared
		pasted    bool
	}{
		{name: "claude submitted once", persona: "claude", text: "hello $(x) end;",
			outcome: deliver.Submitted, enters: 1, submitted: []sim.Submission{{Text: "hello $(x) end;", Mode: "submit"}}, pasted: true},
		{name: "codex submitted once", persona: "codex", text: "-n multi\nline",
			outcome: deliver.Submitted, enters: 1, submitted: []sim.Submission{{Text: "-n multi\nline", Mode: "submit"}}, pasted: true},
		{name: "generic confirmed by the screen changing", persona: "generic", text: "hi",
			outcome: deliver.Submitted, enters: 1, submitted: []sim.Submission{{Text: "hi", Mode: "submit"}}, pasted: true},
		{name: "a lost Enter is retried", persona: "claude", setup: func(a *sim.Agent) { a.LoseEnters(1) }, text: "x",
			outcome: deliver.Submitted, enters: 2, submitted: []sim.Submission{{Text: "x", Mode: "submit"}}, pasted: true},
		{name: "all Enters lost: unconfirmed after a bounded number", persona: "claude", setup: func(a *sim.Agent) { a.LoseEnters(100) }, text: "x",
			outcome: deliver.Unconfirmed, err: deliver.ErrUnconfirmed, enters: 4, pasted: true},
		{name: "the settle time outlasts claude's Enter guard", persona: "claude", setup: func(a *sim.Agent) { a.EnterGuard(100 * time.Millisecond) }, text: "x",
			outcome: deliver.Submitted, enters: 1, submitted: []sim.Submission{{Text: "x", Mode: "submit"}}, pasted: true},
		{name: "slow rendering is waited for", persona: "claude", setup: func(a *sim.Agent) { a.RenderDelay(300 * time.Millisecond) }, text: "x",
			outcome: deliver.Submitted, enters: 1, submitted: []sim.Submission{{Text: "x", Mode: "submit"}}, pasted: true},
		{name: "dead pane refused, nothing pasted", persona: "claude", setup: func(a *sim.Agent) { a.Die("1") }, text: "x",
			outcome: deliver.Failed, err: deliver.ErrPaneDead},
		{name: "pane not running its agent refused", persona: "claude", setup: func(a *sim.Agent) { a.RunCommand("bash") }, text: "x",
			outcome: deliver.Failed, err: deliver.ErrNotRunning},
		{name: "dialog on screen refused, no key pressed", persona: "claude", setup: func(a *sim.Agent) { a.ShowDialog() }, text: "x",
			outcome: deliver.Failed, err: deliver.ErrDialog},
		{name: "a turn that asks permission at once took the text", persona: "codex", setup: func(a *sim.Agent) { a.AskOnSubmit() }, text: "clean up",
			outcome: deliver.Submitted, enters: 1, submitted: []sim.Submission{{Text: "clean up", Mode: "submit"}}, pasted: true},
		{name: "a turn that asks permission at once took the text (claude)", persona: "claude", setup: func(a *sim.Agent) { a.AskOnSubmit() }, text: "clean up",
			outcome: deliver.Submitted, enters: 1, submitted: []sim.Submission{{Text: "clean up", Mode: "submit"}}, pasted: true},
		{name: "busy claude queues on Enter", persona: "claude", setup: func(a *sim.Agent) { a.BusyFor(time.Minute) }, text: "later",
			outcome: deliver.Queued, enters: 1, submitted: []sim.Submission{{Text: "later", Mode: "queued"}}, pasted: true},
		{name: "busy codex queues on Tab, never steers", persona: "codex", setup: func(a *sim.Agent) { a.BusyFor(time.Minute) }, text: "later",
			outcome: deliver.Queued, enters: 1, submitted: []sim.Submission{{Text: "later", Mode: "queued"}}, pasted: true},
		{name: "codex busy at the look but idle by the key: Enter, not Tab", persona: "codex", setup: func(a *sim.Agent) { a.BusyFor(100 * time.Millisecond) }, text: "now",
			outcome: deliver.Submitted, enters: 1, submitted: []sim.Submission{{Text: "now", Mode: "submit"}}, pasted: true},
		{name: "copy mode is left first", persona: "claude", setup: func(a *sim.Agent) { a.CopyMode() }, text: "x",
			outcome: deliver.Submitted, enters: 1, submitted: []sim.Submission{{Text: "x", Mode: "submit"}}, pasted: true},
		{name: "control bytes are removed, CRLF folded", persona: "claude", text: "a\r\nb\x1b[201~c\x07",
			outcome: deliver.Submitted, enters: 1, submitted: []sim.Submission{{Text: "a\nb[201~c", Mode: "submit"}}, pasted: true},
		{name: "a pane dying after Enter is an error", persona: "claude", setup: func(a *sim.Agent) { a.DieOnEnter("2") }, text: "x",
			outcome: deliver.Failed, err: deliver.ErrPaneDead, enters: 1, pasted: true},
		{name: "empty text is refused", persona: "claude", text: " \n ",
			outcome: deliver.Failed, err: deliver.ErrEmpty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(tt.persona, tt.setup)
			start := f.Clock.Now()
			res, err := f.send(tt.text, tt.force)
			if tt.err != nil {
				require.Error(t, err)
				assert.ErrorIs(t, err, tt.err)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.outcome, res.Outcome)
			assert.Equal(t, tt.enters, res.Enters, "presses: %s", f.Mux.History(f.ID))
			var got []sim.Submission
			for _, s := range f.Agent.Submissions {
				got = append(got, sim.Submission{Text: s.Text, Mode: s.Mode})
			}
			assert.Equal(t, tt.submitted, got)
			assert.Equal(t, tt.pasted, f.Mux.Count("paste") > 0, "pasted")
			if tt.err == deliver.ErrDialog {
				assert.Zero(t, f.Mux.Count("key"), "no key pressed into a dialog")
				assert.Zero(t, f.Agent.DialogKeys)
			}
			if tt.name == "busy codex queues on Tab, never steers" {
				for _, c := range f.Mux.Calls() {
					assert.NotEqual(t, "Enter", c.Arg, "Enter would steer the running turn")
				}
			}
			if tt.outcome == deliver.Submitted {
				assert.GreaterOrEqual(t, f.Clock.Now().Sub(start), agent.Lookup(agent.Kind(tt.persona)).Settle, "virtual time passed")
			}
		})
	}
}

func TestDialogWithForceIsTypedInto(t *testing.T) {
	f := newFixture("claude", func(a *sim.Agent) { a.ShowDialog() })
	res, err := f.send("x", true)
	// The dialog swallows the text: never confirmed, and Enter is never
	// pressed again into it.
	assert.ErrorIs(t, err, deliver.ErrUnconfirmed)
	assert.Equal(t, deliver.Unconfirmed, res.Outcome)
	assert.Equal(t, 1, f.Agent.DialogKeys, "one Enter, no retries into the dialog")
}

func TestConcurrentSendsAreSerialized(t *testing.T) {
	f := newFixture("codex", nil)
	f.Agent.Think = 0
	done := make(chan error, 5)
	for i := 0; i < 5; i++ {
		go func() {
			_, err := f.send("message", false)
			done <- err
		}()
	}
	for i := 0; i < 5; i++ {
		require.NoError(t, <-done)
	}
	require.Len(t, f.Agent.Submissions, 5)
	for _, s := range f.Agent.Submissions {
		assert.Equal(t, "message", s.Text, "never two texts in one input")
	}
}

func TestVirtualTimeOnly(t *testing.T) {
	f := newFixture("claude", func(a *sim.Agent) { a.LoseEnters(100) })
	wall := time.Now()
	_, err := f.send("x", false)
	require.ErrorIs(t, err, deliver.ErrUnconfirmed)
	assert.Greater(t, f.Clock.Now().Sub(sim.NewClock().Now()), 5*time.Second, "retries spent virtual seconds")
	assert.Less(t, time.Since(wall), 2*time.Second, "and no real ones")
}

func TestForeignTextIsNeverMerged(t *testing.T) {
	for _, persona := range []string{"claude", "codex"} {
		t.Run(persona, func(t *testing.T) {
			f := newFixture(persona, func(a *sim.Agent) { a.Type("half-typed draft") })
			res, err := f.send("x", false)
			require.ErrorIs(t, err, deliver.ErrInputBusy)
			assert.Contains(t, err.Error(), "--clear")
			assert.Equal(t, deliver.Failed, res.Outcome)
			assert.Zero(t, f.Mux.Count("paste"), "nothing pasted next to the draft")
			assert.Zero(t, f.Mux.Count("key"), "no key pressed")
			assert.Equal(t, "half-typed draft", f.Agent.Input(), "the draft is left alone")
		})
	}
}

func TestClearRemovesForeignTextFirst(t *testing.T) {
	f := newFixture("claude", func(a *sim.Agent) { a.Type("FIRST-x interrupted") })
	res, err := f.Deliverer.Send(context.Background(), deliver.Request{Pane: f.ID, Profile: agent.Lookup(agent.Claude), Text: "SECOND-x", Clear: true})
	require.NoError(t, err)
	assert.Equal(t, deliver.Submitted, res.Outcome)
	require.Len(t, f.Agent.Submissions, 1)
	assert.Equal(t, "SECOND-x", f.Agent.Submissions[0].Text)
}

func TestStartingAgentIsWaitedFor(t *testing.T) {
	f := newFixture("claude", func(a *sim.Agent) { a.StartAfter(8 * time.Second) })
	start := f.Clock.Now()
	res, err := f.send("early bird", false)
	require.NoError(t, err)
	assert.Equal(t, deliver.Submitted, res.Outcome)
	assert.GreaterOrEqual(t, f.Clock.Now().Sub(start), 8*time.Second)
	require.Len(t, f.Agent.Submissions, 1)
	assert.Equal(t, "early bird", f.Agent.Submissions[0].Text)
}

func TestAgentNeverReadyIsRefusedUnpasted(t *testing.T) {
	f := newFixture("codex", func(a *sim.Agent) { a.StartAfter(time.Hour) })
	res, err := f.Deliverer.Send(context.Background(), deliver.Request{Pane: f.ID, Profile: agent.Lookup(agent.Codex), Text: "x", Ready: 5 * time.Second})
	require.ErrorIs(t, err, deliver.ErrNotReady)
	assert.Equal(t, deliver.Failed, res.Outcome)
	assert.Zero(t, f.Mux.Count("paste"))
}

func TestBusyClaudeQueuesWithOneEnter(t *testing.T) {
	f := newFixture("claude", func(a *sim.Agent) { a.BusyFor(time.Minute) })
	res, err := f.send("next", false)
	require.NoError(t, err)
	assert.Equal(t, deliver.Queued, res.Outcome)
	assert.Equal(t, 1, res.Enters, "presses: %s", f.Mux.History(f.ID))
}

func TestLostEnterIsPressedAgainOnlyIntoOurText(t *testing.T) {
	f := newFixture("claude", func(a *sim.Agent) { a.LoseEnters(1) })
	res, err := f.send("hello", false)
	require.NoError(t, err)
	assert.Equal(t, 2, res.Enters)
	require.Len(t, f.Agent.Submissions, 1)
}

func TestInterruptedSendTakesBackItsPaste(t *testing.T) {
	f := newFixture("claude", func(a *sim.Agent) { a.LoseEnters(100) })
	ctx, cancel := context.WithCancel(context.Background())
	f.Deliverer.Pasted = func(string, string) { cancel() }
	_, err := f.Deliverer.Send(ctx, deliver.Request{Pane: f.ID, Profile: agent.Lookup(agent.Claude), Text: "FIRST-x"})
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, f.Agent.Input(), "the pasted text is taken back")
	assert.Empty(t, f.Agent.Submissions)
	f.Agent.LoseEnters(0)
	f.Deliverer.Pasted = nil
	res, err := f.send("SECOND-x", false)
	require.NoError(t, err)
	assert.Equal(t, deliver.Submitted, res.Outcome)
	assert.Equal(t, "SECOND-x", f.Agent.Submissions[0].Text, "never merged with the interrupted one")
}

func TestInterpretedTextIsMadePlainOrRefused(t *testing.T) {
	f := newFixture("claude", nil)
	_, err := f.send("!touch FILE", false)
	require.ErrorIs(t, err, deliver.ErrInterpreted)
	assert.Contains(t, err.Error(), "--raw")
	assert.Zero(t, f.Mux.Count("paste"))

	res, err := f.Deliverer.Send(context.Background(), deliver.Request{Pane: f.ID, Profile: agent.Lookup(agent.Claude), Text: "/compact", Raw: true})
	require.NoError(t, err, "--raw sends a command on purpose")
	assert.Equal(t, deliver.Submitted, res.Outcome)

	c := newFixture("codex", nil)
	_, err = c.send("!touch FILE", false)
	require.NoError(t, err)
	require.Len(t, c.Agent.Submissions, 1)
	assert.Equal(t, " !touch FILE", c.Agent.Submissions[0].Text, "codex trims the space that keeps ! plain")
}

// What an agent wrote is typed only into claude, codex or gemini: a shell
// would run it, another program may.
func TestAgentsOnlyDelivery(t *testing.T) {
	tests := []struct {
		persona string
		why     string // "": delivered
	}{
		{"claude", ""},
		{"codex", ""},
		{"shell", "shell"},
		{"generic", "program"},
	}
	for _, tt := range tests {
		t.Run(tt.persona, func(t *testing.T) {
			f := newFixture(tt.persona, nil)
			res, err := f.Deliverer.Send(context.Background(), deliver.Request{Pane: f.ID, Profile: agent.Lookup(agent.Kind(tt.persona)),
				Text: "rm -rf ~", AgentsOnly: true})
			if tt.why == "" {
				require.NoError(t, err)
				assert.Equal(t, deliver.Submitted, res.Outcome)
				return
			}
			var refused *deliver.NotAgentError
			require.ErrorAs(t, err, &refused)
			assert.ErrorIs(t, err, deliver.ErrNotAgent)
			assert.Equal(t, tt.why, refused.Why)
			assert.Equal(t, deliver.Failed, res.Outcome)
			assert.Zero(t, f.Mux.Count("paste"), "nothing pasted")
			assert.Zero(t, f.Mux.Count("key"), "no key pressed")
			assert.Empty(t, f.Agent.Submissions)

			_, err = f.Deliverer.Send(context.Background(), deliver.Request{Pane: f.ID, Profile: agent.Lookup(agent.Kind(tt.persona)), Text: "ls"})
			require.NoError(t, err, "what the user sends still goes")
		})
	}
}

// TestWorkingPicksTheQueueKey: an agent whose screen looks idle but that
// works on a turn (Codex streaming an answer shows no busy line), as
// Working says, gets its queue key, never an Enter that would steer the
// turn. A queue key it did not take means it is idle (Working may be
// wrong: a rollout a crash left mid-turn), and Enter follows whatever
// Working says.
func TestWorkingPicksTheQueueKey(t *testing.T) {
	f := newFixture("codex", nil)
	var asked []agent.Kind
	f.Deliverer.Working = func(kind agent.Kind, p mux.Pane) bool {
		asked = append(asked, kind)
		return true
	}
	res, err := f.send("next", false)
	require.NoError(t, err)
	assert.Equal(t, []agent.Kind{agent.Codex}, asked, "asked before the first key only")
	var keys []string
	for _, c := range f.Mux.Calls() {
		if c.Op == "key" {
			keys = append(keys, c.Arg)
		}
	}
	assert.Equal(t, []string{"Tab", "Enter"}, keys, "Tab while it works (the idle sim ignores it), then Enter")
	assert.Equal(t, deliver.Submitted, res.Outcome)
	assert.True(t, res.WasBusy)
	require.Len(t, f.Agent.Submissions, 1)
	assert.Equal(t, "submit", f.Agent.Submissions[0].Mode)
}

// startingMux shows a pane's command as its first looks see it while the
// agent starts: env, which runs an npm-installed agent's
// #!/usr/bin/env node script until it execs node.
type startingMux struct {
	*sim.Mux
	command string
	looks   int // looks that see command
}

func (m *startingMux) Inspect(ctx context.Context, id string) (mux.Pane, string, error) {
	p, screen, err := m.Mux.Inspect(ctx, id)
	p.PID = os.Getpid() // a process started a moment ago
	if m.looks > 0 {
		m.looks--
		p.CurrentCommand = m.command
	}
	return p, screen, err
}

func TestAgentStartedThroughEnvIsWaitedFor(t *testing.T) {
	f := newFixture("codex", nil)
	m := &startingMux{Mux: f.Mux, command: "env", looks: 3}
	f.Deliverer.Mux = m
	res, err := f.send("early bird", false)
	require.NoError(t, err)
	assert.Equal(t, deliver.Submitted, res.Outcome)
	assert.Zero(t, m.looks)
	require.Len(t, f.Agent.Submissions, 1)
	assert.Equal(t, "early bird", f.Agent.Submissions[0].Text)

	// Another program stays refused.
	f = newFixture("codex", nil)
	f.Deliverer.Mux = &startingMux{Mux: f.Mux, command: "vim", looks: 3}
	_, err = f.send("x", false)
	require.ErrorIs(t, err, deliver.ErrNotRunning)
	assert.Zero(t, f.Mux.Count("paste"))
}

// Someone types into the box between the last look and the paste: the
// text is taken back off the end of the box, theirs is left as it was,
// Enter is never pressed, and the send fails INPUT_NOT_EMPTY (the
// supervisor defers the trigger).
func TestTypedAsPastedIsTakenBack(t *testing.T) {
	for name, c := range map[string]struct{ persona, text string }{
		"claude": {"claude", "look at run 4711"},
		"codex":  {"codex", "look at run 4711"},
		// Claude shows a long paste as "[Pasted text #1 +5 lines]" after
		// the draft; one BSpace deletes the placeholder whole.
		"claude placeholder": {"claude", "look at run 4711\nstep 1\nstep 2\nstep 3\nstep 4\nstep 5"},
	} {
		t.Run(name, func(t *testing.T) {
			persona := c.persona
			f := newFixture(persona, nil)
			res, err := f.Deliverer.Send(context.Background(), deliver.Request{Pane: f.ID, Profile: agent.Lookup(agent.Kind(persona)),
				Text:    c.text,
				Pasting: func(context.Context) { f.Agent.Type("operator draft") }})
			require.ErrorIs(t, err, deliver.ErrInputBusy)
			assert.Equal(t, deliver.Failed, res.Outcome)
			assert.Equal(t, "operator draft", f.Agent.Input())
			assert.Empty(t, f.Agent.Submissions)
			for _, c := range f.Mux.Calls() {
				assert.False(t, c.Op == "key" && (c.Arg == "Enter" || c.Arg == "Tab" || c.Arg == "C-u"), "pressed %s", c.Arg)
			}
		})
	}
}

// redrawMux shows, at the first look after the first Enter's watch (its
// last look is the first at or past its end), a screen with no input box: the agent caught mid-redraw
// (gemini under load drew its box and footer twice over).
type redrawMux struct {
	*sim.Mux
	clock   *sim.Clock
	after   time.Time // the first Enter's watch ends
	glitch  bool      // the one glitched look is yet to come
	past    int       // looks past after
	glitchd bool      // it came
}

func (m *redrawMux) SendKey(ctx context.Context, id, key string) error {
	if key == "Enter" && m.after.IsZero() {
		m.after, m.glitch = m.clock.Now().Add(400*time.Millisecond), true
	}
	return m.Mux.SendKey(ctx, id, key)
}

func (m *redrawMux) Inspect(ctx context.Context, id string) (mux.Pane, string, error) {
	p, screen, err := m.Mux.Inspect(ctx, id)
	if m.glitch && !m.clock.Now().Before(m.after) {
		if m.past++; m.past == 1 {
			return p, screen, err
		}
		m.glitch, m.glitchd = false, true
		return p, "\n\n  redrawing\n", err
	}
	return p, screen, err
}

func TestOneLookMidRedrawDoesNotEndTheRetries(t *testing.T) {
	f := newFixture("claude", func(a *sim.Agent) { a.LoseEnters(1) })
	m := &redrawMux{Mux: f.Mux, clock: f.Clock}
	f.Deliverer.Mux = m
	res, err := f.send("hello", false)
	require.NoError(t, err, "presses: %s", f.Mux.History(f.ID))
	assert.True(t, m.glitchd, "the glitched look came")
	assert.Equal(t, deliver.Submitted, res.Outcome)
	assert.Equal(t, 2, res.Enters)
	require.Len(t, f.Agent.Submissions, 1)
	assert.Equal(t, "hello", f.Agent.Submissions[0].Text)
}

// staleMux shows, for a while after the first Enter, the screen of the
// moment before it: a loaded machine where the agent took the Enter (its
// records say so) and has not drawn the frame that says it yet.
type staleMux struct {
	*sim.Mux
	clock  *sim.Clock
	lag    time.Duration
	until  time.Time
	frame  string
	stales int // looks answered with the old frame
}

func (m *staleMux) SendKey(ctx context.Context, id, key string) error {
	if key == "Enter" && m.until.IsZero() {
		_, m.frame, _ = m.Mux.Inspect(ctx, id)
		m.until = m.clock.Now().Add(m.lag)
	}
	return m.Mux.SendKey(ctx, id, key)
}

func (m *staleMux) Inspect(ctx context.Context, id string) (mux.Pane, string, error) {
	p, screen, err := m.Mux.Inspect(ctx, id)
	if m.clock.Now().Before(m.until) {
		m.stales++
		return p, m.frame, err
	}
	return p, screen, err
}

// Codex records a turn in its rollout before it draws it: on a loaded
// machine the Enter that started it is not seen taken within its window,
// and the next look finds the old frame (the text in the box) while the
// rollout says codex works. The text is taken once, and reported
// submitted: the agent was idle when Enter was pressed, the turn is ours.
func TestATurnOurEnterStartedIsNotReportedQueued(t *testing.T) {
	f := newFixture("codex", nil)
	m := &staleMux{Mux: f.Mux, clock: f.Clock, lag: 700 * time.Millisecond}
	f.Deliverer.Mux = m
	f.Deliverer.Working = func(agent.Kind, mux.Pane) bool { return !m.until.IsZero() }
	res, err := f.send("hello", false)
	require.NoError(t, err, "presses: %s", f.Mux.History(f.ID))
	assert.Positive(t, m.stales, "the old frame was seen")
	assert.Equal(t, deliver.Submitted, res.Outcome, "presses: %s", f.Mux.History(f.ID))
	require.Len(t, f.Agent.Submissions, 1)
	assert.Equal(t, "hello", f.Agent.Submissions[0].Text)
}
