package mockagents

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
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
		return e.dialogLines()
	}
	var out []string
	switch e.opt.Persona {
	case "claude":
		if e.busy {
			out = append(out, e.claudeBusy(), "")
		}
		for _, q := range e.queue {
			out = append(out, "  ❯ "+clip(firstLine(q), 60))
		}
		rule := strings.Repeat("─", max(e.w, 10))
		out = append(out, rule)
		bang := e.bangInput()
		for i, l := range e.inputLines() {
			switch {
			case i == 0 && bang:
				out = append(out, "! "+strings.TrimPrefix(l, "!"))
			case i == 0:
				out = append(out, "❯\u00a0"+l)
			default:
				out = append(out, "  "+l)
			}
		}
		footer := []string{"  ? for shortcuts · ← for agents"}
		menu := e.menuLines()
		word, slash := slashName(e.inputText())
		switch {
		case len(menu) > 0:
			footer = menu // the command menu takes the footer's place
		case slash && e.opt.Slash && !strings.ContainsAny(e.inputText(), " \t\n"):
			footer = []string{`No commands match "/` + word + `"`}
		case e.busy && !e.opt.NoEscHint:
			footer = []string{"  esc to interrupt · ← for agents"}
		case bang:
			footer = []string{"  ! for shell mode"}
		}
		out = append(append(out, rule), footer...)
	case "codex":
		if e.busy {
			glyph := "•"
			if e.opt.Blink && e.frame%2 == 1 {
				glyph = "◦"
			}
			out = append(out, fmt.Sprintf("%s Working (%s • esc to interrupt)", glyph, codexDur(time.Since(e.busySince))), "")
		}
		if len(e.queue) > 0 {
			out = append(out, "• Queued follow-up inputs")
			for _, q := range e.queue {
				out = append(out, "  ↳ "+clip(firstLine(q), 60))
			}
			out = append(out, "    shift+← edit last queued message", "")
		}
		bang := e.bangInput()
		for i, l := range e.inputLines() {
			switch {
			case i == 0 && l == "" && e.inputText() == "":
				out = append(out, "› Ask Codex to do anything")
			case i == 0 && bang:
				out = append(out, "! "+strings.TrimPrefix(l, "!"))
			case i == 0:
				out = append(out, "› "+l)
			default:
				out = append(out, "  "+l)
			}
		}
		menu := e.menuLines()
		out = append(out, menu...)
		if e.busy && e.inputText() != "" && len(menu) == 0 {
			out = append(out, "  tab to queue message")
		}
		cwd, _ := os.Getwd()
		hints := "  ← for agents · ? for shortcuts"
		if bang {
			hints = strings.Repeat(" ", max(2, e.w-len("Shell mode")-1)) + "Shell mode"
		}
		out = append(out, "", "  x default · "+cwd, hints)
	case "gemini":
		if len(e.queue) > 0 {
			out = append(out, "  Queued (press ↑ to edit):")
			for _, q := range e.queue {
				out = append(out, "    "+clip(firstLine(q), 60))
			}
		}
		status := ""
		if e.busy {
			status = fmt.Sprintf(" %s Thinking... (esc to cancel, %s)", geminiGlyphs[e.frame%len(geminiGlyphs)], geminiDur(time.Since(e.busySince)))
		}
		hint := "? for shortcuts"
		mode := " Shift+Tab to accept edits"
		if e.shellMode {
			mode = "  shell mode enabled (esc to disable)"
		}
		rule := strings.Repeat("─", max(e.w, 10))
		out = append(out, status+strings.Repeat(" ", max(2, e.w-width(status)-width(hint)-1))+hint, rule)
		if e.help {
			col := max(e.w, 60) / 3
			row := func(a, b, c string) string {
				return " " + a + strings.Repeat(" ", max(2, col-width(a)-1)) + b + strings.Repeat(" ", max(2, col-width(b))) + c
			}
			out = append(out, " Shortcuts See /help for more",
				row("! shell mode", "Shift+Tab cycle mode", "Ctrl+V paste images"),
				row("@ select file or folder", "Ctrl+Y YOLO mode", "Alt+M raw markdown mode"),
				row("Double Esc clear & rewind", "Ctrl+R reverse-search history", "Ctrl+G open external editor"),
				" Tab focus UI", rule)
		}
		out = append(out, mode, "")
		for i, l := range e.inputLines() {
			switch {
			case i == 0 && l == "" && len(e.input) == 0 && e.shellMode:
				out = append(out, " !   Type your shell command")
			case i == 0 && l == "" && len(e.input) == 0:
				out = append(out, " >   Type your message or @path/to/file")
			case i == 0 && e.shellMode:
				out = append(out, " ! "+l)
			case i == 0:
				out = append(out, " > "+l)
			default:
				out = append(out, "   "+l)
			}
		}
		out = append(out, "")
		out = append(out, e.menuLines()...)
		out = append(out, e.geminiFooter()...)
	default:
		if e.busy {
			out = append(out, fmt.Sprintf("working… %ds", int(time.Since(e.busySince).Seconds())))
		}
		for _, q := range e.queue {
			out = append(out, "  queued: "+clip(firstLine(q), 60))
		}
		for i, l := range e.inputLines() {
			if i == 0 {
				out = append(out, "mock> "+l)
			} else {
				out = append(out, "      "+l)
			}
		}
	}
	return out
}

// claudeBusy is claude's busy line: a glyph, a random verb and "…", with
// no parenthesis until the first token or ParenAfter.
func (e *engine) claudeBusy() string {
	s := claudeGlyphs[e.frame%len(claudeGlyphs)] + " " + e.verb + "…"
	took := time.Since(e.busySince)
	switch {
	case e.stopping && e.stopTotal == 1:
		s += fmt.Sprintf(" (running stop hook · %s · ↓ %d tokens)", claudeDur(time.Since(e.stopSince)), e.tokens)
	case e.stopping:
		s += fmt.Sprintf(" (running stop hooks… %d/%d · %s)", e.stopDone, e.stopTotal, claudeDur(time.Since(e.stopSince)))
	case e.firstToken || took >= e.opt.ParenAfter:
		s += fmt.Sprintf(" (%s · ↓ %d tokens)", claudeDur(took), e.tokens)
	}
	return s
}

// dialogLines draws the dialog as the persona does: claude with a ❯ caret
// (under a rule for a permission), codex with a › caret, gemini in a box
// with ● on the selected item. The input box and the busy line are hidden
// meanwhile.
func (e *engine) dialogLines() []string {
	d := e.dialog
	body := append([]string{}, d.title...)
	if d.textBox {
		in := string(d.text)
		if in == "" {
			in = "Paste your API key here"
		}
		body = append(body, box(min(e.w, 80)-4, clip(in, min(e.w, 80)-12))...)
	}
	caret, pad := "❯ ", "  "
	switch e.opt.Persona {
	case "codex":
		caret = "› "
	case "gemini":
		caret = "● "
	}
	for i, it := range d.items {
		mark := pad
		if i == d.sel {
			mark = caret
		}
		body = append(body, fmt.Sprintf("%s%s%d. %s", d.indent, mark, i+1, it))
	}
	body = append(body, d.after...)
	if e.opt.Persona == "gemini" {
		return box(min(e.w, 80), body...)
	}
	if d.rule {
		body = append([]string{strings.Repeat("─", max(e.w, 10))}, body...)
	}
	return append(append([]string{}, d.lead...), body...)
}

// geminiFooter is gemini's footer under the input.
func (e *engine) geminiFooter() []string {
	dir, _ := os.Getwd()
	col := max(24, max(e.w, 40)/2)
	if width(dir) > col-3 {
		dir = "…/" + filepath.Base(dir)
	}
	row := func(a, b, c string) string {
		return " " + a + strings.Repeat(" ", max(2, col-width(a)-1)) + b + strings.Repeat(" ", max(2, col-width(b))) + c
	}
	return []string{row("workspace (/directory)", "sandbox", "/model"), row(dir, "no sandbox", "Auto")}
}

// inputLines is the input as shown: pastes may collapse to a placeholder,
// only the last lines of a long input are shown, and an empty input may
// show a dim placeholder.
func (e *engine) inputLines() []string {
	var b strings.Builder
	for _, s := range e.input {
		if p := e.placeholder(s); p != "" {
			b.WriteString(p)
		} else {
			b.Write(s.text)
		}
	}
	b.WriteString(e.tail)
	if b.Len() == 0 && e.opt.Persona == "claude" {
		switch {
		case len(e.queue) > 0:
			return []string{dimOn + "Press up to edit queued messages" + dimOff}
		case e.fresh && e.opt.TryHint:
			return []string{dimOn + `Try "how does <filepath> work?"` + dimOff}
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

// placeholder is how the input shows the paste s when the agent collapses
// it ("" when it shows the text).
func (e *engine) placeholder(s segment) string {
	if !s.paste {
		return ""
	}
	nl := bytes.Count(s.text, []byte("\n"))
	switch {
	case e.opt.Persona == "claude" && nl > 3:
		return fmt.Sprintf("[Pasted text #%d +%d lines]", s.n, nl)
	case e.opt.Persona == "claude" && len(s.text) >= 800:
		return fmt.Sprintf("[Pasted text #%d]", s.n)
	case e.opt.Persona == "codex" && utf8.RuneCount(s.text) > 1000:
		return fmt.Sprintf("[Pasted Content %d chars]", utf8.RuneCount(s.text))
	case e.opt.Persona == "gemini" && time.Since(s.at) >= geminiPasteDelay && nl+1 > 5:
		return fmt.Sprintf("[Pasted Text: %d lines]", nl+1)
	case e.opt.Persona == "gemini" && time.Since(s.at) >= geminiPasteDelay && utf8.RuneCount(s.text) > 500:
		return fmt.Sprintf("[Pasted Text: %d chars]", utf8.RuneCount(s.text))
	}
	return ""
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
	if e.dialog != nil || e.menuOff || !e.ready || e.shellMode {
		return nil, 0
	}
	text := e.inputText()
	if e.opt.Persona == "claude" && e.opt.Slash && strings.HasPrefix(text, "/") {
		return e.claudeCompletions(), 0
	}
	if !e.opt.Menus {
		return nil, 0
	}
	ws := strings.LastIndexAny(text, " \t\n") + 1
	word := text[ws:]
	switch e.opt.Persona {
	case "claude":
		if strings.HasPrefix(word, "@") {
			return fileCompletions(word[1:], false), ws
		}
	case "codex":
		switch {
		case strings.HasPrefix(word, "@"):
			return fileCompletions(word[1:], false), ws
		case codexSkillWord.MatchString(word):
			for _, c := range codexSkills {
				if strings.HasPrefix(c.label, word[1:]) {
					items = append(items, c)
				}
			}
			if len(items) == 0 {
				items = []completion{noMatch}
			}
			return items, ws
		}
	case "gemini":
		if strings.HasPrefix(text, "/") && !strings.ContainsAny(text, " \t\n") {
			// Commands starting with the word first, then those holding it.
			var more []completion
			for _, c := range geminiCommands {
				switch {
				case strings.HasPrefix(c.label, text[1:]):
					items = append(items, c)
				case strings.Contains(c.label, text[1:]):
					more = append(more, c)
				}
			}
			return append(items, more...), 0
		}
		if at := strings.LastIndex(word, "@"); at >= 0 {
			return fileCompletions(word[at+1:], true), ws + at
		}
	}
	return nil, 0
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
	text := e.inputText()
	switch {
	case c.slash:
		e.setInput("/" + c.label)
		return false
	case c == noMatch:
	case e.opt.Persona == "codex" && strings.HasPrefix(text[start:], "$"):
		e.setInput(text[:start] + "$" + c.label + " ")
	case e.opt.Persona == "codex":
		e.setInput(text[:start] + c.label + " ")
	default:
		e.setInput(text[:start] + "@" + c.label + " ")
	}
	return true
}

// menuLines draws the completion menu: under the input (gemini, codex)
// or in the footer's place (claude).
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
	var out []string
	switch {
	case e.opt.Persona == "codex":
		for _, c := range items[off:end] {
			l := "  " + c.label
			if c.desc != "" {
				l += strings.Repeat(" ", max(0, col-width(c.label))+2) + c.desc
			}
			out = append(out, clip(strings.TrimRight(l, " "), max(e.w, 20)-2))
		}
		if items[0] == noMatch {
			return append(out, "", "  enter insert · esc close")
		}
		return append(out, "", "  enter/tab insert · esc close · ↑/↓ select · ←/→ filter")
	case e.opt.Persona == "claude" && !items[0].slash:
		for _, c := range items[off:end] {
			out = append(out, "+ "+c.label)
		}
		return out
	case e.opt.Persona == "claude":
		// "/usage (cost)                 Show session cost, …", the
		// highlighted one first, no scroll marks.
		for _, c := range items[off:end] {
			l := "/" + c.label
			if c.alias != "" {
				l += " (" + c.alias + ")"
			}
			out = append(out, clip(l+strings.Repeat(" ", max(2, 30-width(l)))+c.desc, max(e.w, 20)-1))
		}
		return out
	}
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
