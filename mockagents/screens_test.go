package mockagents

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/agent"
)

// idleEngine is a persona past its start, not running its loop: the tests
// set its state and look at what it draws.
func idleEngine(persona string) *engine {
	opt := DefaultOptions(persona)
	opt.TryHint = false
	e := newEngine(opt, io.Discard, func() (int, int) { return 60, 24 })
	e.ready, e.fresh = true, false
	return e
}

// busyEngine is a persona in a turn that began ago.
func busyEngine(persona string, ago time.Duration) *engine {
	e := idleEngine(persona)
	e.busy, e.busySince = true, time.Now().Add(-ago)
	if c, ok := e.p.(*claude); ok {
		c.verb = "Skedaddling"
	}
	return e
}

// reading is what a profile reads on a screen.
type reading struct {
	busy   bool
	input  string
	found  bool
	dialog bool
	menu   bool
}

func read(kind agent.Kind, screen string) reading {
	p := agent.Lookup(kind)
	in, found := p.InputLine(screen)
	_, dialog := agent.Dialog(screen)
	return reading{busy: p.IsBusy(screen), input: in, found: found, dialog: dialog, menu: p.MenuOpen(screen)}
}

var (
	rule60 = strings.Repeat("─", 60)
	cwd, _ = os.Getwd()
)

func TestMockScreens(t *testing.T) {
	tests := []struct {
		name    string
		persona string
		setup   func() *engine
		want    []string // the live region, exactly
		read    reading  // what the persona's profile reads on it
	}{
		{"claude idle", "claude", func() *engine { return idleEngine("claude") },
			[]string{rule60, "❯\u00a0", rule60, "  ? for shortcuts · ← for agents"},
			reading{found: true}},
		{"claude fresh session shows a dim Try", "claude", func() *engine {
			e := idleEngine("claude")
			e.fresh, e.opt.TryHint = true, true
			return e
		}, []string{rule60, "❯\u00a0\x1b[2mTry \"how does <filepath> work?\"\x1b[22m", rule60, "  ? for shortcuts · ← for agents"},
			reading{found: true}},
		{"claude busy without parenthesis at first", "claude", func() *engine { return busyEngine("claude", 3*time.Second) },
			[]string{"· Skedaddling…", "", rule60, "❯\u00a0", rule60, "  esc to interrupt · ← for agents"},
			reading{busy: true, found: true}},
		{"claude busy with parenthesis after ParenAfter", "claude", func() *engine {
			e := busyEngine("claude", 16*time.Second)
			e.tokens, e.frame = 8, 1
			return e
		}, []string{"✢ Skedaddling… (16s · ↓ 8 tokens)", "", rule60, "❯\u00a0", rule60, "  esc to interrupt · ← for agents"},
			reading{busy: true, found: true}},
		{"claude busy with parenthesis after the first token", "claude", func() *engine {
			e := busyEngine("claude", 2*time.Second)
			e.tokens, e.firstToken = 3, true
			return e
		}, []string{"· Skedaddling… (2s · ↓ 3 tokens)", "", rule60, "❯\u00a0", rule60, "  esc to interrupt · ← for agents"},
			reading{busy: true, found: true}},
		{"claude running stop hooks", "claude", func() *engine {
			e := busyEngine("claude", 9*time.Second)
			c := e.p.(*claude)
			c.stopping, c.stopTotal, c.stopSince = true, 2, time.Now().Add(-4*time.Second)
			return e
		}, []string{"· Skedaddling… (running stop hooks… 0/2 · 4s)", "", rule60, "❯\u00a0", rule60, "  esc to interrupt · ← for agents"},
			reading{busy: true, found: true}},
		{"claude busy without the footer hint", "claude", func() *engine {
			e := busyEngine("claude", time.Second)
			e.opt.NoEscHint = true
			return e
		}, []string{"· Skedaddling…", "", rule60, "❯\u00a0", rule60, "  ? for shortcuts · ← for agents"},
			reading{busy: true, found: true}},
		{"claude queued message", "claude", func() *engine {
			e := busyEngine("claude", time.Second)
			e.queue = []string{"queued while busy\nsecond line"}
			return e
		}, []string{"· Skedaddling…", "", "  ❯ queued while busy", rule60, "❯\u00a0\x1b[2mPress up to edit queued messages\x1b[22m", rule60, "  esc to interrupt · ← for agents"},
			reading{busy: true, found: true}},
		{"claude typed input with a tab", "claude", func() *engine {
			e := idleEngine("claude")
			e.setInput("a\tb\nc")
			return e
		}, []string{rule60, "❯\u00a0a    b", "  c", rule60, "  ? for shortcuts · ← for agents"},
			reading{found: true, input: "a    b\nc"}},
		{"claude permission dialog hides the box and the spinner", "claude", func() *engine {
			e := busyEngine("claude", time.Second)
			e.openPermission("rm -rf build")
			return e
		}, []string{"  ⎿  Waiting…", "", rule60, " Bash command", "", "   rm -rf build", "   Run rm -rf build", "", " Do you want to proceed?",
			" ❯ 1. Yes", "   2. Yes, and always allow access to mockagents/ from this project", "   3. No", "", " Esc to cancel · Tab to amend · ctrl+e to explain"},
			reading{dialog: true}},
		{"codex idle", "codex", func() *engine { return idleEngine("codex") },
			[]string{"› Ask Codex to do anything", "", "  x default · " + cwd, "  ← for agents · ? for shortcuts"},
			reading{found: true}},
		{"codex busy, bullet frame", "codex", func() *engine { return busyEngine("codex", time.Second) },
			[]string{"• Working (1s • esc to interrupt)", "", "› Ask Codex to do anything", "", "  x default · " + cwd, "  ← for agents · ? for shortcuts"},
			reading{busy: true, found: true}},
		{"codex busy, hollow frame", "codex", func() *engine {
			e := busyEngine("codex", 64*time.Second)
			e.frame = 1
			return e
		}, []string{"◦ Working (1m 04s • esc to interrupt)", "", "› Ask Codex to do anything", "", "  x default · " + cwd, "  ← for agents · ? for shortcuts"},
			reading{busy: true, found: true}},
		{"codex queued follow-ups and typed text", "codex", func() *engine {
			e := busyEngine("codex", time.Second)
			e.queue = []string{"later"}
			e.setInput("more")
			return e
		}, []string{"• Working (1s • esc to interrupt)", "", "• Queued follow-up inputs", "  ↳ later", "    shift+← edit last queued message", "", "› more", "  tab to queue message", "", "  x default · " + cwd, "  ← for agents · ? for shortcuts"},
			reading{busy: true, found: true, input: "more"}},
		{"codex approval hides the busy line and the input", "codex", func() *engine {
			e := busyEngine("codex", time.Second)
			e.openPermission("rm -rf build")
			return e
		}, []string{"  Would you like to run the following command?", "", "  Environment: local", "", "  Reason: the script asked for it", "", "  $ rm -rf build", "",
			"› 1. Yes, proceed (y)", "  2. Yes, and don't ask again for commands that start with `rm -rf build` (p)", "  3. No, and tell Codex what to do differently (esc)",
			"", "  Press enter to confirm or esc to cancel"},
			reading{dialog: true}},
		{"gemini idle", "gemini", func() *engine { return idleEngine("gemini") },
			geminiLive("", " >   Type your message or @path/to/file"),
			reading{found: true}},
		{"gemini typed", "gemini", func() *engine {
			e := idleEngine("gemini")
			e.setInput("one\ntwo")
			return e
		}, append(geminiLive("", " > one")[:5], "   two", ""),
			reading{found: true, input: "one\ntwo"}},
		{"gemini busy", "gemini", func() *engine {
			e := busyEngine("gemini", time.Second)
			e.frame = 3
			return e
		}, geminiLive(" ⠸ Thinking... (esc to cancel, 1s)", " >   Type your message or @path/to/file"),
			reading{busy: true, found: true}},
		{"gemini busy a minute", "gemini", func() *engine { return busyEngine("gemini", 64*time.Second) },
			geminiLive(" ⠋ Thinking... (esc to cancel, 1m 4s)", " >   Type your message or @path/to/file"),
			reading{busy: true, found: true}},
		{"gemini queued above the spinner", "gemini", func() *engine {
			e := busyEngine("gemini", time.Second)
			e.queue = []string{"two"}
			return e
		}, append([]string{"  Queued (press ↑ to edit):", "    two"}, geminiLive(" ⠋ Thinking... (esc to cancel, 1s)", " >   Type your message or @path/to/file")...),
			reading{busy: true, found: true}},
		{"gemini slash menu", "gemini", func() *engine {
			e := idleEngine("gemini")
			e.setInput("/he")
			return e
		}, geminiLive("", " > /he", " help    For help on gemini-cli", " theme   Change the theme"),
			reading{found: true, input: "/he", menu: true}},
		{"gemini tool confirmation box hides the input and the spinner", "gemini", func() *engine {
			e := busyEngine("gemini", time.Second)
			e.openPermission("rm -rf build")
			return e
		}, nil, reading{dialog: true}},
		{"gemini API-key box", "gemini", func() *engine {
			e := idleEngine("gemini")
			e.p.(*gemini).apiKeyBox()
			return e
		}, nil, reading{dialog: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.setup()
			live := e.live()
			if tt.persona == "gemini" && e.dialog == nil {
				footer := e.p.(*gemini).footer()
				require.Equal(t, footer, live[len(live)-len(footer):], "gemini's footer ends the screen")
				live = live[:len(live)-len(footer)]
			}
			if tt.want != nil {
				assert.Equal(t, tt.want, live)
			}
			screen := strings.Join(append([]string{"earlier history"}, e.live()...), "\n")
			assert.Equal(t, tt.read, read(agent.Kind(tt.persona), stripSGR(screen)), "%s", screen)
		})
	}
}

// geminiLive is gemini's live region above the footer: the status line
// (with "? for shortcuts" on the right), the rule, the hint, the input and
// what comes under it.
func geminiLive(status, input string, under ...string) []string {
	hint := "? for shortcuts"
	return append([]string{status + strings.Repeat(" ", 60-width(status)-width(hint)-1) + hint, rule60,
		" Shift+Tab to accept edits", "", input, ""}, under...)
}

// stripSGR removes colour sequences, as tmux capture-pane without -e does.
func stripSGR(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestGeminiBoxes(t *testing.T) {
	e := idleEngine("gemini")
	e.openPermission("rm -rf build")
	live := e.live()
	joined := strings.Join(live, "\n")
	assert.True(t, strings.HasPrefix(live[0], "╭") && strings.HasPrefix(live[len(live)-1], "╰"), "a box:\n%s", joined)
	for _, want := range []string{"│ Allow execution of [Shell]?", "│ ● 1. Allow once", "│   2. Allow for this session", "│   3. No, suggest changes (esc)"} {
		assert.Contains(t, joined, want)
	}
	assert.NotContains(t, joined, " > ", "no input line while the box is up")

	e = idleEngine("gemini")
	e.opt.TrustDialog = true
	e.start()
	joined = strings.Join(e.live(), "\n")
	assert.Contains(t, joined, "│ ● 1. Trust folder (")
	assert.Contains(t, joined, "│   3. Don't trust")

	e.p.(*gemini).authDialog()
	assert.Contains(t, strings.Join(e.live(), "\n"), "│   ● 2. Use Gemini API Key")
	e.p.(*gemini).apiKeyBox()
	assert.Contains(t, strings.Join(e.live(), "\n"), "│ Enter Gemini API Key")
}

func TestDurations(t *testing.T) {
	for _, tt := range []struct {
		d                     time.Duration
		claude, codex, gemini string
	}{
		{6 * time.Second, "6s", "6s", "6s"},
		{64 * time.Second, "1m 4s", "1m 04s", "1m 4s"},
		{3723 * time.Second, "1h 2m 3s", "1h 02m 03s", "1h 2m 3s"},
	} {
		assert.Equal(t, tt.claude, claudeDur(tt.d))
		assert.Equal(t, tt.codex, codexDur(tt.d))
		assert.Equal(t, tt.gemini, geminiDur(tt.d))
	}
}
