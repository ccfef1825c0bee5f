package mockagents

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// gemini is Gemini CLI: its boxes, its slow start (the prompt is up while
// it initializes), shell mode, the / and @ menus, Esc Esc, queued
// messages merged into one prompt, and its hooks (BeforeAgent,
// AfterAgent, Notification).
type gemini struct {
	base
	chat      *geminiChat // the session's chat file (geminichat.go)
	shellMode bool        // shell mode (a leading ! while initializing)
	help      bool        // the shortcuts help is open (a ? read while initializing)
	lastEsc   time.Time   // Esc Esc clears the input
}

func (g *gemini) banner() []string {
	return []string{"Gemini CLI (mock)", "", "Tips for getting started:", "1. Ask questions, edit files, or run commands.", ""}
}

func (g *gemini) live() []string {
	e := g.e
	var out []string
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
	if g.shellMode {
		mode = "  shell mode enabled (esc to disable)"
	}
	rule := strings.Repeat("─", max(e.w, 10))
	out = append(out, status+strings.Repeat(" ", max(2, e.w-width(status)-width(hint)-1))+hint, rule)
	if g.help {
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
		case i == 0 && l == "" && len(e.input) == 0 && g.shellMode:
			out = append(out, " !   Type your shell command")
		case i == 0 && l == "" && len(e.input) == 0:
			out = append(out, " >   Type your message or @path/to/file")
		case i == 0 && g.shellMode:
			out = append(out, " ! "+l)
		case i == 0:
			out = append(out, " > "+l)
		default:
			out = append(out, "   "+l)
		}
	}
	out = append(out, "")
	out = append(out, e.menuLines()...)
	return append(out, g.footer()...)
}

// footer is gemini's footer under the input.
func (g *gemini) footer() []string {
	dir := workDir()
	col := max(24, max(g.e.w, 40)/2)
	if width(dir) > col-3 {
		dir = "…/" + filepath.Base(dir)
	}
	row := func(a, b, c string) string {
		return " " + a + strings.Repeat(" ", max(2, col-width(a)-1)) + b + strings.Repeat(" ", max(2, col-width(b))) + c
	}
	return []string{row("workspace (/directory)", "sandbox", "/model"), row(dir, "no sandbox", "Auto")}
}

// userLines: a grey block, with a blank line on top.
func (g *gemini) userLines(lines []string) []string {
	return append(append([]string{""}, prefixed(lines, " > ", "   ")...), "")
}

func (g *gemini) answerLead() string { return "✦ " }

// dialogLines: a box, ● on the selected item.
func (g *gemini) dialogLines(d *dialog) []string {
	return box(min(g.e.w, 80), g.e.dialogBody(d, "● ")...)
}

// placeholder: a large paste collapses geminiPasteDelay after it ended.
func (g *gemini) placeholder(s segment) string {
	if !s.paste || time.Since(s.at) < geminiPasteDelay {
		return ""
	}
	switch nl := bytes.Count(s.text, []byte("\n")); {
	case nl+1 > 5:
		return fmt.Sprintf("[Pasted Text: %d lines]", nl+1)
	case utf8.RuneCount(s.text) > 500:
		return fmt.Sprintf("[Pasted Text: %d chars]", utf8.RuneCount(s.text))
	}
	return ""
}

func (g *gemini) toolLead(call string) (string, string) { return "✓  " + call, "   " }

func (g *gemini) shellEcho(lines []string) {
	g.e.addHistory(" $ " + lines[0])
	for _, l := range lines[1:] {
		g.e.addHistory("   " + l)
	}
}

// shellLines: a box with ✓ or x, "Shell Command", the exit code, the
// output.
func (g *gemini) shellLines(cmd, body []string, _ string, err error) []string {
	in := []string{"✓  Shell Command " + strings.Join(cmd, " ")}
	if err != nil {
		in = []string{"x  Shell Command " + strings.Join(cmd, " "), "", "Command exited with code " + strconv.Itoa(exitCode(err)) + "."}
	}
	if len(body) > 0 {
		in = append(append(in, ""), body...)
	}
	return append(box(min(g.e.w, 80), in...), "")
}

// completions: its commands while the input is one word starting with /,
// files and agents for a last word holding @; none in shell mode.
func (g *gemini) completions(text string) (items []completion, start int) {
	if g.shellMode || !g.e.opt.Menus {
		return nil, 0
	}
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
	ws := strings.LastIndexAny(text, " \t\n") + 1
	if at := strings.LastIndex(text[ws:], "@"); at >= 0 {
		return fileCompletions(text[ws+at+1:], true), ws + at
	}
	return nil, 0
}

// boot starts the slow start (InitPhase): keys wait, then an Enter is
// lost, each for a third of the delay but at most the 0.5 s measured;
// then submissions are queued until the delay is over.
func (g *gemini) boot() {
	e := g.e
	e.initPhase = e.opt.InitPhase && e.opt.StartDelay > 0 && !e.opt.TrustDialog && !e.opt.Auth
	if !e.initPhase {
		return
	}
	third := min(e.opt.StartDelay/3, geminiInitWindow)
	e.rawPhase = true
	e.later(third, g.endRawPhase)
	e.later(2*third, g.endEnterLost)
}

// ready sends what was queued while it initialized; in shell mode it runs
// as a shell command (logged as queued when it was submitted).
func (g *gemini) ready() {
	e := g.e
	if !e.initPhase {
		return
	}
	e.initPhase, e.enterLost = false, false
	switch {
	case len(e.queue) > 0 && g.shellMode:
		cmd := strings.Join(e.queue, "\n\n")
		e.queue = nil
		e.shell(cmd)
	case len(e.queue) > 0 && !e.busy:
		e.sendQueue()
	}
}

func (g *gemini) startDialogs() []func() {
	var ds []func()
	if g.e.opt.TrustDialog {
		ds = append(ds, g.e.trustDialog)
	}
	if g.e.opt.Auth {
		ds = append(ds, g.authDialog)
	}
	return ds
}

func (g *gemini) trustDialog(d *dialog) {
	cwd := workDir()
	d.title = []string{"", "Do you trust the files in this folder?", "", "Trusting a folder allows Gemini CLI to load its local configurations, including custom", "commands, hooks, MCP servers, agent skills, and settings.", "", ""}
	d.items = []string{"Trust folder (" + filepath.Base(cwd) + ")", "Trust parent folder (" + filepath.Base(filepath.Dir(cwd)) + ")", "Don't trust"}
	d.after = []string{""}
	d.no = -1
	d.choose = func(int) { g.e.nextStartup() }
}

// authDialog is the auth-method dialog; its second item opens the API-key
// box.
func (g *gemini) authDialog() {
	g.e.dialog = &dialog{
		title:  []string{"", "? Get started", "", "  How would you like to authenticate for this project?", ""},
		items:  []string{"Sign in with Google", "Use Gemini API Key", "Vertex AI"},
		indent: "  ",
		sel:    1,
		no:     -1,
		after:  []string{"", "  (Use Enter to select)", ""},
		choose: func(item int) {
			if item == 1 {
				g.apiKeyBox()
				return
			}
			g.e.nextStartup()
		},
	}
}

func (g *gemini) apiKeyBox() {
	g.e.dialog = &dialog{
		textBox: true,
		title: []string{"", "Enter Gemini API Key", "", "Please enter your Gemini API key. It will be securely stored in your system keychain.",
			"You can get an API key from https://aistudio.google.com/app/apikey", ""},
		after:  []string{"", "(Press Enter to submit, Esc to cancel, Ctrl+C to clear stored key)", ""},
		submit: func(string) { g.e.nextStartup() },
		cancel: g.authDialog,
	}
}

// esc closes the help, leaves shell mode, or (a second Esc within 500ms)
// clears the input; one Esc leaves the input alone.
func (g *gemini) esc() bool {
	e := g.e
	switch {
	case g.help:
		g.help = false
	case g.shellMode:
		g.shellMode = false
	case !e.busy && e.inputText() != "":
		if time.Since(g.lastEsc) < 500*time.Millisecond {
			e.setInput("")
			g.lastEsc = time.Time{}
		} else {
			g.lastEsc = time.Now()
		}
	default:
		return false
	}
	return true
}

// pasted: redraw when the placeholder shows.
func (g *gemini) pasted(segment) bool {
	g.e.later(geminiPasteDelay, func() {})
	return false
}

func (g *gemini) enter(now time.Time) bool {
	e := g.e
	if e.enterLost {
		return true // still initializing: the Enter is lost
	}
	if now.Sub(e.lastTyped) < 30*time.Millisecond || now.Sub(e.pasteEnd) < e.opt.PasteGuard {
		e.typeText("\n", false)
		return true
	}
	if items, word := e.completions(); len(items) > 0 {
		// Enter picks the highlighted completion: a command is run at
		// once, a path is put into the input.
		if e.complete(items[e.menuSel], word) {
			return true
		}
	}
	return e.backslashNewline()
}

func (g *gemini) trim(text string) string { return strings.TrimSpace(text) }

// interpret: shell mode runs the input (while initializing it is
// queued); a known command runs, trimmed first (a space before the / does
// not count); an unknown /word is a prompt.
func (g *gemini) interpret(text string) bool {
	e := g.e
	if g.shellMode && !e.initPhase {
		e.setInput("")
		e.runShell(strings.TrimSpace(text))
		return true
	}
	if name, ok := slashName(strings.TrimSpace(text)); ok && e.opt.Slash && geminiKnows(name) {
		e.setInput("")
		e.logEntry("command", text)
		g.command(name)
		return true
	}
	return false
}

// killsNewline: Ctrl-U at a line start deletes nothing (gemini never
// joins lines).
func (g *gemini) killsNewline() bool { return false }

func (g *gemini) beginTurn(_ []string, user bool, resume func()) bool {
	return user && g.e.hooks.gemini("BeforeAgent", map[string]any{"prompt": g.e.prompt}, resume)
}

// sent records the prompt in the chat file.
func (g *gemini) sent(msgs []string) { g.chat.user(msgs) }

// responded records the model's response in the chat file.
func (g *gemini) responded(r modelResponse) { g.chat.response(r) }

func (g *gemini) toolDone(out string, err error, deny string) {
	if err != nil {
		out = strings.TrimRight(out+"\n"+err.Error(), "\n")
	}
	g.chat.toolResult(out)
}

func (g *gemini) permissionDialog(cmd string, d *dialog) {
	d.title = append(append([]string{"? Shell  " + cmd}, box(min(g.e.w, 80)-4, cmd)...), "Allow execution of [Shell]?", "")
	d.items = []string{"Allow once", "Allow for this session", "No, suggest changes (esc)"}
	g.e.hooks.geminiPermission(cmd)
}

func (g *gemini) answered(allowed bool, _ string) {
	if !allowed {
		g.e.addHistory("ℹ Request cancelled.", "")
		return
	}
	g.chat.toolResult("(empty)")
}

// noResponse is AfterAgent after a failed or cancelled request.
func (g *gemini) noResponse() {
	g.e.hooks.gemini("AfterAgent", map[string]any{"prompt": g.e.prompt, "prompt_response": "[no response text]", "stop_hook_active": false}, func() {})
}

func (g *gemini) fail(kind string, code int) {
	g.e.addHistory(fmt.Sprintf(`✕ [API Error: {"error":{"code":%d,"message":"mock %s","status":%q}}]`, code, kind, strings.ToUpper(kind)), "",
		`ℹ This request failed. Press F12 for diagnostics, or run /settings and change "Error Verbosity" to full for full`, "  details.", "")
	g.noResponse()
}

// interrupt: measured on gemini 0.61, Esc before the answer runs
// AfterAgent with no response text, like a failed request; only the
// screen tells the two apart.
func (g *gemini) interrupt() {
	g.e.addHistory("ℹ Request cancelled.", "")
	g.noResponse()
}

// endTurn runs AfterAgent and waits for it.
func (g *gemini) endTurn(answer string) bool {
	e := g.e
	e.trace("after-agent")
	gen := e.gen
	return e.hooks.gemini("AfterAgent", map[string]any{"prompt": e.prompt, "prompt_response": answer, "stop_hook_active": false}, func() {
		e.events <- func() {
			if e.gen == gen {
				e.finish()
			}
		}
	})
}

// takeQueue: merged into one prompt (Merge).
func (g *gemini) takeQueue(q []string) ([]string, []string) {
	if g.e.opt.Merge {
		return []string{strings.Join(q, "\n\n")}, nil
	}
	return g.base.takeQueue(q)
}

// endRawPhase ends the first third of the initialization: the keys that
// waited are read one by one, as keys, not as a paste: Enter is lost, a ?
// opens the shortcuts help and takes the input typed so far with it, a !
// in an empty (or blank) input switches shell mode. Measured: "why?
// !touch EARLY" then Enter left the help open and "touch EARLY" in the
// input in shell mode; a plain text was left in the input unsent.
func (g *gemini) endRawPhase() {
	e := g.e
	if !e.rawPhase {
		return
	}
	e.rawPhase, e.enterLost = false, true
	early := e.early
	e.early = nil
	for _, c := range early {
		c = bytes.ReplaceAll(bytes.ReplaceAll(c, []byte("\x1b[200~"), nil), []byte("\x1b[201~"), nil)
		for _, r := range string(c) {
			switch {
			case r == '?':
				g.help = true
				e.setInput("")
			case r == '!' && strings.TrimSpace(e.inputText()) == "":
				g.shellMode = !g.shellMode
				e.setInput("")
			case r == '\n' || r == '\t' || r >= 0x20 && r != 0x7f:
				e.typeText(string(r), false)
			}
		}
	}
}

// endEnterLost ends the second third of the initialization: Enter is
// taken again (measured: a paste 0.5 s after the prompt showed was in the
// input, its Enter lost).
func (g *gemini) endEnterLost() { g.e.enterLost = false }

// command runs gemini's command: /help prints the help box, /quit
// (/exit) quits, another does nothing.
func (g *gemini) command(name string) {
	e := g.e
	switch name {
	case "quit", "exit":
		e.quit(0)
	case "help":
		e.addHistory(box(min(max(e.w, 40), 100),
			"Basics:",
			"Add context: Use @ to specify files for context (e.g., @src/myFile.ts) to target specific files or folders.",
			"Shell mode: Execute shell commands via ! (e.g., !npm run start) or use natural language.", "",
			"Commands:",
			" /help - For help on gemini-cli",
			" /quit - Exit the cli",
			" ! - shell command", "",
			"Keyboard Shortcuts:",
			"Esc - Cancel operation / Clear input (double press)",
			"For a full list of shortcuts, see https://geminicli.com/docs/cli/keyboard-shortcuts/")...)
		e.addHistory("")
	default:
		e.addHistory("ℹ /"+name+" (not modelled by the mock)", "")
	}
}
