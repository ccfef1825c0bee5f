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
// sending it to the model — each persona's interpret decides (claude.go,
// codex.go, gemini.go) and this file holds what they run: shell commands
// (claude's bash mode, codex's !, gemini's shell mode), claude's slash
// commands and its /cost panel, codex's and gemini's command names — and
// the trailing-\ newline and Ctrl-U. Gemini's slow start is in gemini.go.
// As measured on the pinned agents (docs/agents-reference.md §3, with the
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
	e.p.shellEcho(lines)
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
			e.p.shellDone(cmd, string(out))
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
	failure := ""
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		failure = "Error: Exit code " + strconv.Itoa(ee.ExitCode())
	case err != nil:
		failure = "Error: " + err.Error()
	}
	return e.p.shellLines(cmd, body, failure, err)
}

// exitCode is the exit status of a failed command, -1 when it did not
// run.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
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

// geminiKnows reports whether name is one of gemini's commands.
func geminiKnows(name string) bool {
	for _, c := range geminiCommands {
		if c.label == name {
			return true
		}
	}
	return name == "exit"
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
		if e.p.placeholder(*last) != "" {
			if !deleted {
				e.input = e.input[:n-1]
			}
			return
		}
		for len(last.text) > 0 {
			_, size := utf8.DecodeLastRune(last.text)
			if last.text[len(last.text)-1] == '\n' {
				if !deleted && e.p.killsNewline() {
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
