package agent

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestInfer(t *testing.T) {
	tests := []struct {
		argv []string
		want Kind
	}{
		{nil, Shell},
		{[]string{"claude", "--model", "opus"}, Claude},
		{[]string{"/usr/local/bin/codex"}, Codex},
		{[]string{"gemini"}, Gemini},
		{[]string{"zsh"}, Shell},
		{[]string{"aider"}, Generic},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Infer(tt.argv), "%q", tt.argv)
	}
}

// Screens as the real agents draw them (docs/agents-reference.md §2), and the
// mock personas with them.
const (
	rule       = "────────────────────────────────────────────────────────────"
	claudeFoot = "  ? for shortcuts · ← for agents"
	geminiFoot = " workspace (/directory)       sandbox                 /model\n ~/party                      no sandbox              gemini-2.5-pro"
)

func claudeBox(input ...string) string {
	return rule + "\n" + strings.Join(input, "\n") + "\n" + rule + "\n" + claudeFoot + "\n"
}

func geminiBox(input ...string) string {
	return "                                          ? for shortcuts\n" + rule + "\n Shift+Tab to accept edits\n\n" +
		strings.Join(input, "\n") + "\n\n" + geminiFoot + "\n"
}

func TestInputLine(t *testing.T) {
	tests := []struct {
		name   string
		kind   Kind
		screen string
		want   string
		found  bool
	}{
		{"claude idle", Claude, claudeBox("❯\u00a0"), "", true},
		{"claude idle trimmed by tmux", Claude, claudeBox("❯"), "", true},
		{"claude typed", Claude, claudeBox("❯\u00a0hello world"), "hello world", true},
		{"claude multi-line input", Claude, claudeBox("❯\u00a0first", "  second"), "first\nsecond", true},
		{"claude paste placeholder is text", Claude, claudeBox("❯\u00a0[Pasted text #1 +12 lines]"), "[Pasted text #1 +12 lines]", true},
		{"claude queued placeholder is empty", Claude,
			"✢ Skedaddling…\n\n  ❯ queued while busy\n" + claudeBox("❯\u00a0Press up to edit queued messages"), "", true},
		{"claude Try placeholder is empty", Claude, claudeBox(`❯` + "\u00a0" + `Try "how does <filepath> work?"`), "", true},
		{"claude history echo is not the input", Claude,
			"❯ earlier prompt\n\n● The answer.\n\n✻ Sautéed for 6s\n\n" + claudeBox("❯\u00a0"), "", true},
		{"claude echo alone is no input line", Claude, "❯ earlier prompt\n\n● The answer.\n", "", false},
		{"claude the last box counts", Claude, claudeBox("❯\u00a0old") + "\n● answer\n" + claudeBox("❯\u00a0new"), "new", true},
		{"claude permission dialog hides the input", Claude,
			"❯ clean up\n\n" + rule + "\n Bash command\n\n   rm -rf build\n\n Do you want to proceed?\n ❯ 1. Yes\n   2. Yes, and always allow access to rm\n   3. No\n\n Esc to cancel · Tab to amend\n", "", false},
		{"claude trust dialog", Claude, "Do you trust the files in this folder?\n ❯ 1. Yes, I trust this folder\n   2. No, exit\n", "", false},
		{"codex placeholder", Codex, "› Ask Codex to do anything\n\n  ? for shortcuts", "", true},
		{"codex typed", Codex, "› earlier\n\n• answer\n\n› fix the bug\n\n  ? for shortcuts", "fix the bug", true},
		{"codex approval hides the input", Codex,
			"› run it\n\nWould you like to run the following command?\n\nEnvironment: local\n\nReason: cleanup\n\n$ rm -rf build\n\n› 1. Yes, proceed (y)\n  2. Yes, and don't ask again for these commands (p)\n  3. No, and tell Codex what to do differently (esc)\n\nPress enter to confirm or esc to cancel", "", false},
		{"gemini placeholder", Gemini, geminiBox(" >   Type your message or @path/to/file"), "", true},
		{"gemini typed", Gemini, geminiBox(" > explain main.go"), "explain main.go", true},
		{"gemini multi-line", Gemini, geminiBox(" > one", "   two"), "one\ntwo", true},
		{"gemini paste placeholder", Gemini, geminiBox(" > [Pasted Text: 12 lines]"), "[Pasted Text: 12 lines]", true},
		{"gemini history echo is not the input", Gemini, "\n > earlier prompt\n\n✦ The answer\n  goes on.\n", "", false},
		{"gemini box hides the input", Gemini,
			" > run it\n╭──────────╮\n│ Allow execution of [Shell]? │\n│ ● 1. Allow once │\n│   2. Allow for this session │\n│   3. No, suggest changes (esc) │\n╰──────────╯\n", "", false},
		{"generic has no input line", Generic, "mock> hi", "", false},
		{"no prompt on screen", Claude, "loading…", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found := Lookup(tt.kind).InputLine(tt.screen)
			assert.Equal(t, tt.found, found, "found")
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestBusy(t *testing.T) {
	tests := []struct {
		name   string
		kind   Kind
		screen string
		want   bool
	}{
		{"claude verb without parenthesis", Claude, "✢ Skedaddling…\n\n" + claudeBox("❯\u00a0"), true},
		{"claude verb with parenthesis", Claude, "✶ Pondering… (16s · ↓ 8 tokens)\n\n" + claudeBox("❯\u00a0"), true},
		{"claude every glyph", Claude, "· Whirring…\n✳ Whirring…\n✻ Whirring…\n✽ Whirring…\n* Whirring…", true},
		{"claude running stop hooks", Claude, "· Whirring… (running stop hooks… 0/2 · 4s)\n\n" + claudeBox("❯\u00a0"), true},
		{"claude old style busy line", Claude, "✻ Thinking… (12s · ↑ 1.2k tokens · esc to interrupt)\n❯\u00a0", true},
		{"claude esc to interrupt in the footer", Claude, rule + "\n❯\u00a0\n" + rule + "\n  esc to interrupt\n", true},
		{"claude retrying", Claude, "✻ API error · Retrying in 13s · attempt 7/10\n" + claudeBox("❯\u00a0"), true},
		{"claude finished turn", Claude, "● Done.\n\n✻ Sautéed for 6s\n\n" + claudeBox("❯\u00a0"), false},
		{"claude worked for", Claude, "✻ Worked for 1m 52s\n" + claudeBox("❯\u00a0"), false},
		{"claude esc to interrupt in an answer", Claude, "● Press esc to interrupt it.\n\n" + claudeBox("❯\u00a0"), false},
		{"claude answer with an ellipsis", Claude, "● Loading…\n  * item…\n" + claudeBox("❯\u00a0"), false},
		{"codex bullet frame", Codex, "• Working (1s • esc to interrupt)\n\n› Ask Codex to do anything", true},
		{"codex hollow frame", Codex, "◦ Working (1m 04s • esc to interrupt)\n\n› Ask Codex to do anything", true},
		{"codex reasoning header", Codex, "• Planning the fix (5s • esc to interrupt)", true},
		{"codex idle", Codex, "• The answer.\n\nWorked for <1s • 12:05\n\n› Ask Codex to do anything", false},
		{"codex queued follow-ups alone", Codex, "• Queued follow-up inputs\n  ↳ text\n› Ask Codex to do anything", false},
		{"gemini ascii dots", Gemini, " ⠸ Thinking... (esc to cancel, 1s)\n\n" + geminiBox(" >   Type your message or @path/to/file"), true},
		{"gemini minutes", Gemini, " ⠏ Thinking... (esc to cancel, 1m 4s)", true},
		{"gemini spinner without parenthesis", Gemini, " ⠋ Thinking...", true},
		{"gemini unicode ellipsis", Gemini, "⠋ Thinking… (esc to cancel, 5s)", true},
		{"gemini idle", Gemini, "✦ The answer...\n" + geminiBox(" >   Type your message or @path/to/file"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Lookup(tt.kind).IsBusy(tt.screen))
		})
	}
}

func TestDialog(t *testing.T) {
	tests := []struct {
		name     string
		screen   string
		want     bool
		selected string
	}{
		{"claude trust", "Do you trust the files in this folder?\n ❯ 1. Yes, I trust this folder\n   2. No, exit\n\n Enter to confirm · Esc to cancel", true, "❯ 1. Yes, I trust this folder"},
		{"claude api key", "Detected a custom API key in your environment\n   1. Yes\n ❯ 2. No (recommended)\n", true, "❯ 2. No (recommended)"},
		{"claude permission", rule + "\n Bash command\n\n   rm -rf build\n\n Do you want to proceed?\n ❯ 1. Yes\n   2. Yes, and always allow access to rm\n   3. No\n\n Esc to cancel · Tab to amend", true, "❯ 1. Yes"},
		{"codex approval", "Would you like to run the following command?\n\nEnvironment: local\n\nReason: cleanup\n\n$ ls\n\n› 1. Yes, proceed (y)\n  2. Yes, and don't ask again for these commands (p)\n  3. No, and tell Codex what to do differently (esc)\n\nPress enter to confirm or esc to cancel", true, "› 1. Yes, proceed (y)"},
		{"codex trust", "› 1. Trust and continue\n  2. Quit\n", true, "› 1. Trust and continue"},
		{"gemini tool box", "╭──────────────────────────────╮\n│ ?  Shell rm -rf build         │\n│                               │\n│ Allow execution of [Shell]?   │\n│                               │\n│ ● 1. Allow once               │\n│   2. Allow for this session   │\n│   3. No, suggest changes (esc)│\n╰──────────────────────────────╯", true, "● 1. Allow once"},
		{"gemini trust box", "╭────────────╮\n│ Do you trust this folder? │\n│ ● 1. Trust folder (x) │\n│   2. Trust parent folder │\n│   3. Don't trust │\n╰────────────╯", true, "● 1. Trust folder (x)"},
		{"gemini auth box", "╭────────────╮\n│ How would you like to authenticate for this project? │\n│   1. Login with Google │\n│ ● 2. Use Gemini API Key │\n│   3. Vertex AI │\n╰────────────╯", true, "● 2. Use Gemini API Key"},
		{"gemini api key text box", "╭────────────╮\n│ Enter Gemini API Key │\n│ ╭──────╮ │\n│ │ Paste your API key here │ │\n│ ╰──────╯ │\n╰────────────╯", true, "Enter Gemini API Key"},
		{"numbered list in a claude answer", "● Steps:\n  1. parse\n  2. build\n" + claudeBox("❯\u00a0"), false, ""},
		{"claude answer starting with a numbered item", "● 1. parse\n  2. build\n" + claudeBox("❯\u00a0"), false, ""},
		{"gemini answer with a numbered list", "✦ 1. parse\n  2. build\n" + geminiBox(" >   Type your message or @path/to/file"), false, ""},
		{"idle", claudeBox("❯\u00a0"), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, got := Dialog(tt.screen)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.selected, sel)
		})
	}
}

func TestMenuOpen(t *testing.T) {
	tests := []struct {
		name   string
		kind   Kind
		screen string
		want   bool
	}{
		{"gemini slash menu", Gemini, geminiBox(" > /he", "", " help    For help on gemini-cli", " theme   Change the theme"), true},
		{"gemini at menu", Gemini, geminiBox(" > foo@", "", " codebase_investigator  [Agent]", " README.md"), true},
		{"gemini long menu", Gemini, geminiBox(" > /", "", " about  Show version info", " ▼", " (1/26)"), true},
		{"gemini at without matches", Gemini, geminiBox(" > mail bob@example.com"), false},
		{"gemini completed path", Gemini, geminiBox(" > read @README.md"), false},
		{"gemini plain text", Gemini, geminiBox(" > explain main.go"), false},
		{"gemini at in an earlier word", Gemini, geminiBox(" > ask bob@example.com now"), false},
		{"gemini empty", Gemini, geminiBox(" >   Type your message or @path/to/file"), false},
		{"gemini empty, a line under the box", Gemini, geminiBox(" >   Type your message or @path/to/file", "", " ? for shortcuts"), false},
		{"claude never", Claude, claudeBox("❯\u00a0/he"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Lookup(tt.kind).MenuOpen(tt.screen))
		})
	}
}

func TestForPane(t *testing.T) {
	assert.Equal(t, Codex, ForPane(Codex, "claude").Kind, "@party_agent wins")
	assert.Equal(t, Claude, ForPane("", "claude").Kind, "else the role's name")
	assert.Equal(t, Generic, ForPane("", "planner").Kind)
	assert.Equal(t, Generic, ForPane("vim", "x").Kind, "an unknown kind is generic")
}

func TestTakesAgentText(t *testing.T) {
	tests := []struct {
		kind Kind
		ok   bool
		why  string
	}{
		{Claude, true, ""},
		{Codex, true, ""},
		{Gemini, true, ""},
		{Shell, false, "shell"},
		{Generic, false, "program"},
		{"", false, "program"},
		{Infer([]string{"python3"}), false, "program"},
		{Infer([]string{"bash", "-l"}), false, "shell"},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			ok, why := TakesAgentText(tt.kind)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.why, why)
		})
	}
}

func TestHoldsATallCodexInputScrolled(t *testing.T) {
	p := Lookup(Codex)
	text := strings.Repeat("a line of the plan\n", 40) + "last line"
	assert.True(t, p.Holds("↑", text), "codex shows only a scroll arrow on its prompt line")
	assert.True(t, p.Holds("a line of the plan ↑", text))
	assert.False(t, p.Holds("something else ↑", text))
}

func TestHoldsAPlaceholderOnlyWithNothingElsesBesideIt(t *testing.T) {
	p := Lookup(Claude)
	text := "look at run 4711\nstep 1\nstep 2\nstep 3\nstep 4"
	assert.True(t, p.Holds("[Pasted text #1 +4 lines]", text))
	assert.True(t, p.Holds("[Pasted text #1 +2 lines][Pasted text #2 +2 lines]", text), "a paste read in pieces")
	assert.False(t, p.Holds("operator draft[Pasted text #1 +4 lines]", text), "a draft typed before the paste is not the text's")
}

func TestQueueing(t *testing.T) {
	tests := []struct {
		name   string
		kind   Kind
		screen string
		want   bool
	}{
		{"codex queued follow-ups", Codex, "• ok\n\n• Queued follow-up inputs\n  ↳ text\n› Ask Codex to do anything", true},
		{"codex idle", Codex, "• The answer.\n\nWorked for <1s • 12:05\n\n› Ask Codex to do anything", false},
		{"codex answer quoting it", Codex, "• I saw • Queued follow-up inputs there\n› Ask Codex to do anything", false},
		{"claude has no such line", Claude, "• Queued follow-up inputs", false},
		{"claude's queued messages, above its box", Claude, "● done one\n· Tempering… (running stop hook · 5s)\n  ❯ second queued\n  ❯ third queued\n────\n❯ Press up to edit queued messages\n────", true},
		{"claude's echo of a prompt is no queue", Claude, "✻ Churned for 5s\n❯ second queued\n────\n❯\u00a0\n────", false},
		{"claude's dialog item is no queue", Claude, " Do you want to proceed?\n  ❯ 1. Yes\n    2. No", false},
		{"claude's queued text may start with a number", Claude, "  ❯ 42 is the answer\n────", true},
		{"gemini's queue", Gemini, "✦ ok\n  Queued (press ↑ to edit):\n    second\n ⠸ Thinking... (esc to cancel, 1s)\n> \n", true},
		{"gemini's answer quoting it", Gemini, "✦ it said Queued (press ↑ to edit): there\n> ", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Lookup(tt.kind).Queueing(tt.screen))
		})
	}
}

func TestTurnStarting(t *testing.T) {
	box := "\n\n› message 06: alpha\n\n  x default · ~/w\n"
	tests := []struct {
		name   string
		kind   Kind
		screen string
		want   bool
	}{
		{"codex took a queued prompt, no answer yet", Codex, "› message 04: alpha\n\n• ok\n\n› message 05: alpha" + box, true},
		{"a prompt of two lines, no answer yet", Codex, "• ok\n\n› message 05: alpha\n  bravo" + box, true},
		{"answered", Codex, "› message 05: alpha\n\n• ok\n\n  Worked for <1s • 12:05" + box, false},
		{"an error notice", Codex, "› please fail\n\n■ We're currently experiencing high demand" + box, false},
		{"no prompt above the box", Codex, "╭───╮\n│ >_ OpenAI Codex (v0.169.0) │\n╰───╯" + box, false},
		{"the first prompt scrolled away", Codex, "  a long answer's tail\n\n  Worked for 3s" + box, false},
		{"not codex", Claude, "› message 05: alpha" + box, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Lookup(tt.kind).TurnStarting(tt.screen))
		})
	}
}
