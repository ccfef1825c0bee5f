package sim

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/partyhq/party/core/hook"
)

// Submission is one prompt a simulated agent took.
type Submission struct {
	Text string
	Mode string // submit, queued, steer
	At   time.Time
}

// Agent is a simulated agent TUI. Its screen is a function of what it was
// given and of virtual time; it draws what the agent profiles of
// core/agent recognize. The fault methods change its behaviour.
type Agent struct {
	Persona string        // claude, codex, generic, shell
	Command string        // what pane_current_command shows
	Think   time.Duration // how long each turn keeps it busy
	// Reply returns the lines a turn prints for prompt; nil prints "answer".
	Reply func(prompt string) []string

	Submissions []Submission
	// DialogKeys counts keys pressed while a dialog was on screen.
	DialogKeys int

	clock     *Clock
	input     string
	visibleAt time.Time
	lastPaste time.Time
	busy      bool
	busyUntil time.Time
	queue     []string
	history   []string
	dialog    bool
	ask       bool // a taken prompt opens the permission dialog at once

	dead       bool
	deadStatus string
	copyMode   bool
	command    string

	dieAt   time.Time
	current string // the prompt of the running turn

	loseEnters int
	guard      time.Duration
	dieOnEnter *string
	render     time.Duration
	readyAt    time.Time

	// announce is the event log a submission is announced in (Claude's
	// UserPromptSubmit hook), by pane; putBack interrupts the next turn
	// that long after it starts.
	announce, announcePane string
	putBack                time.Duration
	putBackAt              time.Time
	// clearLag keeps a taken prompt in the box that long (clearAt).
	clearLag time.Duration
	clearAt  time.Time
	// hookLag is how long the submit hook of a taken prompt runs
	// (HookFor); until hookUntil the agent reads no key: held are the
	// keys and text that came meanwhile, read in order when it ends.
	hookLag   time.Duration
	hookUntil time.Time
	hooked    string // the prompt the running hook announces
	held      []func()
	// typing is what an operator types, and when (TypeAfter).
	typing []typed
	// pastes are the spans of input that came as pastes, in order:
	// Claude shows a long one as a placeholder, which one BSpace
	// deletes whole.
	pastes []span
}

// span is the byte range [from, to) of a paste in the input.
type span struct{ from, to int }

// typed is text an operator types at a time.
type typed struct {
	at   time.Time
	text string
}

// NewAgent returns an idle agent of persona.
func NewAgent(persona string) *Agent {
	cmd := persona
	if persona == "shell" {
		cmd = "bash"
	}
	if persona == "generic" {
		cmd = "mytui"
	}
	return &Agent{Persona: persona, Command: cmd, Think: 2 * time.Second}
}

// LoseEnters makes the next n Enter presses vanish.
func (a *Agent) LoseEnters(n int) *Agent { a.loseEnters = n; return a }

// EnterGuard drops an Enter that comes within d of a paste (claude).
func (a *Agent) EnterGuard(d time.Duration) *Agent { a.guard = d; return a }

// DieOnEnter makes the agent exit with status when Enter submits.
func (a *Agent) DieOnEnter(status string) *Agent { a.dieOnEnter = &status; return a }

// DieAfter makes the agent exit with status d from now (virtual time).
func (a *Agent) DieAfter(d time.Duration, status string) *Agent {
	a.dieAt, a.deadStatus = a.now().Add(d), status
	return a
}

// Die makes the agent exit now with status.
func (a *Agent) Die(status string) *Agent { a.dead, a.deadStatus = true, status; return a }

// BusyFor makes the agent work for d from now.
func (a *Agent) BusyFor(d time.Duration) *Agent {
	a.busy, a.busyUntil = true, a.now().Add(d)
	return a
}

// ShowDialog puts a numbered permission dialog on screen.
func (a *Agent) ShowDialog() *Agent { a.dialog = true; return a }

// AskOnSubmit makes each taken prompt open the permission dialog at once:
// a turn whose first step is a command that needs approval.
func (a *Agent) AskOnSubmit() *Agent { a.ask = true; return a }

// HideDialog takes the dialog off screen again: someone answered it.
func (a *Agent) HideDialog() *Agent { a.dialog = false; return a }

// RunCommand makes the pane run another program (the agent exited to a
// shell, say).
func (a *Agent) RunCommand(cmd string) *Agent { a.command = cmd; return a }

// Announce makes the agent append a prompt-submit event for pane to the
// event log at path on each submission, as Claude's UserPromptSubmit hook
// does.
func (a *Agent) Announce(path, pane string) *Agent { a.announce, a.announcePane = path, pane; return a }

// ClearAfter keeps each prompt the agent takes in its box for d more, as
// the real Claude does: it announces the prompt (Announce) before it
// clears the box.
func (a *Agent) ClearAfter(d time.Duration) *Agent { a.clearLag = d; return a }

// HookFor makes each prompt's submit hook (Claude's UserPromptSubmit) run
// for d after the Enter that took it: the prompt stays in the box, the
// agent announces it (Announce) and clears the box only when the hook
// ends, and reads no key until then: what is typed or pressed meanwhile,
// unseen on its screen, is read after, in order.
func (a *Agent) HookFor(d time.Duration) *Agent { a.hookLag = d; return a }

// Hooking says whether a submit hook runs (HookFor).
func (a *Agent) Hooking() bool { a.advance(); return a.hooking() }

func (a *Agent) hooking() bool { return !a.hookUntil.IsZero() && a.now().Before(a.hookUntil) }

// PutBackAfter interrupts the next turn d after it starts, before its
// first token: like Claude after an Esc, the agent turns idle and puts the
// prompt back into its input box.
func (a *Agent) PutBackAfter(d time.Duration) *Agent { a.putBack = d; return a }

// RenderDelay makes pasted text show only after d.
func (a *Agent) RenderDelay(d time.Duration) *Agent { a.render = d; return a }

// StartAfter makes the agent draw its input box, and take keys, only d
// from now: an agent still starting.
func (a *Agent) StartAfter(d time.Duration) *Agent { a.readyAt = a.now().Add(d); return a }

// Input is what the input line holds.
func (a *Agent) Input() string { a.advance(); return a.input }

// CopyMode puts the pane in copy mode.
func (a *Agent) CopyMode() *Agent { a.copyMode = true; return a }

// Type puts text in the input line, as an operator typing would.
func (a *Agent) Type(text string) *Agent {
	a.advance()
	if a.hooking() {
		a.held = append(a.held, func() { a.Type(text) })
		return a
	}
	a.input += text
	return a
}

// TypeAfter makes an operator type text d from now (Type).
func (a *Agent) TypeAfter(d time.Duration, text string) *Agent {
	a.typing = append(a.typing, typed{at: a.now().Add(d), text: text})
	return a
}

// Busy reports whether the agent is working.
func (a *Agent) Busy() bool { a.advance(); return a.busy }

func (a *Agent) now() time.Time {
	if a.clock == nil {
		return time.Time{}
	}
	return a.clock.Now()
}

// advance finishes turns whose time is up and starts queued ones.
func (a *Agent) advance() {
	if !a.dieAt.IsZero() && !a.now().Before(a.dieAt) {
		a.dead = true
	}
	if !a.clearAt.IsZero() && !a.now().Before(a.clearAt) {
		a.clearAt = time.Time{}
		a.setInput("")
	}
	for len(a.typing) > 0 && !a.now().Before(a.typing[0].at) {
		text := a.typing[0].text
		a.typing = a.typing[1:]
		a.Type(text)
	}
	if !a.hookUntil.IsZero() && !a.now().Before(a.hookUntil) {
		a.hookUntil = time.Time{}
		a.setInput("")
		a.announceNow(a.hooked)
		held := a.held
		a.held = nil
		for _, f := range held {
			f()
		}
	}
	if a.busy && !a.putBackAt.IsZero() && !a.now().Before(a.putBackAt) {
		// Interrupted before the turn's end: it never answers.
		a.busy, a.busyUntil, a.putBackAt, a.clearAt = false, a.putBackAt, time.Time{}, time.Time{}
		a.setInput(a.current)
		a.pastes = []span{{0, len(a.current)}} // put back as it came
		a.history = append(a.history, "  ⎿  Interrupted")
		a.startQueued()
	}
	for a.busy && !a.dead && !a.now().Before(a.busyUntil) {
		a.busy = false
		if a.Reply != nil {
			a.history = append(a.history, a.Reply(a.current)...)
		} else {
			a.history = append(a.history, "answer")
		}
		a.startQueued()
	}
}

// startQueued starts the first queued prompt, when there is one, at the
// end of the last turn.
func (a *Agent) startQueued() {
	if len(a.queue) > 0 {
		next := a.queue[0]
		a.queue = a.queue[1:]
		a.start(next, a.busyUntil)
	}
}

func (a *Agent) start(text string, at time.Time) {
	a.busy, a.busyUntil, a.current = true, at.Add(a.Think), text
	if a.putBack > 0 && a.putBack < a.Think {
		a.putBackAt = at.Add(a.putBack) // before the turn's end: an Esc before the first token
	}
	a.putBack = 0
	first, _, _ := strings.Cut(text, "\n")
	a.history = append(a.history, "> "+first)
}

func (a *Agent) starting() bool { return a.now().Before(a.readyAt) }

func (a *Agent) paste(text string) {
	a.advance()
	if a.hooking() {
		a.held = append(a.held, func() { a.paste(text) })
		return
	}
	if a.dialog || a.dead || a.starting() {
		return
	}
	a.pastes = append(a.pastes, span{len(a.input), len(a.input) + len(text)})
	a.input += text
	a.lastPaste = a.now()
	a.visibleAt = a.now().Add(a.render)
}

func (a *Agent) key(k string) {
	a.advance()
	if a.hooking() {
		a.held = append(a.held, func() { a.key(k) })
		return
	}
	if a.dead {
		return
	}
	if a.dialog {
		a.DialogKeys++
		return
	}
	if a.starting() {
		return
	}
	switch k {
	case "C-u":
		a.setInput("")
	case "BSpace":
		a.backspace()
	case "Enter":
		if a.loseEnters > 0 {
			a.loseEnters--
			return
		}
		if a.guard > 0 && a.now().Sub(a.lastPaste) < a.guard {
			return
		}
		if strings.TrimSpace(a.input) == "" {
			return
		}
		if a.dieOnEnter != nil {
			a.Die(*a.dieOnEnter)
			return
		}
		switch {
		case !a.busy:
			a.take("submit")
			a.start(a.Submissions[len(a.Submissions)-1].Text, a.now())
		case a.Persona == "codex":
			a.take("steer")
		default:
			a.take("queued")
			a.queue = append(a.queue, a.Submissions[len(a.Submissions)-1].Text)
		}
	case "Tab":
		if a.Persona == "codex" && a.busy && a.input != "" {
			a.take("queued")
			a.queue = append(a.queue, a.Submissions[len(a.Submissions)-1].Text)
		}
	}
}

func (a *Agent) take(mode string) {
	a.Submissions = append(a.Submissions, Submission{Text: a.input, Mode: mode, At: a.now()})
	a.dialog = a.dialog || a.ask
	if a.hookLag > 0 {
		a.hookUntil, a.hooked = a.now().Add(a.hookLag), a.input
		return
	}
	a.announceNow(a.input)
	if a.clearLag > 0 {
		a.clearAt = a.now().Add(a.clearLag)
		return
	}
	a.setInput("")
}

// setInput makes text the input, as typed.
func (a *Agent) setInput(text string) { a.input, a.pastes = text, nil }

// backspace deletes the input's last character, or the whole paste it
// ends with when Claude shows that as a placeholder (as the real one
// does, 2.1.197).
func (a *Agent) backspace() {
	if n := len(a.pastes); n > 0 {
		last := a.pastes[n-1]
		if a.Persona == "claude" && last.to == len(a.input) && placeheld(a.input[last.from:last.to]) {
			a.input, a.pastes = a.input[:last.from], a.pastes[:n-1]
			return
		}
	}
	r := []rune(a.input)
	if len(r) == 0 {
		return
	}
	a.input = string(r[:len(r)-1])
	if n := len(a.pastes); n > 0 && a.pastes[n-1].to > len(a.input) {
		if a.pastes[n-1].to = len(a.input); a.pastes[n-1].to <= a.pastes[n-1].from {
			a.pastes = a.pastes[:n-1]
		}
	}
}

// placeheld reports whether Claude shows a paste of text as a
// placeholder.
func placeheld(text string) bool { return len(text) >= 800 || strings.Count(text, "\n") > 3 }

// shown is the input as the agent draws it: Claude's long pastes as
// "[Pasted text #N +M lines]".
func (a *Agent) shown(input string) string {
	if a.Persona != "claude" {
		return input
	}
	var b strings.Builder
	at := 0
	for i, p := range a.pastes {
		if p.to > len(input) || !placeheld(input[p.from:p.to]) {
			continue
		}
		b.WriteString(input[at:p.from])
		fmt.Fprintf(&b, "[Pasted text #%d +%d lines]", i+1, strings.Count(input[p.from:p.to], "\n"))
		at = p.to
	}
	return b.String() + input[min(at, len(input)):]
}

// announceNow appends the prompt-submit event of prompt (Announce).
func (a *Agent) announceNow(prompt string) {
	if a.announce == "" {
		return
	}
	b, _ := json.Marshal(hook.Event{Time: a.now(), Pane: a.announcePane, Agent: a.Persona, Kind: hook.PromptSubmit, Prompts: []string{prompt}})
	if f, err := os.OpenFile(a.announce, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		_, _ = f.Write(append(b, '\n'))
		_ = f.Close()
	}
}

// scrolledOff is the history no longer on the screen: its scrollback.
func (a *Agent) scrolledOff() []string {
	return a.history[:max(0, len(a.history)-10)]
}

// Screen draws the agent's screen at the current virtual time.
func (a *Agent) Screen() string {
	a.advance()
	var lines []string
	if len(a.history) > 10 {
		lines = append(lines, a.history[len(a.history)-10:]...)
	} else {
		lines = append(lines, a.history...)
	}
	if a.starting() {
		return strings.Join(append(lines, " "+a.Persona+" is starting"), "\n")
	}
	secs := int(a.now().Sub(a.busyUntil.Add(-a.Think)).Seconds())
	input := a.input
	if a.now().Before(a.visibleAt) {
		input = ""
	}
	first, _, _ := strings.Cut(a.shown(input), "\n")
	switch a.Persona {
	case "claude":
		if a.busy {
			lines = append(lines, fmt.Sprintf("✻ Thinking… (%ds · esc to interrupt)", secs))
		}
		if a.dialog {
			return strings.Join(append(lines, "Do you want to proceed?", "❯ 1. Yes",
				"  2. Yes, and don't ask again for this command", "  3. No, and tell Claude what to do differently (esc)"), "\n")
		}
		lines = append(lines, "────────", "❯\u00a0"+first, "────────", "  ? for shortcuts")
	case "codex":
		if a.busy {
			lines = append(lines, fmt.Sprintf("• Working (%ds • esc to interrupt)", secs))
		}
		if a.dialog {
			return strings.Join(append(lines, "Would you like to run the following command?", "› 1. Yes, proceed (y)", "  2. No (esc)"), "\n")
		}
		if first == "" {
			first = "Ask Codex to do anything"
		}
		lines = append(lines, "› "+first, "", "  ? for shortcuts")
	default:
		lines = append(lines, "mock> "+first)
	}
	return strings.Join(lines, "\n")
}
