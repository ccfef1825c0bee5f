package mockagents

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// persona is what one agent does its own way, and the state it keeps for
// it: its screens, its input quirks, how its turns start and end, its hooks
// and transcripts. The engine (engine.go) keeps what every agent shares —
// the screen, the input, the queue, the turn and the script — and calls
// its persona at each point where the agents differ. Every method runs on
// the engine's loop unless it says otherwise.
//
// The personas are claude (claude.go), codex (codex.go), gemini
// (gemini.go) and generic (this file), which also gives the others the
// behaviour they share with it (base).
type persona interface {
	// The screen.
	banner() []string                                                  // the history at start
	live() []string                                                    // status, queue, input and footer (no dialog open)
	userLines(lines []string) []string                                 // a submitted prompt in history
	answerLead() string                                                // before an answer's first line ("": the answer as it is)
	dialogLines(d *dialog) []string                                    // a dialog in place of the live region
	placeholder(s segment) string                                      // what the input shows for a paste ("": its text)
	emptyInput() []string                                              // what an empty input shows (nil: one empty line)
	toolLead(call string) (head, sub string)                           // a tool call in history, and the indent of its output
	shellEcho(lines []string)                                          // a shell command as it starts
	shellLines(cmd, body []string, failure string, err error) []string // a finished shell command

	// Completion menus.
	completions(text string) (items []completion, start int)
	complete(c completion, text string, start int)            // put a path or skill into the input
	menuLines(items []completion, off, end, col int) []string // nil: the plain list (gemini's)

	// Keys and submissions.
	boot()                  // the agent is starting (before the start delay)
	ready()                 // the start delay is over
	startDialogs() []func() // the dialogs that open at start
	trustDialog(d *dialog)  // fill in the trust dialog
	loseEnterAfterPaste() bool
	up() bool                   // Up with no menu or dialog; true: taken
	esc() bool                  // Esc with no menu or dialog; true: taken
	pasted(s segment) bool      // a paste ended; true: the persona put it into the input
	typed(now time.Time)        // a typed key
	tab()                       // Tab with no menu or dialog
	enter(now time.Time) bool   // Enter with no dialog; true: taken (nothing submitted)
	busyMode() string           // the log's mode of an Enter while busy
	trim(text string) string    // what is sent of a submitted text
	interpret(text string) bool // a shell command, a slash command, an exit word; true: taken
	killsNewline() bool         // Ctrl-U at a line start deletes the newline before it
	bangInput() bool            // the input is a ! shell command as shown

	// Turns.
	beginTurn(msgs []string, user bool, resume func()) bool // true: resume is called when the hooks are done
	sent(msgs []string)                                     // the user's messages went to the model (after those hooks)
	steered(text string)                                    // a message added to the running turn
	said(text string)                                       // the model said text
	responded(r modelResponse)                              // a model response ended (before its tool runs, or before endTurn)
	toolRunner(name string, input map[string]any) func(do func() (string, error)) (out, deny string, err error)
	toolDone(out string, err error, deny string) // a write or run tool is done (deny: a hook stopped it)
	permission(cmd string)
	permissionDialog(cmd string, d *dialog)
	answered(allowed bool, cmd string) // the permission dialog was answered
	fail(kind string, code int)
	interrupt()
	interruptible() bool                            // Esc would interrupt the turn now
	endTurn(answer string) (waiting bool)           // true: finish is called later
	summary(took time.Duration)                     // the end of a turn in history
	takeQueue(queue []string) (msgs, rest []string) // what of the queue the next turn takes
	shellDone(cmd, out string)                      // a shell command finished
}

// newPersona is the persona of e's options.
func newPersona(e *engine) persona {
	b := base{e}
	switch e.opt.Persona {
	case "claude":
		return newClaude(b)
	case "codex":
		return newCodex(b)
	case "gemini":
		return &gemini{base: b, chat: newGeminiChat(e.hooks.session)}
	}
	return &generic{base: b}
}

// generic is the mock's own plain TUI, for any other program name.
type generic struct{ base }

// base is the behaviour every persona starts from: the generic TUI's, and
// what the others share with it. A persona overrides what it does its own
// way.
type base struct{ e *engine }

func (b base) banner() []string { return []string{"mock agent ready"} }

func (b base) live() []string {
	e := b.e
	var out []string
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
	return out
}

func (b base) userLines(lines []string) []string { return prefixed(lines, "mock> ", "      ") }

func (b base) answerLead() string { return "" }

func (b base) dialogLines(d *dialog) []string {
	return b.e.framedDialog(d, "❯ ")
}

// framedDialog is d with caret on the selected item, under its lead lines
// and its rule (claude, codex).
func (e *engine) framedDialog(d *dialog, caret string) []string {
	body := e.dialogBody(d, caret)
	if d.rule {
		body = append([]string{strings.Repeat("─", max(e.w, 10))}, body...)
	}
	return append(append([]string{}, d.lead...), body...)
}

func (b base) placeholder(segment) string { return "" }
func (b base) emptyInput() []string       { return nil }

func (b base) toolLead(call string) (string, string) {
	return "• Ran " + strings.TrimSuffix(strings.TrimPrefix(call, "Bash("), ")"), "  └ "
}

func (b base) shellEcho([]string) {}

func (b base) shellLines(cmd, body []string, failure string, _ error) []string {
	lines := append([]string{"$ " + strings.Join(cmd, "; ")}, indented(body, failure, "", "  ", "  ")...)
	return append(lines, "")
}

func (b base) completions(string) ([]completion, int) { return nil, 0 }
func (b base) complete(c completion, text string, start int) {
	b.e.setInput(text[:start] + "@" + c.label + " ")
}
func (b base) menuLines([]completion, int, int, int) []string { return nil }

func (b base) boot()                  {}
func (b base) ready()                 {}
func (b base) startDialogs() []func() { return nil }

func (b base) trustDialog(*dialog) {}

func (b base) loseEnterAfterPaste() bool { return false }
func (b base) up() bool                  { return false }
func (b base) esc() bool                 { return false }
func (b base) pasted(segment) bool       { return false }
func (b base) typed(time.Time)           {}
func (b base) tab()                      {}
func (b base) enter(time.Time) bool      { return false }
func (b base) busyMode() string          { return "queued" }
func (b base) trim(text string) string   { return text }
func (b base) interpret(string) bool     { return false }
func (b base) killsNewline() bool        { return true }
func (b base) bangInput() bool           { return false }

func (b base) beginTurn([]string, bool, func()) bool { return false }
func (b base) sent([]string)                         {}
func (b base) steered(string)                        {}
func (b base) said(string)                           {}
func (b base) responded(modelResponse)               {}
func (b base) toolDone(string, error, string)        {}

func (b base) toolRunner(string, map[string]any) func(do func() (string, error)) (string, string, error) {
	return func(do func() (string, error)) (string, string, error) {
		out, err := do()
		return out, "", err
	}
}

func (b base) permission(cmd string) { b.e.openPermission(cmd) }

func (b base) permissionDialog(cmd string, d *dialog) {
	b.e.addHistory("● Bash(" + cmd + ")")
	d.lead = []string{"  ⎿  Waiting…", ""}
	d.rule = true
	d.title = []string{" Bash command", "", "   " + cmd, "   Run " + cmd, "", " Do you want to proceed?"}
	d.items = []string{"Yes", "Yes, and always allow access to " + filepath.Base(workDir()) + "/ from this project", "No"}
	d.indent = " "
	d.after = []string{"", " Esc to cancel · Tab to amend · ctrl+e to explain"}
}

func (b base) answered(allowed bool, _ string) {
	if !allowed {
		b.e.addHistory("  ⎿  Interrupted · What should Claude do instead?", "")
	}
}

func (b base) fail(kind string, _ int) { b.e.addHistory("API Error: " + kind) }
func (b base) interrupt()              { b.e.addHistory("interrupted") }
func (b base) interruptible() bool     { return true }
func (b base) endTurn(string) bool     { return false }
func (b base) summary(time.Duration)   {}

func (b base) takeQueue(q []string) ([]string, []string) { return q[:1], q[1:] }

func (b base) shellDone(string, string) {}

// prefixed is lines with lead before the first and cont before the others.
func prefixed(lines []string, lead, cont string) []string {
	out := make([]string, 0, len(lines)+2)
	for i, l := range lines {
		if i == 0 {
			out = append(out, lead+l)
		} else {
			out = append(out, cont+l)
		}
	}
	return out
}

// indented is a shell command's output (with its failure last) as the
// agents print it: first before the first line, rest before the others,
// empty when there is nothing.
func indented(body []string, failure, empty, first, rest string) []string {
	if failure != "" {
		body = append(body, failure)
	}
	if len(body) == 0 {
		body = []string{empty}
	}
	return prefixed(body, first, rest)
}

// workDir is the working directory, as the agents show it.
func workDir() string {
	d, _ := os.Getwd()
	return d
}
