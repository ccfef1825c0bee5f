package mockagents

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/partyhq/party/mockagents/script"
)

// codex is Codex CLI: its screen on the alternate screen, the paste-burst
// window, Tab to queue and Enter to steer while busy, ! commands and its
// slash commands, the @ and $ popups, the notify program and the rollout.
type codex struct {
	base
	burstRun   int       // typed keys in a row, each within 8 ms of the last
	burstUntil time.Time // an Enter before this is a newline
	thread     string    // the thread id
	inputs     []string  // every user message of the thread
	rollout    *rollout  // the rollout transcript (rollout.go)
}

func newCodex(b base) *codex {
	c := &codex{base: b, thread: newUUID()}
	if b.e.opt.Resume != "" {
		c.thread = b.e.opt.Resume
	}
	c.rollout = newRollout(c.thread)
	return c
}

func (c *codex) banner() []string {
	return append(box(min(c.e.w, 48), ">_ OpenAI Codex (v0.0.0-mock)", "", "directory: "+filepath.Base(workDir())), "")
}

func (c *codex) live() []string {
	e := c.e
	var out []string
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
	bang := c.bangInput()
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
	hints := "  ← for agents · ? for shortcuts"
	if bang {
		hints = strings.Repeat(" ", max(2, e.w-len("Shell mode")-1)) + "Shell mode"
	}
	return append(out, "", "  x default · "+workDir(), hints)
}

func (c *codex) userLines(lines []string) []string {
	return append(prefixed(lines, "› ", "  "), "")
}

func (c *codex) answerLead() string { return "• " }

func (c *codex) dialogLines(d *dialog) []string { return c.e.framedDialog(d, "› ") }

func (c *codex) placeholder(s segment) string {
	if n := len([]rune(string(s.text))); s.paste && n > 1000 {
		return fmt.Sprintf("[Pasted Content %d chars]", n)
	}
	return ""
}

func (c *codex) shellLines(cmd, body []string, failure string, _ error) []string {
	lines := []string{"• You ran " + cmd[0]}
	for _, l := range cmd[1:] {
		lines = append(lines, "  │ "+l)
	}
	lines = append(lines, indented(body, failure, "(no output)", "  └ ", "    ")...)
	return append(lines, "  Worked for <1s • "+time.Now().Format("15:04"), "")
}

// completions: files for a last word starting with @, skills for a last
// word $lowercase (none: a "no matches" popup).
func (c *codex) completions(text string) (items []completion, start int) {
	if !c.e.opt.Menus {
		return nil, 0
	}
	ws := strings.LastIndexAny(text, " \t\n") + 1
	word := text[ws:]
	switch {
	case strings.HasPrefix(word, "@"):
		return fileCompletions(word[1:], false), ws
	case codexSkillWord.MatchString(word):
		for _, s := range codexSkills {
			if strings.HasPrefix(s.label, word[1:]) {
				items = append(items, s)
			}
		}
		if len(items) == 0 {
			items = []completion{noMatch}
		}
		return items, ws
	}
	return nil, 0
}

// complete puts the bare path ("read @READ" → "read README.md") or the
// $skill into the input.
func (c *codex) complete(it completion, text string, start int) {
	if strings.HasPrefix(text[start:], "$") {
		c.e.setInput(text[:start] + "$" + it.label + " ")
		return
	}
	c.e.setInput(text[:start] + it.label + " ")
}

// menuLines is the popup under the input.
func (c *codex) menuLines(items []completion, off, end, col int) []string {
	var out []string
	for _, it := range items[off:end] {
		l := "  " + it.label
		if it.desc != "" {
			l += strings.Repeat(" ", max(0, col-width(it.label))+2) + it.desc
		}
		out = append(out, clip(strings.TrimRight(l, " "), max(c.e.w, 20)-2))
	}
	if items[0] == noMatch {
		return append(out, "", "  enter insert · esc close")
	}
	return append(out, "", "  enter/tab insert · esc close · ↑/↓ select · ←/→ filter")
}

func (c *codex) startDialogs() []func() {
	if c.e.opt.TrustDialog {
		return []func(){c.e.trustDialog}
	}
	return nil
}

func (c *codex) trustDialog(d *dialog) {
	d.title = []string{"", "  Folder access", "  " + workDir(), "", "  Trust this folder? Codex can read, edit, and run files here, subject to your permission", "  settings. Your trust decision will be saved.", ""}
	d.items = []string{"Trust and continue", "Back to Agent Command Center"}
	d.after = []string{"", "  enter continue · esc back"}
}

// typed keeps the paste-burst window: 3+ keys <= 8 ms apart make an Enter
// within 120 ms a newline.
func (c *codex) typed(now time.Time) {
	if !c.e.opt.Burst {
		return
	}
	if now.Sub(c.e.lastTyped) <= 8*time.Millisecond {
		c.burstRun++
	} else {
		c.burstRun = 1
	}
	if c.burstRun >= 3 {
		c.burstUntil = now.Add(120 * time.Millisecond)
	}
}

// tab while busy queues the input.
func (c *codex) tab() {
	if c.e.busy && c.e.inputText() != "" {
		c.e.accept("queued")
	}
}

func (c *codex) enter(now time.Time) bool {
	e := c.e
	if e.opt.Burst && now.Before(c.burstUntil) {
		e.typeText("\n", false)
		return true
	}
	if items, word := e.completions(); len(items) > 0 {
		e.complete(items[e.menuSel], word) // Enter inserts the pick
		return true
	}
	return false
}

// busyMode: Enter while busy steers.
func (c *codex) busyMode() string { return "steer" }

func (c *codex) trim(text string) string { return strings.TrimSpace(text) }

func (c *codex) bangInput() bool {
	return c.e.opt.Bang && strings.HasPrefix(c.e.inputText(), "!")
}

// interpret: codex trims what it sends, but a space before ! or / makes
// the text a prompt (sent trimmed: "!cmd").
func (c *codex) interpret(text string) bool {
	e := c.e
	if e.opt.Bang && strings.HasPrefix(text, "!") {
		e.setInput("")
		e.runShell(strings.TrimSpace(text[1:]))
		return true
	}
	name, ok := slashName(text)
	if !ok || !e.opt.Slash {
		return false
	}
	if !codexCommands[name] {
		// Refused: the text stays in the input with the cursor before
		// it, so what comes next is put in front of it (and Ctrl-U, which
		// clears before the cursor, clears nothing).
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

// beginTurn records the turn in the rollout, its turn_context with the
// model of its first response (a usage step's model=, else the mock's).
func (c *codex) beginTurn(msgs []string, user bool, _ func()) bool {
	if user {
		c.inputs = append(c.inputs, msgs...)
		steps, _ := c.e.opt.Script.Plan(c.e.prompt)
		c.rollout.turnStarted(msgs, script.ResponseUsage(steps).Model)
	}
	return false
}

func (c *codex) responded(r modelResponse) { c.rollout.response(r) }

func (c *codex) toolDone(out string, err error, deny string) {
	if err != nil {
		out = strings.TrimRight(out+"\n"+err.Error(), "\n")
	}
	c.rollout.toolOutput(out)
}

func (c *codex) steered(text string) {
	c.inputs = append(c.inputs, text)
	c.rollout.userMessage(text)
}

func (c *codex) permissionDialog(cmd string, d *dialog) {
	c.e.addHistory("• Running "+cmd, "")
	d.title = []string{"  Would you like to run the following command?", "", "  Environment: local", "", "  Reason: the script asked for it", "", "  $ " + cmd, ""}
	d.items = []string{"Yes, proceed (y)", "Yes, and don't ask again for commands that start with `" + cmd + "` (p)", "No, and tell Codex what to do differently (esc)"}
	d.keys = map[rune]int{'y': 0, 'p': 1}
	d.after = []string{"", "  Press enter to confirm or esc to cancel"}
}

func (c *codex) answered(allowed bool, cmd string) {
	c.rollout.answered(allowed)
	if !allowed {
		c.e.addHistory("✗ You canceled the request to run "+cmd, "")
	}
}

// fail sends no notify.
func (c *codex) fail(kind string, _ int) {
	c.e.addHistory(fmt.Sprintf(`■ {"error":{"code":null,"message":"mock %s","type":%q}}`, kind, kind), "")
	c.rollout.completed("", "mock "+kind)
}

// interrupt: what was queued goes back into the input.
func (c *codex) interrupt() {
	e := c.e
	e.addHistory("■ Conversation interrupted - use /feedback if something went wrong", "")
	c.rollout.aborted()
	if len(e.queue) > 0 {
		back := strings.Join(e.queue, "\n")
		if cur := e.inputText(); cur != "" {
			back += "\n" + cur
		}
		e.queue = nil
		e.setInput(back)
	}
}

// endTurn runs the notify program.
func (c *codex) endTurn(answer string) bool {
	c.e.trace("notify")
	inputs := c.e.prompts
	if c.e.opt.AllInputs {
		inputs = c.inputs
	}
	c.rollout.completed(answer, "")
	c.e.hooks.codexTurn(c.thread, c.rollout.turn, inputs, answer)
	return false
}

func (c *codex) summary(took time.Duration) {
	d := "<1s"
	if took >= time.Second {
		d = codexDur(took)
	}
	c.e.addHistory("  Worked for "+d+" • "+time.Now().Format("15:04"), "")
}
