package dash

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/hook"
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// listed is a session "t" with a claude (%1) and a codex (%2) pane.
func listed(at time.Time, dead ...string) PanesSeen {
	ev := PanesSeen{Session: "t", StateDir: "/s", At: at, Panes: []Pane{
		{ID: "%1", Role: "claude", Kind: "claude"},
		{ID: "%2", Role: "codex", Kind: "codex"},
		{ID: "%3", Kind: "shell"}, // no role: not an agent
	}}
	for i := range ev.Panes {
		for _, d := range dead {
			if ev.Panes[i].ID == d {
				ev.Panes[i].Dead, ev.Panes[i].DeadStatus = true, "1"
			}
		}
	}
	return ev
}

func hk(pane, kind string, s int, f ...func(*hook.Event)) HookSeen {
	ev := hook.Event{Pane: pane, Kind: kind, Time: at(s)}
	for _, g := range f {
		g(&ev)
	}
	return HookSeen{Session: "t", Event: ev}
}

// agentOf is the agent of pane in session t after evs.
func agentOf(t *testing.T, pane string, evs ...Event) Agent {
	t.Helper()
	m := Model{}
	for _, ev := range evs {
		m = Update(m, ev)
	}
	s := m.Session("t")
	require.NotNil(t, s, "session t")
	a := s.Agent(pane)
	require.NotNil(t, a, "agent %s", pane)
	return *a
}

func TestUpdateAgentStates(t *testing.T) {
	prompt := func(e *hook.Event) { e.Prompts = []string{"fix   the\ntests"} }
	tests := []struct {
		name       string
		evs        []Event
		state      State
		since      time.Time
		reason     string
		prompt     string
		answer     string
		wantHooked bool
	}{
		{"a new pane starts", []Event{listed(at(0))}, Starting, at(0), "", "", "", false},
		{"session start: idle", []Event{listed(at(0)), hk("%1", hook.SessionStart, 1)}, Idle, at(1), "", "", "", true},
		{"a submitted prompt: busy since then, its head kept",
			[]Event{listed(at(0)), hk("%1", hook.PromptSubmit, 5, prompt)}, Busy, at(5), "", "fix the tests", "", true},
		{"a tool run keeps the turn's start",
			[]Event{listed(at(0)), hk("%1", hook.PromptSubmit, 5, prompt), hk("%1", hook.ToolUse, 9)}, Busy, at(5), "", "fix the tests", "", true},
		{"a permission asked",
			[]Event{listed(at(0)), hk("%1", hook.PromptSubmit, 5), hk("%1", hook.Notification, 9, func(e *hook.Event) {
				e.Type, e.Message, e.Command = hook.PermissionPrompt, "Claude asks permission to use Bash", "rm -rf build"
			})}, Permission, at(9), "Claude asks permission to use Bash: rm -rf build", "", "", true},
		{"the later permission notification keeps the first's time",
			[]Event{listed(at(0)), hk("%1", hook.Notification, 9, func(e *hook.Event) { e.Type, e.Message = hook.PermissionPrompt, "asks" }),
				hk("%1", hook.Notification, 15, func(e *hook.Event) { e.Type, e.Message = hook.PermissionPrompt, "needs you" })},
			Permission, at(9), "asks", "", "", true},
		{"the permitted tool ran: busy again",
			[]Event{listed(at(0)), hk("%1", hook.Notification, 9, func(e *hook.Event) { e.Type = hook.PermissionPrompt }), hk("%1", hook.ToolUsed, 12)},
			Busy, at(12), "", "", "", true},
		{"a finished turn: idle with the answer's head",
			[]Event{listed(at(0)), hk("%1", hook.PromptSubmit, 5, prompt), hk("%1", hook.TurnComplete, 20, func(e *hook.Event) { e.Answer = "All green." })},
			Idle, at(20), "", "", "All green.", true},
		{"a failed turn says why",
			[]Event{listed(at(0)), hk("%1", hook.PromptSubmit, 5), hk("%1", hook.TurnFailed, 7, func(e *hook.Event) { e.Type, e.Message = "server_error", "API Error: 500" })},
			Failed, at(7), "server_error: API Error: 500", "", "", true},
		{"an idle notification does not end a turn",
			[]Event{listed(at(0)), hk("%1", hook.PromptSubmit, 5), hk("%1", hook.Notification, 6, func(e *hook.Event) { e.Type = "idle_prompt" })},
			Busy, at(5), "", "", "", true},
		{"party's own lines are not the agent's events",
			[]Event{listed(at(0)), hk("%1", "input", 3)}, Starting, at(0), "", "", "", false},
		{"a dead pane",
			[]Event{listed(at(0)), hk("%1", hook.PromptSubmit, 5, prompt), listed(at(8), "%1")}, Dead, at(8), "exited with status 1", "", "", true},
		{"a pane first seen dead: since when is not known",
			[]Event{listed(at(8), "%1")}, Dead, time.Time{}, "exited with status 1", "", "", false},
		{"events of a dead agent change nothing",
			[]Event{listed(at(0), "%1"), hk("%1", hook.PromptSubmit, 5)}, Dead, time.Time{}, "exited with status 1", "", "", false},
		{"a respawned pane starts again",
			[]Event{listed(at(0), "%1"), listed(at(9))}, Starting, at(9), "", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := agentOf(t, "%1", tt.evs...)
			assert.Equal(t, tt.state, a.State, "state")
			assert.Equal(t, tt.since, a.Since, "since")
			assert.Equal(t, tt.reason, a.Reason, "reason")
			assert.Equal(t, tt.prompt, a.Prompt, "prompt")
			assert.Equal(t, tt.answer, a.Answer, "answer")
			assert.Equal(t, tt.wantHooked, a.Hooked, "hooked")
		})
	}
}

func TestUpdateScreens(t *testing.T) {
	scr := func(s int, busy, ready bool, dialog string) ScreenSeen {
		return ScreenSeen{Session: "t", Pane: "%2", At: at(s), Busy: busy, Ready: ready, Dialog: dialog}
	}
	perm := hk("%2", hook.Notification, 4, func(e *hook.Event) { e.Type, e.Message = hook.PermissionPrompt, "asks" })
	tests := []struct {
		name   string
		evs    []Event
		state  State
		since  time.Time
		reason string
	}{
		{"an input box: idle", []Event{listed(at(0)), scr(1, false, true, "")}, Idle, at(1), ""},
		{"nothing yet: still starting", []Event{listed(at(0)), scr(1, false, false, "")}, Starting, at(0), ""},
		{"a spinner: busy since it was seen", []Event{listed(at(0)), scr(1, false, true, ""), scr(3, true, false, ""), scr(6, true, false, "")}, Busy, at(3), ""},
		{"the spinner gone: idle", []Event{listed(at(0)), scr(3, true, false, ""), scr(6, false, true, "")}, Idle, at(6), ""},
		{"a dialog on screen", []Event{listed(at(0)), scr(3, false, false, "❯ 1. Yes, proceed (y)")}, Dialog, at(3), "❯ 1. Yes, proceed (y)"},
		{"an approval dialog on screen: a permission",
			[]Event{listed(at(0)), ScreenSeen{Session: "t", Pane: "%2", At: at(3), Dialog: "› 1. Yes, proceed (y)", Permission: "Would you like to run the following command? ls"}},
			Permission, at(3), "Would you like to run the following command? ls"},
		{"the agent's event after the screen: its words, the screen's time",
			[]Event{listed(at(0)), ScreenSeen{Session: "t", Pane: "%2", At: at(3), Dialog: "❯ 1. Yes", Permission: "Do you want to proceed?"},
				hk("%2", hook.Notification, 4, func(e *hook.Event) { e.Type, e.Message, e.Command = hook.PermissionPrompt, "asks to use Bash", "ls" })},
			Permission, at(3), "asks to use Bash: ls"},
		{"the agent said permission: the dialog on screen is that", []Event{listed(at(0)), perm, scr(5, false, false, "❯ 1. Yes")}, Permission, at(4), "asks"},
		{"the dialog answered: busy", []Event{listed(at(0)), perm, scr(5, true, false, "")}, Busy, at(5), ""},
		{"a screen just after the submit event is not believed over it",
			[]Event{listed(at(0)), hk("%2", hook.PromptSubmit, 5), scr(6, false, true, "")}, Busy, at(5), ""},
		{"an interrupted turn ends on screen once the grace is over",
			[]Event{listed(at(0)), hk("%2", hook.PromptSubmit, 5), scr(8, false, true, "")}, Idle, at(8), ""},
		{"a failed turn stays failed on an idle screen",
			[]Event{listed(at(0)), hk("%2", hook.TurnFailed, 5, func(e *hook.Event) { e.Type = "error" }), scr(8, false, true, "")}, Failed, at(5), "error"},
		{"a dead pane's screen changes nothing", []Event{listed(at(0), "%2"), scr(8, true, false, "")}, Dead, time.Time{}, "exited with status 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := agentOf(t, "%2", tt.evs...)
			assert.Equal(t, tt.state, a.State, "state")
			assert.Equal(t, tt.since, a.Since, "since")
			assert.Equal(t, tt.reason, a.Reason, "reason")
		})
	}
}

func TestUpdateSessionRecords(t *testing.T) {
	m := Update(Model{}, listed(at(0)))
	m = Update(m, PanesSeen{Session: "a", At: at(0)})
	require.Len(t, m.Sessions, 2)
	assert.Equal(t, "a", m.Sessions[0].Name, "sessions in name order")

	sv := &Supervisor{Running: true, Triggers: []Trigger{{ID: "tr1", Role: "codex", Status: "deferred", Class: "OPERATOR_BUSY"}}}
	rv := &Review{State: "IMPLEMENT"}
	tk := &Tasks{Items: []Task{{ID: "1", Status: "pending"}, {ID: "2", Status: "done"}, {ID: "3", Status: "pending"}}}
	m2 := Update(Update(Update(Update(m, SupervisorSeen{Session: "t", Supervisor: sv}), ReviewSeen{Session: "t", Review: rv}),
		TasksSeen{Session: "t", Tasks: tk}), QueueSeen{Session: "t", Queued: map[string]int{"%2": 2}})
	s := m2.Session("t")
	assert.Same(t, sv, s.Supervisor)
	assert.Same(t, rv, s.Review)
	assert.Equal(t, 2, s.Tasks.Count("pending"))
	assert.Equal(t, 2, s.Agent("%2").Queued)
	assert.Equal(t, 0, s.Agent("%1").Queued)
	// Records of a session not shown are dropped.
	m4 := Update(m2, ReviewSeen{Session: "x", Review: rv})
	assert.Nil(t, m4.Session("x"))

	// Update never changes the model it was given.
	assert.Nil(t, m.Session("t").Supervisor)
	assert.Equal(t, 0, m.Session("t").Agent("%2").Queued)
	m3 := Update(m2, hk("%2", hook.PromptSubmit, 5))
	assert.Equal(t, Starting, m2.Session("t").Agent("%2").State)
	assert.Equal(t, Busy, m3.Session("t").Agent("%2").State)

	gone := Update(m3, SessionGone{Session: "t"})
	require.Len(t, gone.Sessions, 1)
	assert.Equal(t, "a", gone.Sessions[0].Name)
	assert.Equal(t, at(30), Update(gone, Tick{Now: at(30)}).Now)
}

func TestStateText(t *testing.T) {
	for s := Starting; s < numStates; s++ {
		b, err := s.MarshalText()
		require.NoError(t, err)
		var back State
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, s, back)
	}
	assert.Error(t, new(State).UnmarshalText([]byte("sleepy")))
	assert.Equal(t, "State(42)", State(42).String())
}

func TestHead(t *testing.T) {
	assert.Equal(t, "a b c", Head(" a\n\tb   c "))
	long := Head(string(make([]byte, 500)) + "x")
	assert.Equal(t, headLen, len([]rune(long)))
	assert.Equal(t, "45s", Duration(45*time.Second))
	assert.Equal(t, "3m 4s", Duration(184*time.Second))
	assert.Equal(t, "2h 5m", Duration(125*time.Minute))
	assert.Equal(t, "0s", Duration(-time.Second))
}

func TestUpdateHostSeen(t *testing.T) {
	up := Host{Name: "box", Online: true, Seen: at(10), Sessions: []Session{{Name: "api", Agents: []Agent{{Role: "codex", Pane: "%0"}}}}}
	down := Host{Name: "box", Error: &HostError{Code: "HOST_UNREACHABLE"}}
	m := Update(Model{}, HostSeen{Host: Host{Name: "lab"}})
	m = Update(m, HostSeen{Host: up})
	require.Len(t, m.Hosts, 2)
	assert.Equal(t, []string{"box", "lab"}, []string{m.Hosts[0].Name, m.Hosts[1].Name}, "in name order")
	assert.Equal(t, []Session{}, m.Hosts[1].Sessions, "never nil: --json prints []")

	before := m
	m = Update(m, HostSeen{Host: down})
	assert.False(t, m.Hosts[0].Online)
	assert.Empty(t, m.Hosts[0].Sessions, "an offline host shows no agents")
	assert.Equal(t, at(10), m.Hosts[0].Seen, "when it was last seen is kept")
	assert.True(t, before.Hosts[0].Online, "Update never changes the model it was given")
}
