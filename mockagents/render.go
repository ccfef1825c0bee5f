package mockagents

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"
)

var (
	claudeGlyphs = []string{"·", "✢", "✳", "✶", "✻", "✽", "*"}
	geminiGlyphs = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
)

const (
	// geminiPasteDelay is how long gemini shows a large paste before it
	// collapses into its placeholder.
	geminiPasteDelay = 500 * time.Millisecond
	// maxMenu is how many completions gemini shows at once.
	maxMenu = 8
	dimOn   = "\x1b[2m"
	dimOff  = "\x1b[22m"
)

// live is the bottom region of the screen: status, input and footer, or a
// dialog in place of all of them.
func (e *engine) live() []string {
	if !e.ready && !e.initPhase {
		return nil
	}
	if e.dialog != nil {
		return e.p.dialogLines(e.dialog)
	}
	return e.p.live()
}

// dialogBody is the dialog's title, text box, items (caret before the
// selected one) and what comes after; the persona frames it (dialogLines):
// claude with a ❯ caret (under a rule for a permission), codex with a ›
// caret, gemini in a box with ● on the selected item. The input box and
// the busy line are hidden meanwhile.
func (e *engine) dialogBody(d *dialog, caret string) []string {
	body := append([]string{}, d.title...)
	if d.textBox {
		in := string(d.text)
		if in == "" {
			in = "Paste your API key here"
		}
		body = append(body, box(min(e.w, 80)-4, clip(in, min(e.w, 80)-12))...)
	}
	for i, it := range d.items {
		mark := "  "
		if i == d.sel {
			mark = caret
		}
		body = append(body, fmt.Sprintf("%s%s%d. %s", d.indent, mark, i+1, it))
	}
	return append(body, d.after...)
}

// inputLines is the input as shown: pastes may collapse to a placeholder,
// only the last lines of a long input are shown, and an empty input may
// show a dim placeholder.
func (e *engine) inputLines() []string {
	var b strings.Builder
	for _, s := range e.input {
		if p := e.p.placeholder(s); p != "" {
			b.WriteString(p)
		} else {
			b.Write(s.text)
		}
	}
	b.WriteString(e.tail)
	if b.Len() == 0 {
		if empty := e.p.emptyInput(); empty != nil {
			return empty
		}
	}
	lines := strings.Split(strings.ReplaceAll(b.String(), "\t", "    "), "\n")
	if len(lines) > 6 {
		lines = append([]string{"…"}, lines[len(lines)-5:]...)
	}
	for i, l := range lines {
		lines[i] = clip(l, 4*max(e.w, 20))
	}
	return lines
}

// completion is one item of a completion menu (gemini's, claude's
// commands).
type completion struct {
	label, desc string
	slash       bool
	alias       string // claude: shown as "/label (alias)"
}

var geminiCommands = []completion{
	{"about", "Show version info", true, ""}, {"auth", "Change the auth method", true, ""}, {"bug", "Submit a bug report", true, ""},
	{"chat", "Manage conversation history", true, ""}, {"clear", "Clear the screen and conversation history", true, ""},
	{"compress", "Compresses the context by replacing it with a summary", true, ""},
	{"copy", "Copy the last result or code snippet to clipboard", true, ""}, {"directory", "Manage workspace directories", true, ""},
	{"docs", "Open full Gemini CLI documentation in your browser", true, ""}, {"editor", "Set external editor preference", true, ""},
	{"extensions", "List active extensions", true, ""}, {"help", "For help on gemini-cli", true, ""}, {"hooks", "Manage hooks", true, ""},
	{"ide", "Manage IDE integration", true, ""}, {"init", "Analyzes the project and creates a tailored GEMINI.md file", true, ""},
	{"mcp", "List configured MCP servers and tools", true, ""}, {"memory", "Commands for interacting with memory", true, ""},
	{"model", "Opens a dialog to configure the model", true, ""}, {"privacy", "Display the privacy notice", true, ""},
	{"quit", "Exit the cli", true, ""}, {"restore", "Restore a tool call", true, ""}, {"settings", "View and edit Gemini CLI settings", true, ""},
	{"stats", "Check session stats", true, ""}, {"theme", "Change the theme", true, ""}, {"tools", "List available Gemini CLI tools", true, ""},
	{"vim", "Toggle vim mode on/off", true, ""},
}

// completions is the completion menu for the word under the cursor (the
// end of the input), and where the completed part of the input starts:
//   - claude: its commands while the input is one word starting with /
//     (PARTY_MOCK_SLASH), files for a last word starting with @;
//   - codex: files for a last word starting with @, skills for a last word
//     $lowercase (none: a "no matches" popup, see noMatch);
//   - gemini: its commands while the input is one word starting with /,
//     files and agents for a last word holding @.
func (e *engine) completions() (items []completion, start int) {
	if e.dialog != nil || e.menuOff || !e.ready {
		return nil, 0
	}
	return e.p.completions(e.inputText())
}

var (
	// codexSkillWord is a word that opens codex's skill popup ($5 and
	// $HOME do not).
	codexSkillWord = regexp.MustCompile(`^\$[a-z][a-z0-9_-]*$`)
	codexSkills    = []completion{{label: "imagegen", desc: "Image Gen [Skill] Generate images"}}
	// noMatch is codex's popup with nothing in it: Enter does nothing.
	noMatch = completion{desc: "no matches"}
)

// fileCompletions are the working directory's entries starting with
// prefix (case does not count), after gemini's agent.
func fileCompletions(prefix string, agent bool) (items []completion) {
	var cands []completion
	if agent {
		cands = append(cands, completion{label: "codebase_investigator", desc: "[Agent]"})
	}
	if entries, err := os.ReadDir("."); err == nil {
		var names []string
		for _, en := range entries {
			if n := en.Name(); !strings.HasPrefix(n, ".") {
				if en.IsDir() {
					n += "/"
				}
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			cands = append(cands, completion{label: n})
		}
	}
	prefix = strings.ToLower(prefix)
	for _, c := range cands {
		if strings.HasPrefix(strings.ToLower(c.label), prefix) {
			items = append(items, c)
		}
	}
	return items
}

// complete puts the completion c into the input in place of what starts
// at start. A command is then submitted (false: the caller goes on with
// Enter); a path, agent or skill stays in the input (true): claude and
// gemini insert @path, codex the bare path ("read @READ" → "read
// README.md") or $skill.
func (e *engine) complete(c completion, start int) bool {
	switch {
	case c.slash:
		e.setInput("/" + c.label)
		return false
	case c == noMatch:
	default:
		e.p.complete(c, e.inputText(), start)
	}
	return true
}

// menuLines draws the completion menu: under the input (gemini, codex)
// or in the footer's place (claude); the persona draws it, or else it is
// the plain list, scrolled, with ▲ ▼ and a count (gemini).
func (e *engine) menuLines() []string {
	items, _ := e.completions()
	if len(items) == 0 {
		return nil
	}
	off := max(0, e.menuSel-maxMenu+1)
	end := min(len(items), off+maxMenu)
	col := 0
	for _, c := range items {
		col = max(col, width(c.label))
	}
	if out := e.p.menuLines(items, off, end, col); out != nil {
		return out
	}
	var out []string
	if off > 0 {
		out = append(out, " ▲")
	}
	for _, c := range items[off:end] {
		l := " " + c.label
		if c.desc != "" {
			l += strings.Repeat(" ", col-width(c.label)+3) + c.desc
		}
		out = append(out, clip(l, max(e.w, 20)-2))
	}
	if end < len(items) {
		out = append(out, " ▼")
	}
	if len(items) > maxMenu {
		out = append(out, fmt.Sprintf(" (%d/%d)", e.menuSel+1, len(items)))
	}
	return out
}

// draw writes the screen: new history lines above the live region (inline),
// or the whole screen (alternate screen).
func (e *engine) draw() {
	if e.opt.Replay != nil {
		return // the recording draws the screen
	}
	var b strings.Builder
	live := e.live()
	if e.opt.AltScreen {
		b.WriteString("\x1b[H\x1b[2J")
		room := e.h - rows(live, e.w)
		var top []string
		for i := len(e.history) - 1; i >= 0 && room > 0; i-- {
			room -= rows([]string{e.history[i]}, e.w)
			if room >= 0 {
				top = append([]string{e.history[i]}, top...)
			}
		}
		b.WriteString(strings.Join(append(top, live...), "\r\n"))
		_, _ = io.WriteString(e.out, b.String())
		return
	}
	b.WriteString("\r")
	if e.liveRows > 1 {
		fmt.Fprintf(&b, "\x1b[%dA", e.liveRows-1)
	}
	b.WriteString("\x1b[J")
	for _, l := range e.history[e.printed:] {
		b.WriteString(l + "\r\n")
	}
	e.printed = len(e.history)
	b.WriteString(strings.Join(live, "\r\n"))
	e.liveRows = rows(live, e.w)
	_, _ = io.WriteString(e.out, b.String())
}

// rows is how many terminal rows lines take at width w.
func rows(lines []string, w int) int {
	if w <= 0 {
		w = 80
	}
	n := 0
	for _, l := range lines {
		n += max(1, (width(l)+w-1)/w)
	}
	return n
}

// width is the display width of s: wide (CJK, emoji) runes take two cells,
// escape sequences none.
func width(s string) int {
	n := 0
	esc := false
	for _, r := range s {
		switch {
		case esc:
			esc = r < 0x40 || r > 0x7e || r == '['
		case r == 0x1b:
			esc = true
		case r < 0x20:
		case unicode.Is(unicode.Han, r), unicode.Is(unicode.Hangul, r), unicode.Is(unicode.Hiragana, r),
			unicode.Is(unicode.Katakana, r), r >= 0x1F300 && r <= 0x1FAFF, r >= 0xFF00 && r <= 0xFF60:
			n += 2
		default:
			n++
		}
	}
	return n
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
