package mockagents

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// The input quirks: what an agent reads in a submitted text instead of
// sending it to the model (claude's and codex's ! shell and / commands,
// claude's bare exit), gemini's trailing-\ newline and what gemini does
// with keys while it still initializes, and the menus and Ctrl-U. As
// measured on the pinned agents (docs/agents-reference.md §3, with the
// literal-delivery measurements of 2026-11-23).

// geminiInitWindow is how long each of gemini's first two start phases
// lasts at most (measured: up to about 0.5 s each).
var geminiInitWindow = 500 * time.Millisecond

// claudeCommands are claude's slash commands the mock knows, in the order
// its menu lists them; only /usage (/cost) and /exit (/quit) do something.
var claudeCommands = []completion{
	{label: "usage", alias: "cost", desc: "Show session cost, plan usage, and activity stats"},
	{label: "context", desc: "Visualize current context usage as a colored grid"},
	{label: "resume", desc: "Resume a previous conversation"},
	{label: "clear", desc: "Start a new session with empty context; previous session stays on disk (resumable with /resume)"},
	{label: "compact", desc: "Free up context by summarizing the conversation so far"},
	{label: "model", desc: "Set the AI model for Claude Code"},
	{label: "add-dir", desc: "Add a new working directory"},
	{label: "agents", desc: "Manage agent configurations"},
	{label: "config", desc: "Open config panel"},
	{label: "doctor", desc: "Diagnose and verify your Claude Code installation and settings"},
	{label: "effort", desc: "Set the effort level"},
	{label: "exit", alias: "quit", desc: "Exit the REPL"},
	{label: "export", desc: "Export the current conversation to a file or clipboard"},
	{label: "help", desc: "Show help and available commands"},
	{label: "hooks", desc: "Manage hook configurations for tool events"},
	{label: "init", desc: "Initialize a new CLAUDE.md file with codebase documentation"},
	{label: "mcp", desc: "Manage MCP servers"},
	{label: "memory", desc: "Edit Claude memory files"},
	{label: "permissions", desc: "Manage allow & deny tool permission rules"},
	{label: "review", desc: "Review a pull request"},
	{label: "status", desc: "Show Claude Code status including version, model, account, and connectivity"},
}

// claudeCompletions is claude's command menu while the input is one word
// starting with /: the commands whose name or alias starts with the word,
// then those holding it.
func (e *engine) claudeCompletions() []completion {
	text := e.inputText()
	if !strings.HasPrefix(text, "/") || strings.ContainsAny(text, " \t\n") || strings.Contains(text[1:], "/") {
		return nil
	}
	w := text[1:]
	var items, more []completion
	for _, c := range claudeCommands {
		c.slash = true
		switch {
		case strings.HasPrefix(c.label, w) || c.alias != "" && strings.HasPrefix(c.alias, w):
			items = append(items, c)
		case strings.Contains(c.label, w):
			more = append(more, c)
		}
	}
	return append(items, more...)
}

// codexCommands are codex's slash commands the mock knows by name; only
// /quit and /exit do something.
var codexCommands = map[string]bool{
	"approvals": true, "clear": true, "compact": true, "diff": true, "exit": true, "feedback": true, "init": true,
	"logout": true, "mcp": true, "mention": true, "model": true, "new": true, "permissions": true, "quit": true,
	"resume": true, "review": true, "status": true,
}

// slashName is the command word of text when text starts with / (no space
// before it): ok is false for a bare / and for a path (/usr/bin/x), which
// the agents send as a prompt.
func slashName(text string) (name string, ok bool) {
	if !strings.HasPrefix(text, "/") {
		return "", false
	}
	name = text[1:]
	if i := strings.IndexAny(name, " \t\n"); i >= 0 {
		name = name[:i]
	}
	return name, name != "" && !strings.Contains(name, "/")
}

// interpret takes a submitted input that is not a prompt: a shell command,
// a slash command, an exit word. It reports whether it took the input.
func (e *engine) interpret() bool {
	if e.opt.Replay != nil {
		return false
	}
	text := e.inputText()
	switch e.opt.Persona {
	case "claude":
		// A space before ! or / makes the text a prompt; trailing
		// whitespace does not count.
		if e.opt.Bang && strings.HasPrefix(text, "!") {
			e.setInput("")
			e.fresh = false
			e.runShell(strings.TrimSpace(text[1:]))
			return true
		}
		if w := strings.TrimSpace(text); e.opt.ExitWords && (w == "exit" || w == "quit" || w == ":q") {
			e.setInput("")
			e.logEntry("command", text)
			e.quit(0)
			return true
		}
		if name, ok := slashName(text); ok && e.opt.Slash {
			if items, _ := e.completions(); len(items) > 0 {
				name = items[e.menuSel].label // Enter picks the highlighted command
			}
			e.setInput("")
			e.fresh = false
			e.logEntry("command", text)
			e.claudeCommand(name, strings.TrimSpace(text))
			return true
		}
	case "codex":
		// Codex trims what it sends, but a space before ! or / makes the
		// text a prompt (sent trimmed: "!cmd").
		if e.opt.Bang && strings.HasPrefix(text, "!") {
			e.setInput("")
			e.runShell(strings.TrimSpace(text[1:]))
			return true
		}
		if name, ok := slashName(text); ok && e.opt.Slash {
			if !codexCommands[name] {
				// Refused: the text stays in the input with the cursor
				// before it, so what comes next is put in front of it (and
				// Ctrl-U, which clears before the cursor, clears nothing).
				e.addHistory("• Unrecognized command '/"+name+"'. Type \"/\" for a list of supported commands.", "")
				e.inputChanged()
				e.input, e.tail = nil, text
				return true
			}
			e.setInput("")
			e.logEntry("command", text)
			if name == "quit" || name == "exit" {
				e.quit(0)
				return true
			}
			e.addHistory("• /"+name+" (not modelled by the mock)", "")
			return true
		}
	case "gemini":
		if e.shellMode && !e.initPhase { // while initializing it is queued
			e.setInput("")
			e.runShell(strings.TrimSpace(text))
			return true
		}
		if name, ok := slashName(strings.TrimSpace(text)); ok && e.opt.Slash && geminiKnows(name) {
			// Gemini trims first: a space before the / does not count. An
			// unknown /word is a prompt.
			e.setInput("")
			e.logEntry("command", text)
			e.geminiCommand(name)
			return true
		}
	}
	return false
}

// claudeCommand runs claude's slash command: /cost (/usage) opens the
// settings panel, /exit and /quit quit, another known one does nothing,
// an unknown one is refused with the input cleared.
func (e *engine) claudeCommand(name, text string) {
	switch {
	case name == "cost" || name == "usage":
		e.usagePanel(text)
	case name == "exit" || name == "quit":
		e.quit(0)
	case claudeKnows(name):
		e.addHistory("❯ "+text, "  ⎿  (not modelled by the mock)", "")
	default:
		e.addHistory("● Unknown command: /"+name, "")
	}
}

func claudeKnows(name string) bool {
	for _, c := range claudeCommands {
		if c.label == name || c.alias == name {
			return true
		}
	}
	return false
}

// usagePanel is claude's settings panel on its Usage tab, as /cost opens
// it: it takes the place of the input and swallows every key until Esc.
func (e *engine) usagePanel(text string) {
	wall := claudeDur(time.Since(e.startedAt))
	e.dialog = &dialog{
		panel: true,
		lead:  []string{"❯ " + text, ""},
		rule:  true,
		title: []string{ // as golden/screens/claude@2.1.197/panel-cost.txt
			"  Settings  Status   Config   Usage   Stats", "",
			"  Session", "",
			"  Total cost:            $0.0000",
			"  Total duration (API):  0s",
			"  Total duration (wall): " + wall,
			"  Total code changes:    0 lines added, 0 lines removed",
			"  Usage by model:",
			"       claude-mock:  0 input, 0 output, 0 cache read, 0 cache write ($0.0000)", "",
			"  Esc to cancel",
		},
		no: -1,
		cancel: func() {
			e.addHistory("❯ /usage", "  ⎿  Settings dialog dismissed", "")
		},
	}
}

// runShell runs cmd (every line of it) with sh -c in the working
// directory, as claude's bash mode, codex's ! and gemini's shell mode do:
// no prompt is sent, the log says mode "shell". Claude then sends the
// command and its output to the model as a turn of its own (no echo, no
// UserPromptSubmit). The command is killed if the agent exits first.
func (e *engine) runShell(cmd string) {
	e.logEntry("shell", cmd)
	e.shell(cmd)
}

// shell runs cmd as runShell does, without a log entry.
func (e *engine) shell(cmd string) {
	lines := strings.Split(cmd, "\n")
	switch e.opt.Persona {
	case "claude":
		e.addHistory("! " + lines[0])
		for _, l := range lines[1:] {
			e.addHistory("  " + l)
		}
	case "gemini":
		e.addHistory(" $ " + lines[0])
		for _, l := range lines[1:] {
			e.addHistory("   " + l)
		}
	}
	go func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-e.done:
				cancel()
			case <-ctx.Done():
			}
		}()
		c := exec.CommandContext(ctx, "sh", "-c", cmd)
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
		c.WaitDelay = time.Second
		out, err := c.CombinedOutput()
		f := func() {
			e.addHistory(e.shellLines(lines, string(out), err)...)
			if e.opt.Persona == "claude" && !e.busy {
				stdout := strings.TrimRight(string(out), "\n")
				if stdout == "" {
					stdout = "(Bash completed with no output)"
				}
				e.turn([]string{"<bash-input>" + cmd + "</bash-input>\n<bash-stdout>" + stdout + "</bash-stdout><bash-stderr></bash-stderr>"}, false)
			}
		}
		select {
		case e.events <- f:
		case <-e.done:
		}
	}()
}

// shellLines is how a finished shell command shows in history.
func (e *engine) shellLines(cmd []string, out string, err error) []string {
	var body []string // the output, at most 5 lines
	if out = strings.TrimRight(out, "\n"); out != "" {
		body = strings.Split(out, "\n")
	}
	if len(body) > 5 {
		body = append(body[:5], fmt.Sprintf("… +%d lines", len(body)-5))
	}
	code, failure := 0, ""
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code, failure = ee.ExitCode(), "Error: Exit code "+strconv.Itoa(ee.ExitCode())
	case err != nil:
		code, failure = -1, "Error: "+err.Error()
	}
	var lines []string
	indent := func(empty, first, rest string) {
		if failure != "" {
			body = append(body, failure)
		}
		if len(body) == 0 {
			body = []string{empty}
		}
		for i, l := range body {
			if i == 0 {
				lines = append(lines, first+l)
			} else {
				lines = append(lines, rest+l)
			}
		}
	}
	switch e.opt.Persona {
	case "claude":
		indent("(Bash completed with no output)", "  ⎿  ", "     ")
	case "codex":
		lines = append(lines, "• You ran "+cmd[0])
		for _, l := range cmd[1:] {
			lines = append(lines, "  │ "+l)
		}
		indent("(no output)", "  └ ", "    ")
		lines = append(lines, "  Worked for <1s • "+time.Now().Format("15:04"))
	case "gemini":
		// A box: ✓ or x, "Shell Command", the exit code, the output.
		in := []string{"✓  Shell Command " + strings.Join(cmd, " ")}
		if err != nil {
			in = []string{"x  Shell Command " + strings.Join(cmd, " "), "", "Command exited with code " + strconv.Itoa(code) + "."}
		}
		if len(body) > 0 {
			in = append(append(in, ""), body...)
		}
		return append(box(min(e.w, 80), in...), "")
	default:
		lines = append(lines, "$ "+strings.Join(cmd, "; "))
		indent("", "  ", "  ")
	}
	return append(lines, "")
}

// backslashNewline is gemini's Enter after a trailing \: the \ is removed
// and a newline inserted instead of submitting (a space after the \ turns
// it off).
func (e *engine) backslashNewline() bool {
	n := len(e.input)
	if !e.opt.Backslash || n == 0 || e.tail != "" || !bytes.HasSuffix(e.input[n-1].text, []byte(`\`)) {
		return false
	}
	last := &e.input[n-1]
	last.text = last.text[:len(last.text)-1]
	if len(last.text) == 0 {
		e.input = e.input[:n-1]
	}
	e.typeText("\n", false)
	return true
}

// endRawPhase ends the first third of gemini's initialization: the keys
// that waited are read one by one, as keys, not as a paste: Enter is lost,
// a ? opens the shortcuts help and takes the input typed so far with it, a
// ! in an empty (or blank) input switches shell mode. Measured: "why?
// !touch EARLY" then Enter left the help open and "touch EARLY" in the
// input in shell mode; a plain text was left in the input unsent.
func (e *engine) endRawPhase() {
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
				e.help = true
				e.setInput("")
			case r == '!' && strings.TrimSpace(e.inputText()) == "":
				e.shellMode = !e.shellMode
				e.setInput("")
			case r == '\n' || r == '\t' || r >= 0x20 && r != 0x7f:
				e.typeText(string(r), false)
			}
		}
	}
}

// endEnterLost ends the second third of gemini's initialization: Enter
// is taken again (measured: a paste 0.5 s after the prompt showed was in
// the input, its Enter lost).
func (e *engine) endEnterLost() { e.enterLost = false }

// geminiKnows reports whether name is one of gemini's commands.
func geminiKnows(name string) bool {
	for _, c := range geminiCommands {
		if c.label == name {
			return true
		}
	}
	return name == "exit"
}

// geminiCommand runs gemini's command: /help prints the help box, /quit
// (/exit) quits, another does nothing.
func (e *engine) geminiCommand(name string) {
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

// bangInput reports whether the input is a ! shell command as claude and
// codex show it: the ! becomes the prompt glyph.
func (e *engine) bangInput() bool {
	return e.opt.Bang && (e.opt.Persona == "claude" || e.opt.Persona == "codex") && strings.HasPrefix(e.inputText(), "!")
}

// killLine is Ctrl-U: with LineKill, as the real agents do, it deletes
// from the cursor (the end of the input before a refused command) to the
// start of the line; at a line start claude and codex delete the newline
// before it, gemini nothing; a paste shown as a placeholder goes at once.
// Without LineKill it clears everything before the cursor.
func (e *engine) killLine() {
	if len(e.input) == 0 {
		return
	}
	e.inputChanged()
	if !e.opt.LineKill {
		e.input = nil
		return
	}
	deleted := false
	for n := len(e.input); n > 0; n = len(e.input) {
		last := &e.input[n-1]
		if e.placeholder(*last) != "" {
			if !deleted {
				e.input = e.input[:n-1]
			}
			return
		}
		for len(last.text) > 0 {
			_, size := utf8.DecodeLastRune(last.text)
			if last.text[len(last.text)-1] == '\n' {
				if !deleted && e.opt.Persona != "gemini" {
					last.text = last.text[:len(last.text)-1]
					deleted = true
				}
				if len(last.text) == 0 {
					e.input = e.input[:n-1]
				}
				return
			}
			last.text = last.text[:len(last.text)-size]
			deleted = true
		}
		e.input = e.input[:n-1]
	}
}
