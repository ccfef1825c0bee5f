package mockagents

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Options configure one mock agent.
type Options struct {
	Persona     string // claude, codex, gemini, generic
	Script      *Script
	LogPath     string
	Pane        string
	AltScreen   bool
	TrustDialog bool
	EnterGuard  time.Duration // claude
	Burst       bool          // codex
	NoEscHint   bool          // claude
	Settings    string        // claude --settings
	Notify      []string      // codex notify
	TracePath   string        // PARTY_MOCK_TRACE: when completions were emitted
	Replay      *Replay       // --replay: play a recorded cast instead of a persona
}

// segment is a piece of the input: typed text, or one paste (which claude
// and codex may show as a placeholder).
type segment struct {
	text  []byte
	paste bool
	n     int // paste number
}

type dialog struct {
	title  []string
	items  []string
	sel    int
	footer string
	no     int // the item Esc chooses
	choose func(item int)
}

type queued struct{ text string }

// engine is one running mock agent. All its state belongs to the run loop.
type engine struct {
	opt    Options
	out    io.Writer
	size   func() (int, int)
	w, h   int
	events chan func()

	input      []segment
	pastes     int
	inPaste    bool
	pasteBuf   bytes.Buffer
	pending    []byte // an incomplete escape sequence or UTF-8 char
	pasteEnd   time.Time
	lastTyped  time.Time
	burstRun   int
	burstUntil time.Time

	history  []string // lines printed above the live region
	printed  int      // history lines already written (inline)
	liveRows int

	busy      bool
	busySince time.Time
	frame     int
	queue     []queued
	dialog    *dialog
	seq       int
	turns     int

	// the running turn
	steps  []Step
	groups []string
	step   int
	prompt string
	answer []string

	hooks *hooks
	exit  chan int
}

func newEngine(opt Options, out io.Writer, size func() (int, int)) *engine {
	e := &engine{opt: opt, out: out, size: size, events: make(chan func(), 256), exit: make(chan int, 1)}
	e.w, e.h = size()
	e.hooks = newHooks(opt.Settings, opt.Notify)
	return e
}

// run drives the agent until it exits, returning the exit status.
func (e *engine) run(in io.Reader, winch <-chan os.Signal) int {
	io.WriteString(e.out, "\x1b[?2004h")
	if e.opt.Replay != nil {
		e.play()
	} else {
		if e.opt.AltScreen {
			io.WriteString(e.out, "\x1b[?1049h")
		}
		e.banner()
		if e.opt.TrustDialog {
			e.trustDialog()
		}
		if e.opt.Persona == "claude" {
			e.hooks.claudeEvent("SessionStart", map[string]any{"source": "startup", "model": "mock"}, false)
		}
		e.draw()
	}
	go func() {
		buf := make([]byte, 64*1024)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				chunk := append([]byte(nil), buf[:n]...)
				e.events <- func() { e.feed(chunk) }
			}
			if err != nil {
				e.events <- func() { e.quit(0) }
				return
			}
		}
	}()
	tick := time.NewTicker(120 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case code := <-e.exit:
			e.restore()
			return code
		case f := <-e.events:
			f()
		case <-tick.C:
			if !e.busy {
				continue
			}
			e.frame++
		case <-winch:
			// History stays where the terminal reflowed it; only the live
			// region is redrawn, as the real inline TUIs do.
			e.w, e.h = e.size()
		}
		select {
		case code := <-e.exit:
			e.restore()
			return code
		default:
		}
		e.draw()
	}
}

func (e *engine) quit(code int) {
	select {
	case e.exit <- code:
	default:
	}
}

func (e *engine) restore() {
	io.WriteString(e.out, "\x1b[?2004l")
	if e.opt.AltScreen {
		io.WriteString(e.out, "\x1b[?1049l")
	}
}

// later runs f on the loop after d.
func (e *engine) later(d time.Duration, f func()) {
	time.AfterFunc(d, func() { e.events <- f })
}

// feed consumes one read of input.
func (e *engine) feed(chunk []byte) {
	data := append(e.pending, chunk...)
	e.pending = nil
	pasteEndedHere := false
	for len(data) > 0 {
		if e.inPaste {
			i := bytes.Index(data, []byte("\x1b[201~"))
			if i < 0 {
				// Keep a possible partial terminator for the next read.
				keep := min(len(data), 5)
				for k := keep; k > 0; k-- {
					if bytes.HasPrefix([]byte("\x1b[201~"), data[len(data)-k:]) {
						e.pasteBuf.Write(data[:len(data)-k])
						e.pending = append([]byte(nil), data[len(data)-k:]...)
						return
					}
				}
				e.pasteBuf.Write(data)
				return
			}
			e.pasteBuf.Write(data[:i])
			data = data[i+6:]
			e.inPaste = false
			e.endPaste()
			pasteEndedHere = true
			continue
		}
		b := data[0]
		switch {
		case b == 0x1b:
			n, ok := e.escape(data)
			if !ok {
				e.pending = append([]byte(nil), data...)
				return
			}
			data = data[n:]
		case b == '\r':
			data = data[1:]
			if pasteEndedHere && e.opt.Persona == "claude" {
				continue // an Enter in the same read as the paste's end is lost
			}
			e.enter()
		case b == '\n':
			data = data[1:]
			e.typeText("\n", false)
		case b == '\t':
			data = data[1:]
			e.tab()
		case b == 0x7f || b == 0x08:
			data = data[1:]
			e.backspace()
		case b == 0x03:
			data = data[1:]
			if e.inputText() == "" {
				e.quit(0)
				return
			}
			e.input = nil
		case b == 0x04:
			data = data[1:]
			if e.inputText() == "" {
				e.quit(0)
				return
			}
		case b < 0x20:
			data = data[1:]
		default:
			r, size := utf8.DecodeRune(data)
			if r == utf8.RuneError && size == 1 && !utf8.FullRune(data) {
				e.pending = append([]byte(nil), data...)
				return
			}
			data = data[size:]
			if e.dialog != nil && r >= '1' && r <= '9' {
				if n := int(r - '1'); n < len(e.dialog.items) {
					e.choose(n)
				}
				continue
			}
			e.typeText(string(r), true)
		}
	}
}

// escape handles an escape sequence at the start of data, returning its
// length, or ok=false when it is incomplete.
func (e *engine) escape(data []byte) (int, bool) {
	if len(data) == 1 {
		// A lone ESC at the end of a read is the Esc key.
		e.esc()
		return 1, true
	}
	if data[1] != '[' {
		e.esc()
		return 1, true
	}
	for i := 2; i < len(data); i++ {
		if data[i] >= 0x40 && data[i] <= 0x7e {
			seq := string(data[:i+1])
			switch seq {
			case "\x1b[200~":
				e.inPaste = true
				e.pasteBuf.Reset()
			case "\x1b[A":
				if e.dialog != nil && e.dialog.sel > 0 {
					e.dialog.sel--
				}
			case "\x1b[B":
				if e.dialog != nil && e.dialog.sel < len(e.dialog.items)-1 {
					e.dialog.sel++
				}
			}
			return i + 1, true
		}
	}
	return 0, false
}

func (e *engine) esc() {
	if e.dialog != nil {
		e.choose(e.dialog.no)
	}
}

func (e *engine) endPaste() {
	text := e.pasteBuf.String()
	e.pasteEnd = time.Now()
	if e.dialog != nil {
		return // text typed into a dialog goes nowhere
	}
	e.pastes++
	e.input = append(e.input, segment{text: []byte(text), paste: true, n: e.pastes})
}

func (e *engine) typeText(s string, typed bool) {
	if e.dialog != nil {
		return
	}
	now := time.Now()
	if typed && e.opt.Persona == "codex" && e.opt.Burst {
		if now.Sub(e.lastTyped) <= 8*time.Millisecond {
			e.burstRun++
		} else {
			e.burstRun = 1
		}
		if e.burstRun >= 3 {
			e.burstUntil = now.Add(120 * time.Millisecond)
		}
	}
	if typed {
		e.lastTyped = now
	}
	if n := len(e.input); n > 0 && !e.input[n-1].paste {
		e.input[n-1].text = append(e.input[n-1].text, s...)
		return
	}
	e.input = append(e.input, segment{text: []byte(s)})
}

func (e *engine) backspace() {
	n := len(e.input)
	if n == 0 || e.dialog != nil {
		return
	}
	last := &e.input[n-1]
	if last.paste {
		e.input = e.input[:n-1]
		return
	}
	_, size := utf8.DecodeLastRune(last.text)
	last.text = last.text[:len(last.text)-size]
	if len(last.text) == 0 {
		e.input = e.input[:n-1]
	}
}

func (e *engine) inputText() string {
	var b strings.Builder
	for _, s := range e.input {
		b.Write(s.text)
	}
	return b.String()
}

func (e *engine) tab() {
	if e.opt.Persona == "codex" && e.busy && e.dialog == nil && e.inputText() != "" {
		e.accept("queued")
	}
}

func (e *engine) enter() {
	now := time.Now()
	if e.dialog != nil {
		e.choose(e.dialog.sel)
		return
	}
	switch e.opt.Persona {
	case "claude":
		if e.opt.EnterGuard > 0 && now.Sub(e.pasteEnd) < e.opt.EnterGuard {
			return // the Enter right after a paste is lost
		}
	case "codex":
		if e.opt.Burst && now.Before(e.burstUntil) {
			e.typeText("\n", false)
			return
		}
	case "gemini":
		if now.Sub(e.lastTyped) < 30*time.Millisecond {
			e.typeText("\n", false)
			return
		}
	}
	if strings.TrimSpace(e.inputText()) == "" {
		return
	}
	mode := "submit"
	if e.busy {
		mode = "queued"
		if e.opt.Persona == "codex" {
			mode = "steer"
		}
	}
	e.accept(mode)
}

// accept takes the input as a submission.
func (e *engine) accept(mode string) {
	text := e.inputText()
	e.input = nil
	e.seq++
	_ = appendLog(e.opt.LogPath, LogEntry{Agent: e.opt.Persona, Pane: e.opt.Pane, Seq: e.seq, Mode: mode, Text: text, Time: time.Now().UTC()})
	if e.opt.Replay != nil {
		e.replayInput(text)
		return
	}
	switch mode {
	case "submit":
		e.startTurn(text)
	case "queued":
		e.queue = append(e.queue, queued{text: text})
	case "steer":
		e.addHistory(e.userLine(text)...)
	}
}

func (e *engine) choose(item int) {
	d := e.dialog
	e.dialog = nil
	e.seq++
	_ = appendLog(e.opt.LogPath, LogEntry{Agent: e.opt.Persona, Pane: e.opt.Pane, Seq: e.seq, Mode: "dialog", Text: strconv.Itoa(item + 1), Time: time.Now().UTC()})
	d.choose(item)
}

func (e *engine) trustDialog() {
	d := &dialog{no: 1, choose: func(item int) {
		if item == 1 {
			e.quit(1)
		}
	}}
	if e.opt.Persona == "codex" {
		d.title = []string{"Do you trust the contents of this directory?"}
		d.items = []string{"Yes, continue", "No, quit"}
		d.footer = "Press enter to confirm or esc to cancel"
	} else {
		d.title = []string{"Do you trust the files in this folder?"}
		d.items = []string{"Yes, I trust this folder", "No, exit"}
		d.footer = "Enter to confirm · Esc to cancel"
	}
	e.dialog = d
}

// startTurn runs the script's answer to prompt.
func (e *engine) startTurn(prompt string) {
	e.turns++
	e.busy, e.busySince = true, time.Now()
	e.prompt, e.answer, e.step = prompt, nil, 0
	e.steps, e.groups = e.opt.Script.Plan(prompt)
	e.addHistory(e.userLine(prompt)...)
	if e.opt.Persona == "claude" {
		e.hooks.claudeEvent("UserPromptSubmit", map[string]any{"prompt": prompt}, true)
	}
	e.next()
}

var markerAsk = regexp.MustCompile(`PARTY_DONE_ immediately followed by ([a-z0-9]+)`)

// next runs steps until one has to wait.
func (e *engine) next() {
	for e.step < len(e.steps) {
		st := e.steps[e.step]
		e.step++
		switch st.Kind {
		case "think":
			turn := e.turns
			e.later(st.Dur, func() {
				if e.turns == turn {
					e.next()
				}
			})
			return
		case "say":
			text := expand(st.Arg, e.groups)
			e.answer = append(e.answer, text)
			e.addHistory(e.answerLines(text)...)
			if strings.Contains(text, "[[/POLI:MSG]]") {
				e.trace("block")
				e.draw()
			}
		case "echo":
			e.addHistory(strings.Split(e.prompt, "\n")...)
		case "marker":
			if m := markerAsk.FindStringSubmatch(e.prompt); m != nil {
				e.trace("marker")
				e.addHistory("PARTY_DONE_" + m[1])
				e.draw()
			}
		case "write":
			path, text, _ := strings.Cut(st.Arg, " ")
			path, text = expand(path, e.groups), expand(unescape(text), e.groups)
			abs, _ := filepath.Abs(path)
			e.tool("Write", map[string]any{"file_path": abs, "content": text}, "Write("+path+")", func() (string, error) {
				if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
					return "", err
				}
				return fmt.Sprintf("Wrote %d bytes", len(text)), os.WriteFile(abs, []byte(text), 0o644)
			})
			return
		case "run":
			cmd := expand(st.Arg, e.groups)
			e.tool("Bash", map[string]any{"command": cmd}, "Bash("+cmd+")", func() (string, error) {
				out, err := exec.Command("sh", "-c", cmd).CombinedOutput()
				return string(out), err
			})
			return
		case "permission":
			e.permission(expand(st.Arg, e.groups))
			return
		case "fail":
			e.addHistory("  ⎿ API Error: " + st.Arg)
			e.hooks.claudeEvent("StopFailure", map[string]any{"error_type": st.Arg, "error": st.Arg}, false)
			e.endTurn(false)
			return
		case "crash":
			e.quit(st.Code)
			return
		case "hang":
			return
		}
	}
	e.endTurn(true)
}

// tool runs a tool the way the agent does, off the loop: claude's
// PreToolUse hooks may deny it, then do runs, then the PostToolUse hooks
// see its result. The screen shows the call and the start of its output;
// the turn goes on when it is done.
func (e *engine) tool(name string, input map[string]any, call string, do func() (string, error)) {
	turn := e.turns
	claude := e.opt.Persona == "claude"
	go func() {
		var out string
		var err error
		deny := ""
		if claude {
			deny = e.hooks.claudeTool("PreToolUse", name, map[string]any{"tool_input": input})
		}
		if deny == "" {
			out, err = do()
			if claude {
				code := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					code = ee.ExitCode()
				}
				e.hooks.claudeTool("PostToolUse", name, map[string]any{"tool_input": input,
					"tool_response": map[string]any{"stdout": out, "stderr": "", "exit_code": code}})
			}
		}
		e.events <- func() {
			if e.turns != turn {
				return
			}
			e.addHistory(toolLines(claude, call, out, err, deny)...)
			e.next()
		}
	}()
}

// toolLines is how a tool call shows in history.
func toolLines(claude bool, call, out string, err error, deny string) []string {
	head, sub := "• Ran "+strings.TrimSuffix(strings.TrimPrefix(call, "Bash("), ")"), "  └ "
	if claude {
		head, sub = "⏺ "+call, "  ⎿  "
	}
	var body []string
	switch {
	case deny != "":
		body = []string{"Error: PreToolUse:" + strings.SplitN(call, "(", 2)[0] + " hook denied this tool: " + deny}
	default:
		body = strings.Split(strings.TrimRight(out, "\n"), "\n")
		if len(body) > 5 {
			body = append(body[:5], fmt.Sprintf("… +%d lines", len(body)-5))
		}
		if err != nil {
			body = append(body, "Error: "+err.Error())
		}
	}
	lines := []string{head}
	for i, l := range body {
		if i == 0 {
			lines = append(lines, sub+l)
		} else {
			lines = append(lines, strings.Repeat(" ", len([]rune(sub)))+l)
		}
	}
	return lines
}

func (e *engine) permission(cmd string) {
	d := &dialog{}
	if e.opt.Persona == "codex" {
		d.title = []string{"Would you like to run the following command?", "", "  $ " + cmd}
		d.items = []string{"Yes, proceed (y)", "No, and tell Codex what to do differently (esc)"}
		d.footer = "Press enter to confirm or esc to cancel"
	} else {
		d.title = []string{"Bash command", "", "  " + cmd, "", "Do you want to proceed?"}
		d.items = []string{"Yes", "Yes, and don't ask again for this command", "No, and tell Claude what to do differently (esc)"}
	}
	d.no = len(d.items) - 1
	d.choose = func(item int) {
		if item == d.no {
			e.addHistory("  ⎿ Interrupted by user")
			e.endTurn(false)
			return
		}
		e.next()
	}
	e.dialog = d
	e.hooks.claudeEvent("Notification", map[string]any{"message": "Claude needs your permission to use Bash", "notification_type": "permission_prompt"}, false)
}

// endTurn finishes the running turn and starts the next queued message.
func (e *engine) endTurn(ok bool) {
	took := time.Since(e.busySince).Round(time.Second)
	e.busy = false
	answer := strings.Join(e.answer, "\n")
	if ok {
		switch e.opt.Persona {
		case "claude":
			e.addHistory(fmt.Sprintf("✻ Worked for %s", took))
			e.trace("stop")
			e.hooks.claudeEvent("Stop", map[string]any{"stop_hook_active": false, "last_assistant_message": answer}, false)
		case "codex":
			e.trace("notify")
			e.hooks.codexTurn(e.prompt, answer, e.turns)
		}
	}
	if len(e.queue) > 0 {
		q := e.queue[0]
		e.queue = e.queue[1:]
		e.startTurn(q.text)
	}
}

// trace records when the agent emitted a completion, for benchmarks.
func (e *engine) trace(what string) {
	if e.opt.TracePath != "" {
		_ = appendLog(e.opt.TracePath, LogEntry{Agent: e.opt.Persona, Pane: e.opt.Pane, Mode: what, Time: time.Now()})
	}
}

// userLine is how a submitted prompt shows in history.
func (e *engine) userLine(text string) []string {
	first, _, _ := strings.Cut(text, "\n")
	if len(text) > 200 || strings.Count(text, "\n") > 3 {
		first = fmt.Sprintf("[%d chars]", len(text))
	}
	switch e.opt.Persona {
	case "claude":
		return []string{"> " + first, ""}
	case "codex":
		return []string{"▌ " + first, ""}
	case "gemini":
		return []string{"> " + first, ""}
	}
	return []string{"mock> " + first}
}

func (e *engine) answerLines(text string) []string {
	lines := strings.Split(text, "\n")
	if e.opt.Persona == "claude" {
		for i := range lines {
			if i == 0 {
				lines[i] = "⏺ " + lines[i]
			} else {
				lines[i] = "  " + lines[i]
			}
		}
	}
	return lines
}

func (e *engine) addHistory(lines ...string) { e.history = append(e.history, lines...) }

func (e *engine) banner() {
	cwd, _ := os.Getwd()
	switch e.opt.Persona {
	case "claude":
		w := min(e.w, 60)
		shown := cwd
		if len([]rune(cwd)) > w-12 {
			shown = "…/" + filepath.Base(cwd)
		}
		e.addHistory(box(w, "✻ Welcome to Claude Code (mock)!", "", "  cwd: "+shown)...)
		e.addHistory("")
	case "codex":
		e.addHistory(box(min(e.w, 48), ">_ OpenAI Codex (v0.0.0-mock)", "", "directory: "+filepath.Base(cwd))...)
		e.addHistory("")
	case "gemini":
		e.addHistory("Gemini CLI (mock)", "", "Tips for getting started:", "1. Ask questions, edit files, or run commands.", "")
	default:
		e.addHistory("mock agent ready")
	}
}

func box(w int, lines ...string) []string {
	inner := w - 4
	out := []string{"╭" + strings.Repeat("─", w-2) + "╮"}
	for _, l := range lines {
		pad := inner - width(l)
		if pad < 0 {
			pad = 0
		}
		out = append(out, "│ "+l+strings.Repeat(" ", pad)+" │")
	}
	return append(out, "╰"+strings.Repeat("─", w-2)+"╯")
}
