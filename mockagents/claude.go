package mockagents

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"time"
	"unicode"
)

// claude is Claude Code: its box and busy line, its Enter quirks, bash
// mode, slash commands and exit words, its hooks (SessionStart,
// UserPromptSubmit, PreToolUse, PostToolUse, PermissionRequest,
// Notification, Stop, StopFailure) and its session transcript.
type claude struct {
	base
	verb       string      // the busy line's random verb
	promptIDs  []string    // the prompt_id of each message of the turn
	stopping   bool        // the Stop hooks are running
	stopDone   int         // how many of them are done
	stopTotal  int         // how many there are
	stopSince  time.Time   // when they began
	transcript *transcript // the session transcript (transcript.go)
}

func newClaude(b base) *claude {
	return &claude{base: b, transcript: newTranscript(b.e.hooks.session)}
}

// promptID is the turn's prompt_id: the last message's.
func (c *claude) promptID() string {
	if len(c.promptIDs) == 0 {
		return ""
	}
	return c.promptIDs[len(c.promptIDs)-1]
}

func (c *claude) banner() []string {
	cwd := workDir()
	w := min(c.e.w, 60)
	shown := cwd
	if len([]rune(cwd)) > w-12 {
		shown = "…/" + filepath.Base(cwd)
	}
	return append(box(w, "✻ Welcome to Claude Code (mock)!", "", "  cwd: "+shown), "")
}

func (c *claude) live() []string {
	e := c.e
	var out []string
	if e.busy {
		out = append(out, c.busyLine(), "")
	}
	for _, q := range e.queue {
		out = append(out, "  ❯ "+clip(firstLine(q), 60))
	}
	rule := strings.Repeat("─", max(e.w, 10))
	out = append(out, rule)
	bang := c.bangInput()
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
	return append(append(out, rule), footer...)
}

// busyLine is claude's busy line: a glyph, a random verb and "…", with
// no parenthesis until the first token or ParenAfter.
func (c *claude) busyLine() string {
	e := c.e
	s := claudeGlyphs[e.frame%len(claudeGlyphs)] + " " + c.verb + "…"
	took := time.Since(e.busySince)
	switch {
	case c.stopping && c.stopTotal == 1:
		s += fmt.Sprintf(" (running stop hook · %s · ↓ %d tokens)", claudeDur(time.Since(c.stopSince)), e.tokens)
	case c.stopping:
		s += fmt.Sprintf(" (running stop hooks… %d/%d · %s)", c.stopDone, c.stopTotal, claudeDur(time.Since(c.stopSince)))
	case e.firstToken || took >= e.opt.ParenAfter:
		s += fmt.Sprintf(" (%s · ↓ %d tokens)", claudeDur(took), e.tokens)
	}
	return s
}

func (c *claude) userLines(lines []string) []string {
	return append(prefixed(lines, "❯ ", "  "), "")
}

func (c *claude) answerLead() string { return "● " }

func (c *claude) placeholder(s segment) string {
	if !s.paste {
		return ""
	}
	switch nl := strings.Count(string(s.text), "\n"); {
	case nl > 3:
		return fmt.Sprintf("[Pasted text #%d +%d lines]", s.n, nl)
	case len(s.text) >= 800:
		return fmt.Sprintf("[Pasted text #%d]", s.n)
	}
	return ""
}

func (c *claude) emptyInput() []string {
	switch {
	case len(c.e.queue) > 0:
		return []string{dimOn + "Press up to edit queued messages" + dimOff}
	case c.e.fresh && c.e.opt.TryHint:
		return []string{dimOn + `Try "how does <filepath> work?"` + dimOff}
	}
	return nil
}

func (c *claude) toolLead(call string) (string, string) { return "● " + call, "  ⎿  " }

func (c *claude) shellEcho(lines []string) {
	c.e.addHistory("! " + lines[0])
	for _, l := range lines[1:] {
		c.e.addHistory("  " + l)
	}
}

func (c *claude) shellLines(_, body []string, failure string, _ error) []string {
	return append(indented(body, failure, "(Bash completed with no output)", "  ⎿  ", "     "), "")
}

func (c *claude) completions(text string) ([]completion, int) {
	if c.e.opt.Slash && strings.HasPrefix(text, "/") {
		return c.e.claudeCompletions(), 0
	}
	if !c.e.opt.Menus {
		return nil, 0
	}
	ws := strings.LastIndexAny(text, " \t\n") + 1
	if word := text[ws:]; strings.HasPrefix(word, "@") {
		return fileCompletions(word[1:], false), ws
	}
	return nil, 0
}

func (c *claude) menuLines(items []completion, off, end, _ int) []string {
	var out []string
	if !items[0].slash {
		for _, it := range items[off:end] {
			out = append(out, "+ "+it.label)
		}
		return out
	}
	// "/usage (cost)                 Show session cost, …", the
	// highlighted one first, no scroll marks.
	for _, it := range items[off:end] {
		l := "/" + it.label
		if it.alias != "" {
			l += " (" + it.alias + ")"
		}
		out = append(out, clip(l+strings.Repeat(" ", max(2, 30-width(l)))+it.desc, max(c.e.w, 20)-1))
	}
	return out
}

func (c *claude) ready() {
	c.e.hooks.claudeEvent("SessionStart", map[string]any{"source": "startup", "model": "claude-mock"})
}

func (c *claude) startDialogs() []func() {
	if c.e.opt.TrustDialog {
		return []func(){c.e.trustDialog}
	}
	return nil
}

func (c *claude) trustDialog(d *dialog) {
	d.title = []string{" Accessing workspace:", "", " " + workDir(), "", " Quick safety check: Is this a project you created or one you trust?", "",
		" Claude Code'll be able to read, edit, and execute files here.", ""}
	d.items = []string{"Yes, I trust this folder", "No, exit"}
	d.indent = " "
	d.after = []string{"", " Enter to confirm · Esc to cancel"}
}

// loseEnterAfterPaste: an Enter in the same read as a paste's end is lost.
func (c *claude) loseEnterAfterPaste() bool { return true }

// up with an empty input takes the queued messages back to edit.
func (c *claude) up() bool {
	e := c.e
	if len(e.queue) > 0 && e.inputText() == "" {
		e.setInput(strings.Join(e.queue, "\n"))
		e.queue = nil
	}
	return true
}

// pasted: the first paste after claude started lands late (FirstPaste).
func (c *claude) pasted(seg segment) bool {
	e := c.e
	if e.opt.FirstPaste <= 0 || e.pastes != 1 {
		return false
	}
	e.later(e.opt.FirstPaste, func() {
		e.pasteEnd = time.Now()
		seg.at = e.pasteEnd
		e.input = append(e.input, seg)
		e.inputChanged()
	})
	return true
}

func (c *claude) enter(now time.Time) bool {
	e := c.e
	if e.opt.EnterGuard > 0 && now.Sub(e.pasteEnd) < e.opt.EnterGuard {
		return true // the Enter right after a paste is lost
	}
	if items, word := e.completions(); len(items) > 0 && !items[0].slash {
		e.complete(items[e.menuSel], word) // Enter picks the file
		return true
	}
	return e.backslashNewline()
}

// trim: claude keeps leading whitespace, trims trailing, and a tab is
// four spaces.
func (c *claude) trim(text string) string {
	return strings.TrimRightFunc(strings.ReplaceAll(text, "\t", "    "), unicode.IsSpace)
}

func (c *claude) bangInput() bool {
	return c.e.opt.Bang && strings.HasPrefix(c.e.inputText(), "!")
}

// interpret: a space before ! or / makes the text a prompt; trailing
// whitespace does not count.
func (c *claude) interpret(text string) bool {
	e := c.e
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
	return false
}

// beginTurn gives each message a prompt_id and runs the UserPromptSubmit
// hooks, one per message, while the screen goes on. The transcript gets
// the prompts once the hooks are done (sent: Claude Code 2.1.197 wrote
// none while a hook ran).
func (c *claude) beginTurn(msgs []string, user bool, resume func()) bool {
	c.verb = gerunds[rand.IntN(len(gerunds))]
	c.stopping = false
	if !user {
		c.promptIDs = []string{newUUID()}
		return false
	}
	c.promptIDs = nil
	var submits []map[string]any
	for _, m := range msgs {
		id := newUUID()
		c.promptIDs = append(c.promptIDs, id)
		submits = append(submits, map[string]any{"prompt": m, "prompt_id": id})
	}
	return c.e.hooks.claudeEach("UserPromptSubmit", submits, resume)
}

// sent writes the prompts to the transcript: once the hooks are done.
func (c *claude) sent(msgs []string) { c.transcript.prompts(msgs, c.promptID()) }

func (c *claude) said(text string) { c.transcript.text(text) }

// responded writes the response's entries to the transcript.
func (c *claude) responded(r modelResponse) { c.transcript.response(r) }

// toolDone writes the tool's result to the transcript.
func (c *claude) toolDone(out string, err error, deny string) {
	switch {
	case deny != "":
		c.transcript.toolResult("PreToolUse hook denied this tool: "+deny, true)
	case err != nil:
		c.transcript.toolResult(strings.TrimRight(out+"\n"+err.Error(), "\n"), true)
	default:
		c.transcript.toolResult(out, false)
	}
}

// toolRunner runs claude's PreToolUse hooks (which may deny the tool),
// then the tool, then the PostToolUse hooks with its result. The runner
// runs off the loop.
func (c *claude) toolRunner(name string, input map[string]any) func(do func() (string, error)) (string, string, error) {
	useID, promptID := c.transcript.tool, c.promptID() // the tool_use its response just wrote
	hooks := c.e.hooks
	return func(do func() (string, error)) (string, string, error) {
		deny := hooks.claudeTool("PreToolUse", name, map[string]any{"tool_input": input, "tool_use_id": useID, "prompt_id": promptID})
		if deny != "" {
			return "", deny, nil
		}
		start := time.Now()
		out, err := do()
		stderr := ""
		if err != nil {
			stderr = err.Error()
		}
		hooks.claudeTool("PostToolUse", name, map[string]any{"tool_input": input, "tool_use_id": useID, "prompt_id": promptID,
			"tool_response": map[string]any{"stdout": out, "stderr": stderr, "interrupted": false, "isImage": false, "noOutputExpected": false},
			"duration_ms":   time.Since(start).Milliseconds()})
		return out, "", err
	}
}

// permission runs the PreToolUse hooks first (a denial skips the dialog),
// then opens the dialog, runs PermissionRequest and, NotifyDelay later if
// the dialog is still open, the permission Notification.
func (c *claude) permission(cmd string) {
	e := c.e
	gen, promptID, useID := e.gen, c.promptID(), c.transcript.tool
	input := permissionInput(cmd)
	go func() {
		deny := e.hooks.claudeTool("PreToolUse", "Bash", map[string]any{"tool_input": input, "prompt_id": promptID,
			"tool_use_id": useID})
		e.events <- func() {
			if e.gen != gen {
				return
			}
			if deny != "" {
				c.toolDone("", nil, deny)
				e.addHistory(e.toolLines("Bash("+cmd+")", "", nil, deny)...)
				e.next()
				return
			}
			e.openPermission(cmd)
			d := e.dialog
			e.hooks.claudeEvent("PermissionRequest", map[string]any{"tool_name": "Bash", "tool_input": input,
				"permission_suggestions": []map[string]any{{"type": "addRules", "behavior": "allow", "destination": "localSettings",
					"rules": []map[string]any{{"toolName": "Bash", "ruleContent": firstWord(cmd) + ":*"}}}}})
			e.later(e.opt.NotifyDelay, func() {
				if e.dialog == d {
					e.hooks.claudeEvent("Notification", map[string]any{"message": "Claude needs your permission", "notification_type": "permission_prompt"})
				}
			})
		}
	}()
}

func (c *claude) answered(allowed bool, _ string) {
	if allowed {
		c.e.addHistory("  ⎿  (No content)", "")
		c.transcript.toolResult("(No content)", false)
		return
	}
	c.e.addHistory("  ⎿  Interrupted · What should Claude do instead?", "")
	c.transcript.refused()
}

// fail runs StopFailure (no Stop).
func (c *claude) fail(kind string, code int) {
	e := c.e
	msg := fmt.Sprintf("API Error: %d mock %s", code, kind)
	e.addHistory("● "+msg, "")
	c.transcript.apiError(kind, msg, code)
	e.hooks.claudeEvent("StopFailure", map[string]any{"error": kind, "last_assistant_message": msg, "prompt_id": c.promptID()})
	e.addHistory("✻ "+pastVerbs[rand.IntN(len(pastVerbs))]+" for "+claudeDur(time.Since(e.busySince)), "")
}

// interrupt: what was queued runs at once; with nothing queued the prompt
// goes back into the input (EscRestore).
func (c *claude) interrupt() {
	e := c.e
	e.addHistory("  ⎿  Interrupted · What should Claude do instead?", "")
	c.transcript.interrupted()
	if e.opt.EscRestore && len(e.queue) == 0 {
		back := strings.Join(e.prompts, "\n")
		if cur := e.inputText(); cur != "" {
			back += "\n" + cur
		}
		e.setInput(back)
	}
}

// interruptible: not while the Stop hooks run.
func (c *claude) interruptible() bool { return !c.stopping }

// endTurn runs the Stop hooks; the busy line says so while they run.
func (c *claude) endTurn(answer string) bool {
	e := c.e
	e.trace("stop")
	payload := map[string]any{"stop_hook_active": false, "last_assistant_message": answer, "prompt_id": c.promptID(),
		"effort": "medium", "background_tasks": []any{}, "session_crons": []any{}}
	gen := e.gen
	c.stopTotal = e.hooks.claudeProgress("Stop", payload, func(done int) {
		e.events <- func() {
			if e.gen != gen {
				return
			}
			c.stopDone = done
			if done == c.stopTotal {
				e.finish()
			}
		}
	})
	if c.stopTotal > 0 {
		c.stopping, c.stopDone, c.stopSince = true, 0, time.Now()
		return true
	}
	return false
}

func (c *claude) summary(took time.Duration) {
	c.e.addHistory("✻ "+pastVerbs[rand.IntN(len(pastVerbs))]+" for "+claudeDur(took), "")
	c.transcript.end()
}

// takeQueue: all of it as one turn (Batch).
func (c *claude) takeQueue(q []string) ([]string, []string) {
	if c.e.opt.Batch {
		return q, nil
	}
	return c.base.takeQueue(q)
}

// shellDone sends the command and its output to the model as a turn of
// its own (no echo, no UserPromptSubmit).
func (c *claude) shellDone(cmd, out string) {
	if c.e.busy {
		return
	}
	stdout := strings.TrimRight(out, "\n")
	if stdout == "" {
		stdout = "(Bash completed with no output)"
	}
	c.e.turn([]string{"<bash-input>" + cmd + "</bash-input>\n<bash-stdout>" + stdout + "</bash-stdout><bash-stderr></bash-stderr>"}, false, nil)
}
