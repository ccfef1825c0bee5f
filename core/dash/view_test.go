package dash

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/golden"
)

// fakeModel is a model of two sessions with an agent in every state, a
// supervisor with open and failed triggers, a review and tasks.
func fakeModel() Model {
	now := at(600)
	return Model{Now: now, Sessions: []Session{
		{Name: "api", StateDir: "/state/api", Agents: []Agent{
			{Role: "claude", Kind: "claude", Pane: "%0", State: Busy, Since: at(536), Prompt: "fix the failing tests in core/dash", Answer: "Done: 3 files changed.", Hooked: true, Queued: 2},
			{Role: "codex", Kind: "codex", Pane: "%1", State: Permission, Since: at(588), Reason: "Codex asks to run: rm -rf build"},
			{Role: "gemini", Kind: "gemini", Pane: "%2", State: Failed, Since: at(300), Reason: "rate_limit: 429 Too Many Requests \x1b]52;c;evil\x07", Hooked: true},
			{Role: "shell", Kind: "shell", Pane: "%3", State: Idle, Since: at(10)},
		},
			Supervisor: &Supervisor{Running: true,
				Runtimes: []Runtime{{Role: "claude", Status: "ready"}, {Role: "codex", Status: "deferred", OperatorBusy: true},
					{Role: "gemini", Status: "stalled", StalledSince: at(480)}},
				Triggers: []Trigger{
					{ID: "tr-7", Role: "codex", Status: "deferred", Class: "OPERATOR_BUSY", Since: at(570)},
					{ID: "tr-5", Role: "claude", Status: "failed", Class: "ACK_TIMEOUT", Error: "no ack after 3 tries", Since: at(400)},
				}},
			Review: &Review{State: "REVIEW", Phase: "dispatched", Since: at(480), Iteration: 1, MaxIterations: 3, Reviews: 2, Running: true,
				Evidence: []Evidence{{Kind: "critic", Present: true, Fresh: true}, {Kind: "minimizer", Present: true}, {Kind: "tests-passed"}}},
			Tasks: &Tasks{Items: []Task{
				{ID: "1", Title: "LRU cache", Status: "in_progress", Assignee: "claude"},
				{ID: "2", Title: "docs", Status: "pending"},
				{ID: "3", Title: "setup", Status: "done"},
			}},
		},
		{Name: "web", StateDir: "/state/web", Agents: []Agent{
			{Role: "planner", Kind: "claude", Pane: "%5", State: Dialog, Since: at(590), Reason: "❯ 1. Yes, I trust this folder"},
			{Role: "coder", Kind: "codex", Pane: "%6", State: Starting, Since: at(598)},
			{Role: "old", Kind: "claude", Pane: "%7", State: Dead, Reason: "exited with status 137"},
			{Role: "review", Kind: "claude", Pane: "%8", State: Idle, Since: at(420), Answer: "LGTM", Hooked: true},
		}},
	}}
}

func frame(m Model, ui UI) string { return ansi.Strip(Render(m, ui)) }

func TestRenderGolden(t *testing.T) {
	m := fakeModel()
	tests := []struct {
		name string
		ui   UI
	}{
		{"all", UI{Width: 110}},
		{"selected", UI{Width: 110, Selected: 4}},
		{"narrow", UI{Width: 60, Height: 20}},
		{"filter", UI{Width: 110, Filter: "CLAUDE", Filtering: true}},
		{"talk", UI{Width: 110, Selected: 1, Talking: true, Draft: "go ahead"}},
		{"help", UI{Width: 110, Help: true}},
		{"status", UI{Width: 110, Status: "talk to claude: submitted"}},
		{"empty", UI{Width: 80}},
		{"hosts", UI{Width: 110, Selected: 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mm := m
			switch tt.name {
			case "empty":
				mm = Model{Now: m.Now}
			case "hosts":
				mm = withHosts(m)
			}
			got := frame(mm, tt.ui)
			for i, line := range strings.Split(got, "\n") {
				assert.LessOrEqual(t, ansi.StringWidth(line), tt.ui.Width, "line %d wider than the terminal: %q", i+1, line)
			}
			if tt.ui.Height > 0 {
				assert.LessOrEqual(t, strings.Count(got, "\n")+1, tt.ui.Height, "more lines than the terminal")
			}
			golden.Assert(t, "dash/"+tt.name+".golden", got)
		})
	}
}

// withHosts is m with three other hosts: one up with a session of two
// agents, one not looked at yet, one offline since it was last seen.
func withHosts(m Model) Model {
	m.Hosts = []Host{
		{Name: "box", SSH: "me@box", Online: true, Seen: at(598), Elapsed: 412, Sessions: []Session{{Name: "api", Agents: []Agent{
			{Role: "codex", Kind: "codex", Pane: "%0", State: Busy, Since: at(588), Prompt: "run the slow tests", Hooked: true},
			{Role: "claude", Kind: "claude", Pane: "%1", State: Idle, Since: at(500), Answer: "ok", Hooked: true},
		}}}},
		{Name: "lab", SSH: "lab", Sessions: []Session{}},
		{Name: "old", SSH: "me@old", Seen: at(470), Error: &HostError{Code: "HOST_TIMEOUT", Message: "host old: timed out"}, Sessions: []Session{}},
	}
	return m
}

func TestRenderHosts(t *testing.T) {
	got := frame(withHosts(fakeModel()), UI{Width: 140})
	assert.Contains(t, got, "3 sessions · 10 agents · 2 busy · 3 need you · 3 hosts, 1 offline")
	assert.Regexp(t, `(?m)^  HOST +ROLE +KIND +STATE`, got)
	assert.Regexp(t, `(?m)^  local +shell +shell +idle`, got, "this host's rows say local")
	assert.Regexp(t, `(?m)^api @box$`, got)
	assert.Regexp(t, `(?m)^  box +codex +codex +busy 12s +- +▶ run the slow tests`, got)
	assert.Regexp(t, `(?m)^  box +me@box +up · 1 session · looked in 412ms$`, got)
	assert.Regexp(t, `(?m)^  lab +lab +looking…$`, got)
	assert.Regexp(t, `(?m)^  old +me@old +offline · HOST_TIMEOUT · last seen 2m 10s ago · host old: timed out$`, got)
	assert.NotContains(t, frame(fakeModel(), UI{Width: 140}), "HOST", "no HOST column without hosts")

	refs := Visible(withHosts(fakeModel()), "box")
	assert.Equal(t, []Ref{{Host: "box", Session: "api", Pane: "%0", Role: "codex"}, {Host: "box", Session: "api", Pane: "%1", Role: "claude"}}, refs,
		"another host's agents can be selected, by its name too")
}

func TestRenderIsTerminalSafe(t *testing.T) {
	out := Render(fakeModel(), UI{Width: 200})
	assert.NotContains(t, out, "\x1b]52", "an agent's OSC reached the terminal")
	assert.NotContains(t, out, "\x07")
	assert.Contains(t, ansi.Strip(out), `\x1b]52;c;evil\a`)
}

func TestRenderDurations(t *testing.T) {
	got := frame(fakeModel(), UI{Width: 140})
	// Busy for 64 s, permission for 12 s; an idle agent without events
	// and a dead one first seen dead show no duration.
	assert.Contains(t, got, "busy 1m 4s")
	assert.Contains(t, got, "permission 12s")
	assert.Regexp(t, `(?m)^  shell +shell +idle +- `, got)
	assert.Regexp(t, `(?m)^  old +claude +dead +- `, got)
	assert.Contains(t, got, "idle 3m 0s", "an idle agent known from its events: since its turn ended")
}

func TestVisibleFilter(t *testing.T) {
	m := fakeModel()
	assert.Len(t, Visible(m, ""), 8)
	assert.Equal(t, []Ref{{Session: "api", Pane: "%1", Role: "codex"}}, Visible(m, "rm -rf"))
	assert.Len(t, Visible(m, "web"), 4, "a session's name selects its agents")
	assert.Len(t, Visible(m, "Permission"), 1, "case does not matter")
}

// press sends keys to p and returns the commands' messages, run.
func press(p *program, keys ...tea.KeyPressMsg) {
	for _, k := range keys {
		_, cmd := p.Update(k)
		for cmd != nil {
			msg := cmd()
			if _, quit := msg.(tea.QuitMsg); quit {
				return
			}
			_, cmd = p.Update(msg)
		}
	}
}

func key(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func typed(s string) []tea.KeyPressMsg {
	var out []tea.KeyPressMsg
	for _, r := range s {
		out = append(out, key(string(r)))
	}
	return out
}

func TestKeys(t *testing.T) {
	var jumped []Ref
	type talked struct {
		r    Ref
		text string
	}
	var talks []talked
	p := &program{ctx: context.Background(), m: fakeModel(), now: func() time.Time { return at(600) }, act: Actions{
		Jump: func(_ context.Context, r Ref) error { jumped = append(jumped, r); return nil },
		Talk: func(_ context.Context, r Ref, text string) (string, error) {
			talks = append(talks, talked{r, text})
			if text == "fail" {
				return "", errors.New("pane is dead")
			}
			return "submitted", nil
		},
	}}
	p.ui.Width = 120

	press(p, key("down"), key("down"), key("enter"))
	require.Len(t, jumped, 1)
	assert.Equal(t, Ref{Session: "api", Pane: "%2", Role: "gemini"}, jumped[0])
	assert.Equal(t, "jumped to gemini (%2)", p.ui.Status)

	press(p, key("up"), key("t"))
	require.True(t, p.ui.Talking)
	press(p, append(typed("hello wordd"), key("backspace"), key("backspace"), key("l"), key("d"), key("enter"))...)
	require.Len(t, talks, 1)
	assert.Equal(t, talked{Ref{Session: "api", Pane: "%1", Role: "codex"}, "hello world"}, talks[0])
	assert.Equal(t, "talk to codex: submitted", p.ui.Status)
	assert.False(t, p.ui.Talking)

	press(p, key("t"), key("x"), key("esc"))
	assert.Len(t, talks, 1, "esc sends nothing")
	press(p, append([]tea.KeyPressMsg{key("t")}, append(typed("fail"), key("enter"))...)...)
	assert.Equal(t, "talk to codex: pane is dead", p.ui.Status)

	press(p, append([]tea.KeyPressMsg{key("/")}, append(typed("web"), key("enter"))...)...)
	assert.Equal(t, "web", p.ui.Filter)
	assert.False(t, p.ui.Filtering)
	assert.Equal(t, 0, p.ui.Selected, "a new filter selects its first agent")
	press(p, key("down"), key("enter"))
	assert.Equal(t, Ref{Session: "web", Pane: "%6", Role: "coder"}, jumped[len(jumped)-1])
	press(p, key("esc"))
	assert.Empty(t, p.ui.Filter)

	press(p, key("?"))
	assert.True(t, p.ui.Help)
	assert.Contains(t, ansi.Strip(p.View().Content), "party dash — keys")
	press(p, key("x"))
	assert.False(t, p.ui.Help, "any key closes the help")

	_, cmd := p.Update(key("q"))
	require.NotNil(t, cmd)
	assert.IsType(t, tea.QuitMsg{}, cmd())
}

func TestProgramAppliesEvents(t *testing.T) {
	events := make(chan Event, 4)
	p := &program{ctx: context.Background(), events: events, now: func() time.Time { return at(10) }}
	events <- listed(at(0))
	events <- hk("%1", hook.PromptSubmit, 5)
	events <- hk("%1", hook.Notification, 7, func(e *hook.Event) { e.Type, e.Message = hook.PermissionPrompt, "asks" })
	msg := p.next()()
	_, cmd := p.Update(msg)
	require.NotNil(t, cmd, "it waits for the next event")
	assert.Equal(t, Permission, p.m.Session("t").Agent("%1").State, "a burst is applied at once")
	assert.Equal(t, at(10), p.m.Now)
	assert.Contains(t, ansi.Strip(p.View().Content), "permission 3s")
	close(events)
	_, cmd = p.Update(cmd())
	assert.Nil(t, cmd, "the source ended: nothing more to wait for")
	assert.Nil(t, p.events)
}

func TestRenderScrollsToTheSelection(t *testing.T) {
	got := frame(fakeModel(), UI{Width: 100, Height: 12, Selected: 6})
	lines := strings.Split(got, "\n")
	require.Len(t, lines, 12)
	assert.Contains(t, lines[0], "party dash", "the title stays")
	assert.Contains(t, got, "▸ old ")
	assert.NotContains(t, got, "  claude   claude  busy", "the first rows scrolled away")
}

func TestTokensColumn(t *testing.T) {
	m := fakeModel()
	plain := ansi.Strip(Render(m, UI{Width: 120, Height: 40}))
	assert.NotContains(t, plain, "TOKENS", "no column while no agent spent any")

	m = Update(m, UsageSeen{Session: "api", Tokens: map[string]int64{"claude": 12345, "codex": 999, "nobody": 5}})
	require.Equal(t, int64(12345), m.Sessions[0].Agents[0].Tokens)
	require.Equal(t, int64(0), m.Sessions[0].Agents[2].Tokens, "gemini spent nothing recorded")
	plain = ansi.Strip(Render(m, UI{Width: 120, Height: 40}))
	assert.Regexp(t, `ROLE +KIND +STATE +Q +TOKENS +DOING`, plain)
	assert.Regexp(t, `claude +claude +busy.* 2 +12\.3k +`, plain)
	assert.Regexp(t, `codex +codex +permission.* - +999 +`, plain)
	assert.Regexp(t, `gemini +gemini +failed.* - +- +`, plain)
	assert.Contains(t, plain, "tokens spent: 12345", "the selected agent's line")
	assert.Equal(t, "4.5M", tokens(4_500_000))
}

// A runtime whose triggers are held for a spent budget says so under its
// session's supervisor line.
func TestRenderOverBudget(t *testing.T) {
	m := fakeModel()
	m.Sessions[0].Supervisor.Runtimes[0].Status = "over_budget"
	assert.Contains(t, frame(m, UI{}), "    claude  over budget: its triggers are held")
	assert.NotContains(t, frame(fakeModel(), UI{}), "over budget")
}
