package mockagents

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/partyhq/party/mockagents/mocklog"
	"github.com/partyhq/party/mockagents/script"
)

// Options configure one mock agent. DefaultOptions gives a persona the
// behaviour of the real agent; each field below Replay switches one quirk.
type Options struct {
	Persona   string // claude, codex, gemini, generic
	Script    *script.Script
	LogPath   string
	Pane      string
	AltScreen bool
	Settings  string   // claude --settings
	Notify    []string // codex notify
	TracePath string   // PARTY_MOCK_TRACE: when completions were emitted
	Replay    *Replay  // --replay: play a recorded cast instead of a persona
	// Resume is the session id the agent was started to resume (claude
	// and gemini --resume ID, codex resume ID): its events, transcript and
	// rollout go on under that id, as the real agents' do.
	Resume string

	TrustDialog bool          // a trust dialog at start
	StartDelay  time.Duration // the agent draws its prompt and reads keys only after this
	EnterGuard  time.Duration // claude: an Enter this soon after a paste is lost
	NoEscHint   bool          // claude: no "esc to interrupt" in the footer while busy
	ParenAfter  time.Duration // claude: the busy line has no parenthesis this long (or until the first token)
	TryHint     bool          // claude: a fresh session's empty input shows a dim Try "…"
	Batch       bool          // claude: queued messages are sent together as one turn
	EscRestore  bool          // claude: Esc during a turn puts its prompt back into the input
	NotifyDelay time.Duration // claude: permission Notification this long after the dialog opened
	Burst       bool          // codex: the paste-burst window
	Blink       bool          // codex: the busy line alternates • and ◦
	AllInputs   bool          // codex: notify's input-messages holds every user message of the thread
	Menus       bool          // completion menus, Enter picks the highlighted item: claude @ files, codex @ files and $ skills, gemini / commands and @ files
	Merge       bool          // gemini: queued messages merged into one prompt
	Auth        bool          // gemini: auth dialog and API-key box at start
	PasteGuard  time.Duration // gemini: an Enter this soon after a paste is a newline
	Bang        bool          // claude, codex: an input starting with ! runs as shell commands
	Slash       bool          // claude, codex, gemini: an input starting with / is a command (claude /cost panel, codex /quit, unknown refused; gemini /help, /quit)
	ExitWords   bool          // claude: a bare exit, quit or :q quits
	Backslash   bool          // claude, gemini: a trailing \ then Enter is a newline (the \ is removed)
	InitPhase   bool          // gemini: the prompt is up during StartDelay: keys wait its first third (at most 0.5 s) and are then read one by one, an Enter in the next third (at most 0.5 s) is lost, then submissions are queued
	FirstPaste  time.Duration // claude: the session's first paste shows in the input only this late (an Enter before finds it empty)
	LineKill    bool          // claude, codex, gemini: Ctrl-U deletes to the start of the line (claude, codex: at a line start the newline before it)
}

// DefaultOptions returns the real agent's behaviour for persona.
func DefaultOptions(persona string) Options {
	o := Options{Persona: persona}
	switch persona {
	case "claude":
		o.EnterGuard = 100 * time.Millisecond
		o.ParenAfter = 15 * time.Second
		o.Batch, o.EscRestore = true, true
		o.NotifyDelay = 300 * time.Millisecond
		// The real claude's first paste lands after more than 0.5 s (2 of
		// 2 fresh sessions); on by default it fails mock scenarios where
		// party presses Enter before its text shows (relay_retry), so it is
		// off until party checks that.
		o.FirstPaste = 0
		o.Bang, o.Slash, o.ExitWords, o.Backslash, o.LineKill, o.Menus = true, true, true, true, true, true
	case "codex":
		o.AltScreen, o.Burst, o.Blink, o.AllInputs = true, true, true, true
		o.Bang, o.Slash, o.LineKill, o.Menus = true, true, true, true
	case "gemini":
		o.Menus, o.Merge = true, true
		o.Backslash, o.InitPhase, o.Slash, o.LineKill = true, true, true, true
		o.PasteGuard = 40 * time.Millisecond
		o.StartDelay = 300 * time.Millisecond
	}
	return o
}

// segment is a piece of the input: typed text, or one paste (which the
// agents may show as a placeholder).
type segment struct {
	text  []byte
	paste bool
	n     int       // paste number
	at    time.Time // when the paste ended
}

// dialog is a modal on screen: a numbered menu, or (textBox) a box that
// takes typed text.
type dialog struct {
	lead   []string // lines above it (claude, codex)
	rule   bool     // claude: a rule on top
	title  []string
	items  []string
	indent string // before each item
	after  []string
	sel    int
	no     int          // the item Esc chooses; -1: Esc does nothing
	keys   map[rune]int // shortcut keys
	choose func(item int)

	panel   bool // no items: it swallows every key until Esc (cancel)
	textBox bool
	text    []byte
	submit  func(text string)
	cancel  func()
}

// engine is one running mock agent. All its state belongs to the run loop.
type engine struct {
	opt    Options
	out    io.Writer
	size   func() (int, int)
	w, h   int
	events chan func()

	ready   bool     // past the start delay
	early   [][]byte // input read before ready
	startup []func() // dialogs still to show at start

	input      []segment
	tail       string // codex: the input after the cursor (a refused command stays there, the cursor before it)
	shellMode  bool   // gemini: shell mode (a leading ! while initializing)
	initPhase  bool   // gemini: the prompt is up but the agent still initializes
	rawPhase   bool   // gemini: the first third of that: keys wait, then are read one by one
	enterLost  bool   // gemini: the second third: an Enter is lost
	help       bool   // gemini: the shortcuts help is open (a ? read while initializing)
	pastes     int
	inPaste    bool
	pasteBuf   bytes.Buffer
	pending    []byte // an incomplete escape sequence or UTF-8 char
	pasteEnd   time.Time
	lastTyped  time.Time
	burstRun   int
	burstUntil time.Time
	fresh      bool      // nothing submitted yet (claude's Try hint)
	lastEsc    time.Time // gemini: Esc Esc clears the input
	menuSel    int       // gemini: highlighted completion
	menuOff    bool      // gemini: menu dismissed with Esc until the input changes

	history  []string // lines printed above the live region
	printed  int      // history lines already written (inline)
	liveRows int

	busy      bool
	busySince time.Time
	frame     int
	queue     []string
	dialog    *dialog
	seq       int
	turns     int
	gen       int // bumped when a turn starts or is cancelled; stale timers check it

	// the running turn
	prompts    []string // the messages of the turn (claude sends a queue as one turn)
	promptIDs  []string // claude prompt_id of each
	prompt     string   // what the script answers (the last message)
	steps      []script.Step
	groups     []string
	step       int
	answer     []string
	tokens     int
	firstToken bool
	verb       string
	stopping   bool // claude: Stop hooks running
	stopDone   int
	stopTotal  int
	stopSince  time.Time

	thread  string   // codex thread id
	inputs  []string // codex: every user message of the thread
	rollout *rollout // codex: the rollout transcript (rollout.go)

	hooks      *hooks
	transcript *transcript // claude's session transcript
	exit       chan int
	done       chan struct{} // closed when run returns: shell commands still running are killed

	startedAt time.Time
}

func newEngine(opt Options, out io.Writer, size func() (int, int)) *engine {
	e := &engine{opt: opt, out: out, size: size, events: make(chan func(), 256), exit: make(chan int, 1), done: make(chan struct{}), fresh: true, thread: newUUID(), startedAt: time.Now()}
	e.w, e.h = size()
	e.hooks = newHooks(opt.Settings, opt.Notify)
	if opt.Resume != "" {
		e.thread, e.hooks.session = opt.Resume, opt.Resume
	}
	e.rollout = newRollout(opt.Persona, e.thread)
	e.transcript = newTranscript(opt.Persona, e.hooks.session)
	return e
}

// run drives the agent until it exits, returning the exit status.
func (e *engine) run(in io.Reader, winch <-chan os.Signal) int {
	defer close(e.done)
	_, _ = io.WriteString(e.out, "\x1b[?2004h")
	if e.opt.Replay != nil {
		e.ready = true
		e.play()
	} else {
		if e.opt.AltScreen {
			_, _ = io.WriteString(e.out, "\x1b[?1049h")
		}
		e.banner()
		e.initPhase = e.opt.InitPhase && e.opt.Persona == "gemini" && e.opt.StartDelay > 0 && !e.opt.TrustDialog && !e.opt.Auth
		if e.initPhase {
			// Keys wait, then an Enter is lost, each for a third of the
			// delay but at most the 0.5 s measured; then submissions are
			// queued until the delay is over.
			third := min(e.opt.StartDelay/3, geminiInitWindow)
			e.rawPhase = true
			e.later(third, e.endRawPhase)
			e.later(2*third, e.endEnterLost)
		}
		if e.opt.StartDelay > 0 {
			e.later(e.opt.StartDelay, e.start)
		} else {
			e.start()
		}
		e.draw()
	}
	go func() {
		buf := make([]byte, 64*1024)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				chunk := append([]byte(nil), buf[:n]...)
				e.events <- func() { e.read(chunk) }
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
			if !e.busy || e.dialog != nil {
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

// start ends the start delay: the startup dialogs open, claude's
// SessionStart hook runs, and the keys typed meanwhile are read.
func (e *engine) start() {
	e.ready = true
	if e.initPhase {
		e.initPhase, e.enterLost = false, false
		switch {
		case len(e.queue) > 0 && e.shellMode:
			// Queued while initializing and in shell mode: it runs as a
			// shell command (logged as queued when it was submitted).
			cmd := strings.Join(e.queue, "\n\n")
			e.queue = nil
			e.shell(cmd)
		case len(e.queue) > 0 && !e.busy:
			e.sendQueue() // gemini sends what was queued while it initialized
		}
	}
	if e.opt.TrustDialog && e.opt.Persona != "generic" {
		e.startup = append(e.startup, e.trustDialog)
	}
	if e.opt.Auth && e.opt.Persona == "gemini" {
		e.startup = append(e.startup, e.authDialog)
	}
	e.nextStartup()
	if e.opt.Persona == "claude" {
		e.hooks.claudeEvent("SessionStart", map[string]any{"source": "startup", "model": "claude-mock"})
	}
	early := e.early
	e.early = nil
	for _, c := range early {
		e.feed(c)
	}
}

// nextStartup opens the next startup dialog, if any.
func (e *engine) nextStartup() {
	if len(e.startup) == 0 {
		return
	}
	f := e.startup[0]
	e.startup = e.startup[1:]
	f()
}

func (e *engine) quit(code int) {
	select {
	case e.exit <- code:
	default:
	}
}

func (e *engine) restore() {
	_, _ = io.WriteString(e.out, "\x1b[?2004l")
	if e.opt.AltScreen {
		_, _ = io.WriteString(e.out, "\x1b[?1049l")
	}
}

// later runs f on the loop after d.
func (e *engine) later(d time.Duration, f func()) {
	time.AfterFunc(d, func() { e.events <- f })
}

// laterInTurn runs f on the loop after d unless the turn has ended or been
// cancelled meanwhile.
func (e *engine) laterInTurn(d time.Duration, f func()) {
	gen := e.gen
	e.later(d, func() {
		if e.gen == gen {
			f()
		}
	})
}

// read takes one read of input; before the agent is ready it waits, as in
// the terminal's buffer.
func (e *engine) read(chunk []byte) {
	if e.rawPhase || !e.ready && !e.initPhase {
		e.early = append(e.early, chunk)
		return
	}
	e.feed(chunk)
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
			if pasteEndedHere && e.opt.Persona == "claude" && e.dialog == nil {
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
			e.setInput("")
		case b == 0x04:
			data = data[1:]
			if e.inputText() == "" {
				e.quit(0)
				return
			}
		case b == 0x15:
			data = data[1:]
			if e.dialog == nil {
				e.killLine()
			}
		case b == 0x05: // Ctrl-E: the cursor to the end
			data = data[1:]
			if e.tail != "" {
				t := e.tail
				e.tail = ""
				e.typeText(t, false)
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
			if d := e.dialog; d != nil && !d.textBox {
				if n, ok := d.keys[r]; ok {
					e.choose(n)
				} else if r >= '1' && r <= '9' && int(r-'1') < len(d.items) {
					e.choose(int(r - '1'))
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
	if len(data) == 1 || data[1] != '[' {
		// A lone ESC (or ESC not starting a CSI) is the Esc key.
		e.esc()
		return 1, true
	}
	for i := 2; i < len(data); i++ {
		if data[i] >= 0x40 && data[i] <= 0x7e {
			switch string(data[:i+1]) {
			case "\x1b[200~":
				e.inPaste = true
				e.pasteBuf.Reset()
			case "\x1b[A":
				e.arrow(-1)
			case "\x1b[B":
				e.arrow(+1)
			}
			return i + 1, true
		}
	}
	return 0, false
}

func (e *engine) arrow(delta int) {
	if d := e.dialog; d != nil {
		if !d.textBox {
			d.sel = max(0, min(len(d.items)-1, d.sel+delta))
		}
		return
	}
	if items, _ := e.completions(); len(items) > 0 {
		e.menuSel = (e.menuSel + delta + len(items)) % len(items)
		return
	}
	// Claude: Up with an empty input takes the queued messages back to edit.
	if delta < 0 && e.opt.Persona == "claude" && len(e.queue) > 0 && e.inputText() == "" {
		e.setInput(strings.Join(e.queue, "\n"))
		e.queue = nil
	}
}

func (e *engine) esc() {
	if d := e.dialog; d != nil {
		switch {
		case d.textBox, d.panel:
			if d.cancel != nil {
				e.dialog = nil
				d.cancel()
			}
		case d.no >= 0:
			e.choose(d.no)
		}
		return
	}
	if items, _ := e.completions(); len(items) > 0 {
		e.menuOff = true
		return
	}
	if e.help {
		e.help = false
		return
	}
	if e.shellMode {
		e.shellMode = false
		return
	}
	if e.opt.Persona == "gemini" && !e.busy && e.inputText() != "" {
		// One Esc leaves the input alone, a second one within 500ms
		// clears it.
		if time.Since(e.lastEsc) < 500*time.Millisecond {
			e.setInput("")
			e.lastEsc = time.Time{}
		} else {
			e.lastEsc = time.Now()
		}
		return
	}
	if e.busy && !e.stopping {
		e.interrupt()
	}
}

func (e *engine) endPaste() {
	text := e.pasteBuf.String()
	e.pasteEnd = time.Now()
	if d := e.dialog; d != nil {
		if d.textBox {
			d.text = append(d.text, text...)
		}
		return // text pasted into a menu goes nowhere
	}
	e.pastes++
	seg := segment{text: []byte(text), paste: true, n: e.pastes, at: e.pasteEnd}
	if e.opt.Persona == "claude" && e.opt.FirstPaste > 0 && e.pastes == 1 {
		// The first paste after claude started lands late.
		e.later(e.opt.FirstPaste, func() {
			e.pasteEnd = time.Now()
			seg.at = e.pasteEnd
			e.input = append(e.input, seg)
			e.inputChanged()
		})
		return
	}
	e.input = append(e.input, seg)
	e.inputChanged()
	if e.opt.Persona == "gemini" {
		e.later(geminiPasteDelay, func() {}) // redraw when the placeholder shows
	}
}

func (e *engine) typeText(s string, typed bool) {
	if d := e.dialog; d != nil {
		if d.textBox && s != "\n" {
			d.text = append(d.text, s...)
		}
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
	e.inputChanged()
	if n := len(e.input); n > 0 && !e.input[n-1].paste {
		e.input[n-1].text = append(e.input[n-1].text, s...)
		return
	}
	e.input = append(e.input, segment{text: []byte(s)})
}

func (e *engine) backspace() {
	if d := e.dialog; d != nil {
		if d.textBox && len(d.text) > 0 {
			_, size := utf8.DecodeLastRune(d.text)
			d.text = d.text[:len(d.text)-size]
		}
		return
	}
	n := len(e.input)
	if n == 0 {
		return
	}
	e.inputChanged()
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

func (e *engine) inputChanged() { e.menuSel, e.menuOff = 0, false }

// setInput replaces the input with typed text.
func (e *engine) setInput(s string) {
	e.inputChanged()
	e.input, e.tail = nil, ""
	if s != "" {
		e.input = []segment{{text: []byte(s)}}
	}
}

func (e *engine) inputText() string {
	var b strings.Builder
	for _, s := range e.input {
		b.Write(s.text)
	}
	b.WriteString(e.tail)
	return b.String()
}

func (e *engine) tab() {
	if e.dialog != nil {
		return
	}
	if items, word := e.completions(); len(items) > 0 {
		e.complete(items[e.menuSel], word)
		return
	}
	if e.opt.Persona == "codex" && e.busy && e.inputText() != "" {
		e.accept("queued")
	}
}

func (e *engine) enter() {
	now := time.Now()
	if d := e.dialog; d != nil {
		if d.textBox {
			if len(d.text) > 0 {
				e.dialog = nil
				e.logEntry("dialog", string(d.text))
				d.submit(string(d.text))
			}
			return
		}
		if d.panel {
			return // a panel swallows keys until Esc
		}
		e.choose(d.sel)
		return
	}
	switch e.opt.Persona {
	case "claude":
		if e.opt.EnterGuard > 0 && now.Sub(e.pasteEnd) < e.opt.EnterGuard {
			return // the Enter right after a paste is lost
		}
		if items, word := e.completions(); len(items) > 0 && !items[0].slash {
			e.complete(items[e.menuSel], word) // Enter picks the file
			return
		}
		if e.backslashNewline() {
			return
		}
	case "codex":
		if e.opt.Burst && now.Before(e.burstUntil) {
			e.typeText("\n", false)
			return
		}
		if items, word := e.completions(); len(items) > 0 {
			e.complete(items[e.menuSel], word) // Enter inserts the pick
			return
		}
	case "gemini":
		if e.enterLost {
			return // still initializing: the Enter is lost
		}
		if now.Sub(e.lastTyped) < 30*time.Millisecond || now.Sub(e.pasteEnd) < e.opt.PasteGuard {
			e.typeText("\n", false)
			return
		}
		if items, word := e.completions(); len(items) > 0 {
			// Enter picks the highlighted completion: a command is run at
			// once, a path is put into the input.
			if e.complete(items[e.menuSel], word) {
				return
			}
		}
		if e.backslashNewline() {
			return
		}
	}
	if strings.TrimSpace(e.inputText()) == "" {
		return
	}
	if e.interpret() {
		return
	}
	mode := "submit"
	if e.busy || e.initPhase {
		mode = "queued"
		if e.opt.Persona == "codex" {
			mode = "steer"
		}
	}
	e.accept(mode)
}

// logEntry appends one entry to the mock log.
func (e *engine) logEntry(mode, text string) {
	e.seq++
	_ = mocklog.Append(e.opt.LogPath, mocklog.Entry{Agent: e.opt.Persona, Pane: e.opt.Pane, Seq: e.seq, Mode: mode, Text: text, Time: time.Now().UTC()})
}

// accept takes the input as a submission.
func (e *engine) accept(mode string) {
	text := e.inputText()
	e.setInput("")
	e.fresh = false
	e.logEntry(mode, text)
	if e.initPhase && mode == "queued" && len(e.queue) == 0 {
		e.addHistory("ℹ Initializing... Prompts will be queued.", "")
	}
	if e.opt.Replay != nil {
		e.replayInput(text)
		return
	}
	switch e.opt.Persona { // the log keeps what was typed
	case "gemini", "codex":
		text = strings.TrimSpace(text)
	case "claude":
		// Claude keeps leading whitespace, trims trailing, and a tab is
		// four spaces.
		text = strings.TrimRightFunc(strings.ReplaceAll(text, "\t", "    "), unicode.IsSpace)
	}
	switch mode {
	case "submit":
		e.startTurn([]string{text})
	case "queued":
		e.queue = append(e.queue, text)
	case "steer":
		e.steer(text)
	}
}

func (e *engine) choose(item int) {
	d := e.dialog
	e.dialog = nil
	e.logEntry("dialog", strconv.Itoa(item+1))
	d.choose(item)
}

func (e *engine) trustDialog() {
	d := &dialog{no: 1, choose: func(item int) {
		if item == 1 {
			e.quit(1)
			return
		}
		e.nextStartup()
	}}
	cwd, _ := os.Getwd()
	switch e.opt.Persona {
	case "codex":
		d.title = []string{"", "  Folder access", "  " + cwd, "", "  Trust this folder? Codex can read, edit, and run files here, subject to your permission", "  settings. Your trust decision will be saved.", ""}
		d.items = []string{"Trust and continue", "Back to Agent Command Center"}
		d.after = []string{"", "  enter continue · esc back"}
	case "gemini":
		d.title = []string{"", "Do you trust the files in this folder?", "", "Trusting a folder allows Gemini CLI to load its local configurations, including custom", "commands, hooks, MCP servers, agent skills, and settings.", "", ""}
		d.items = []string{"Trust folder (" + filepath.Base(cwd) + ")", "Trust parent folder (" + filepath.Base(filepath.Dir(cwd)) + ")", "Don't trust"}
		d.after = []string{""}
		d.no = -1
		d.choose = func(int) { e.nextStartup() }
	default:
		d.title = []string{" Accessing workspace:", "", " " + cwd, "", " Quick safety check: Is this a project you created or one you trust?", "",
			" Claude Code'll be able to read, edit, and execute files here.", ""}
		d.items = []string{"Yes, I trust this folder", "No, exit"}
		d.indent = " "
		d.after = []string{"", " Enter to confirm · Esc to cancel"}
	}
	e.dialog = d
}

// authDialog is gemini's auth-method dialog; its second item opens the
// API-key box.
func (e *engine) authDialog() {
	e.dialog = &dialog{
		title:  []string{"", "? Get started", "", "  How would you like to authenticate for this project?", ""},
		items:  []string{"Sign in with Google", "Use Gemini API Key", "Vertex AI"},
		indent: "  ",
		sel:    1,
		no:     -1,
		after:  []string{"", "  (Use Enter to select)", ""},
		choose: func(item int) {
			if item == 1 {
				e.apiKeyBox()
				return
			}
			e.nextStartup()
		},
	}
}

func (e *engine) apiKeyBox() {
	e.dialog = &dialog{
		textBox: true,
		title: []string{"", "Enter Gemini API Key", "", "Please enter your Gemini API key. It will be securely stored in your system keychain.",
			"You can get an API key from https://aistudio.google.com/app/apikey", ""},
		after:  []string{"", "(Press Enter to submit, Esc to cancel, Ctrl+C to clear stored key)", ""},
		submit: func(string) { e.nextStartup() },
		cancel: e.authDialog,
	}
}

// startTurn sends messages to the model as one turn. Claude runs its
// UserPromptSubmit hooks first, one per message, while the screen goes on.
func (e *engine) startTurn(msgs []string) { e.turn(msgs, true) }

// turn starts a turn on msgs; user says they are the user's messages
// (echoed, with claude's UserPromptSubmit hooks and prompt_ids), not what
// the agent sends on its own (claude's bash-mode follow-up).
func (e *engine) turn(msgs []string, user bool) {
	e.turns++
	e.gen++
	e.busy, e.busySince = true, time.Now()
	e.prompts, e.promptIDs = msgs, nil
	e.prompt = msgs[len(msgs)-1]
	e.answer, e.step, e.steps, e.tokens, e.firstToken = nil, 0, nil, 0, false
	e.verb = gerunds[rand.IntN(len(gerunds))]
	var submits []map[string]any
	if !user {
		e.promptIDs = []string{newUUID()}
		e.plan()
		return
	}
	for _, m := range msgs {
		e.addHistory(e.userLine(m)...)
		switch e.opt.Persona {
		case "claude":
			id := newUUID()
			e.promptIDs = append(e.promptIDs, id)
			submits = append(submits, map[string]any{"prompt": m, "prompt_id": id})
		case "codex":
			e.inputs = append(e.inputs, m)
		}
	}
	e.rollout.turnStarted(msgs)
	e.transcript.prompts(msgs, e.promptID())
	gen := e.gen
	resume := func() {
		e.events <- func() {
			if e.gen == gen {
				e.plan()
			}
		}
	}
	if e.hooks.claudeEach("UserPromptSubmit", submits, resume) || e.hooks.gemini(e.opt.Persona, "BeforeAgent", map[string]any{"prompt": e.prompt}, resume) {
		return
	}
	e.plan()
}

// plan starts the script's answer to the turn's prompt.
func (e *engine) plan() {
	e.steps, e.groups = e.opt.Script.Plan(e.prompt)
	e.step = 0
	e.next()
}

// steer is codex's Enter while busy: the model request in flight is
// abandoned and sent again with the new message, in the same turn.
func (e *engine) steer(text string) {
	e.addHistory(e.userLine(text)...)
	e.inputs = append(e.inputs, text)
	e.rollout.userMessage(text)
	e.gen++
	e.prompts = append(e.prompts, text)
	e.prompt = text
	e.plan()
}

// next runs steps until one has to wait.
func (e *engine) next() {
	for e.step < len(e.steps) {
		st := e.steps[e.step]
		e.step++
		switch st.Kind {
		case "think":
			e.laterInTurn(st.Dur, e.next)
			return
		case "say":
			text := script.Expand(st.Arg, e.groups)
			e.answer = append(e.answer, text)
			e.tokens += max(1, utf8.RuneCountInString(text)/4)
			e.firstToken = true
			e.addHistory(e.answerLines(text)...)
			e.transcript.assistant(text)
			if strings.Contains(text, "[[/POLI:MSG]]") {
				e.trace("block")
				e.draw()
			}
		case "echo":
			e.addHistory(strings.Split(strings.Join(e.prompts, "\n"), "\n")...)
		case "flood":
			e.flood(st.Size)
		case "marker":
			for _, p := range e.prompts {
				if nonce, ok := script.MarkerNonce(p); ok {
					e.trace("marker")
					e.addHistory("PARTY_DONE_" + nonce)
					e.draw()
				}
			}
		case "write":
			path, text := st.WriteArgs(e.groups)
			abs, _ := filepath.Abs(path)
			e.tool("Write", map[string]any{"file_path": abs, "content": text}, "Write("+path+")", func() (string, error) {
				if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
					return "", err
				}
				return fmt.Sprintf("Wrote %d bytes", len(text)), os.WriteFile(abs, []byte(text), 0o644)
			})
			return
		case "run":
			cmd := script.Expand(st.Arg, e.groups)
			e.tool("Bash", map[string]any{"command": cmd}, "Bash("+cmd+")", func() (string, error) {
				out, err := exec.Command("sh", "-c", cmd).CombinedOutput()
				return string(out), err
			})
			return
		case "permission":
			e.permission(script.Expand(st.Arg, e.groups))
			return
		case "fail":
			e.fail(st.Arg)
			return
		case "crash":
			e.quit(st.Code)
			return
		case "hang":
			return
		case "freeze":
			e.endTurn()
			e.draw()
			select {} // the engine's one goroutine stops: nothing is read or drawn again
		}
	}
	e.endTurn()
}

// flood prints size bytes of numbered lines straight to the terminal, in
// place of the live rows, and draws them again below: an agent (or a tool
// it runs) printing far more than a screen holds.
func (e *engine) flood(size int64) {
	e.trace("flood")
	defer e.trace("flooded")
	e.draw() // what came before is printed first
	var b strings.Builder
	b.WriteString("\r")
	if e.liveRows > 1 {
		fmt.Fprintf(&b, "\x1b[%dA", e.liveRows-1)
	}
	b.WriteString("\x1b[J")
	line := 0
	for written := int64(0); written < size; {
		for b.Len() < 64<<10 && written < size {
			n, _ := fmt.Fprintf(&b, "flood %08d %s\r\n", line, strings.Repeat("x", 60))
			written += int64(n)
			line++
		}
		_, _ = io.WriteString(e.out, b.String())
		b.Reset()
	}
	e.liveRows = 1
	e.draw()
}

// promptID is claude's prompt_id of the turn: the last message's.
func (e *engine) promptID() string {
	if len(e.promptIDs) == 0 {
		return ""
	}
	return e.promptIDs[len(e.promptIDs)-1]
}

// tool runs a tool the way the agent does, off the loop: claude's
// PreToolUse hooks may deny it, then do runs, then the PostToolUse hooks
// see its result. The screen shows the call and the start of its output;
// the turn goes on when it is done.
func (e *engine) tool(name string, input map[string]any, call string, do func() (string, error)) {
	gen := e.gen
	claude := e.opt.Persona == "claude"
	useID, promptID := "toolu_"+strings.ReplaceAll(newUUID(), "-", "")[:24], e.promptID()
	go func() {
		var out string
		var err error
		deny := ""
		if claude {
			deny = e.hooks.claudeTool("PreToolUse", name, map[string]any{"tool_input": input, "tool_use_id": useID, "prompt_id": promptID})
		}
		if deny == "" {
			start := time.Now()
			out, err = do()
			if claude {
				stderr := ""
				if err != nil {
					stderr = err.Error()
				}
				e.hooks.claudeTool("PostToolUse", name, map[string]any{"tool_input": input, "tool_use_id": useID, "prompt_id": promptID,
					"tool_response": map[string]any{"stdout": out, "stderr": stderr, "interrupted": false, "isImage": false, "noOutputExpected": false},
					"duration_ms":   time.Since(start).Milliseconds()})
			}
		}
		e.events <- func() {
			if e.gen != gen {
				return
			}
			e.addHistory(e.toolLines(call, out, err, deny)...)
			e.next()
		}
	}()
}

// toolLines is how a tool call shows in history.
func (e *engine) toolLines(call, out string, err error, deny string) []string {
	head, sub := "• Ran "+strings.TrimSuffix(strings.TrimPrefix(call, "Bash("), ")"), "  └ "
	switch e.opt.Persona {
	case "claude":
		head, sub = "● "+call, "  ⎿  "
	case "gemini":
		head, sub = "✓  "+call, "   "
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
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			body = append(body, "Error: Exit code "+strconv.Itoa(ee.ExitCode()))
		} else if err != nil {
			body = append(body, "Error: "+err.Error())
		}
	}
	lines := []string{head}
	for i, l := range body {
		if i == 0 {
			lines = append(lines, sub+l)
		} else {
			lines = append(lines, strings.Repeat(" ", utf8.RuneCountInString(sub))+l)
		}
	}
	return lines
}

// permission asks to run cmd. Claude runs its PreToolUse hooks first (a
// denial skips the dialog), then opens the dialog, runs PermissionRequest
// and, NotifyDelay later if the dialog is still open, the permission
// Notification. Choosing No ends the turn without any hook.
func (e *engine) permission(cmd string) {
	if e.opt.Persona != "claude" {
		e.openPermission(cmd)
		return
	}
	gen, promptID := e.gen, e.promptID()
	input := map[string]any{"command": cmd, "description": "Run " + firstWord(cmd)}
	go func() {
		deny := e.hooks.claudeTool("PreToolUse", "Bash", map[string]any{"tool_input": input, "prompt_id": promptID,
			"tool_use_id": "toolu_" + strings.ReplaceAll(newUUID(), "-", "")[:24]})
		e.events <- func() {
			if e.gen != gen {
				return
			}
			if deny != "" {
				e.addHistory(e.toolLines("Bash("+cmd+")", "", nil, deny)...)
				e.next()
				return
			}
			e.openPermission(cmd)
			e.transcript.toolUse("Bash", input)
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

func (e *engine) openPermission(cmd string) {
	d := &dialog{}
	cwd, _ := os.Getwd()
	switch e.opt.Persona {
	case "codex":
		e.addHistory("• Running "+cmd, "")
		d.title = []string{"  Would you like to run the following command?", "", "  Environment: local", "", "  Reason: the script asked for it", "", "  $ " + cmd, ""}
		d.items = []string{"Yes, proceed (y)", "Yes, and don't ask again for commands that start with `" + cmd + "` (p)", "No, and tell Codex what to do differently (esc)"}
		d.keys = map[rune]int{'y': 0, 'p': 1}
		d.after = []string{"", "  Press enter to confirm or esc to cancel"}
		e.rollout.askPermission(cmd)
	case "gemini":
		d.title = append(append([]string{"? Shell  " + cmd}, box(min(e.w, 80)-4, cmd)...), "Allow execution of [Shell]?", "")
		d.items = []string{"Allow once", "Allow for this session", "No, suggest changes (esc)"}
		e.hooks.geminiPermission(e.opt.Persona, cmd)
	default:
		e.addHistory("● Bash(" + cmd + ")")
		d.lead = []string{"  ⎿  Waiting…", ""}
		d.rule = true
		d.title = []string{" Bash command", "", "   " + cmd, "   Run " + cmd, "", " Do you want to proceed?"}
		d.items = []string{"Yes", "Yes, and always allow access to " + filepath.Base(cwd) + "/ from this project", "No"}
		d.indent = " "
		d.after = []string{"", " Esc to cancel · Tab to amend · ctrl+e to explain"}
	}
	d.no = len(d.items) - 1
	d.choose = func(item int) {
		e.rollout.answered(item != d.no)
		if item == d.no {
			switch e.opt.Persona {
			case "codex":
				e.addHistory("✗ You canceled the request to run "+cmd, "")
			case "gemini":
				e.addHistory("ℹ Request cancelled.", "")
			default:
				e.addHistory("  ⎿  Interrupted · What should Claude do instead?", "")
				e.transcript.refused()
			}
			e.stopTurn()
			return
		}
		if e.opt.Persona == "claude" {
			e.addHistory("  ⎿  (No content)", "")
		}
		e.next()
	}
	e.dialog = d
}

// fail ends the turn with an API error: claude runs StopFailure (no
// Stop), codex sends no notify.
func (e *engine) fail(kind string) {
	code := map[string]int{"rate_limit": 429, "server_error": 500, "api_error": 500, "overloaded": 529,
		"authentication_failed": 401, "billing_error": 402, "invalid_request": 400}[kind]
	if code == 0 {
		code = 400
	}
	switch e.opt.Persona {
	case "claude":
		msg := fmt.Sprintf("API Error: %d mock %s", code, kind)
		e.addHistory("● "+msg, "")
		e.transcript.apiError(kind, msg, code)
		e.hooks.claudeEvent("StopFailure", map[string]any{"error": kind, "last_assistant_message": msg, "prompt_id": e.promptID()})
		e.addHistory("✻ "+pastVerbs[rand.IntN(len(pastVerbs))]+" for "+claudeDur(time.Since(e.busySince)), "")
	case "codex":
		e.addHistory(fmt.Sprintf(`■ {"error":{"code":null,"message":"mock %s","type":%q}}`, kind, kind), "")
		e.rollout.completed("", "mock "+kind)
	case "gemini":
		e.addHistory(fmt.Sprintf(`✕ [API Error: {"error":{"code":%d,"message":"mock %s","status":%q}}]`, code, kind, strings.ToUpper(kind)), "",
			`ℹ This request failed. Press F12 for diagnostics, or run /settings and change "Error Verbosity" to full for full`, "  details.", "")
		e.hooks.gemini(e.opt.Persona, "AfterAgent", map[string]any{"prompt": e.prompt, "prompt_response": "[no response text]", "stop_hook_active": false}, func() {})
	default:
		e.addHistory("API Error: " + kind)
	}
	e.stopTurn()
}

// interrupt is Esc during a turn: it stops without any hook or notify
// (gemini: an AfterAgent with no response text); claude puts the prompt
// (and what was queued) back into the input.
func (e *engine) interrupt() {
	switch e.opt.Persona {
	case "claude":
		// What was queued runs at once; with nothing queued the prompt goes
		// back into the input.
		e.addHistory("  ⎿  Interrupted · What should Claude do instead?", "")
		e.transcript.interrupted()
		if e.opt.EscRestore && len(e.queue) == 0 {
			back := strings.Join(e.prompts, "\n")
			if cur := e.inputText(); cur != "" {
				back += "\n" + cur
			}
			e.setInput(back)
		}
	case "codex":
		// What was queued goes back into the input.
		e.addHistory("■ Conversation interrupted - use /feedback if something went wrong", "")
		e.rollout.aborted()
		if len(e.queue) > 0 {
			back := strings.Join(e.queue, "\n")
			if cur := e.inputText(); cur != "" {
				back += "\n" + cur
			}
			e.queue = nil
			e.setInput(back)
		}
	case "gemini":
		// Measured on gemini 0.61: Esc before the answer runs AfterAgent
		// with no response text, like a failed request; only the screen
		// tells the two apart.
		e.addHistory("ℹ Request cancelled.", "")
		e.hooks.gemini(e.opt.Persona, "AfterAgent", map[string]any{"prompt": e.prompt, "prompt_response": "[no response text]", "stop_hook_active": false}, func() {})
	default:
		e.addHistory("interrupted")
	}
	e.stopTurn()
}

// endTurn finishes the running turn normally: claude's Stop hooks (the
// busy line says so while they run), codex's notify; then what was queued
// is sent.
func (e *engine) endTurn() {
	answer := strings.Join(e.answer, "\n")
	switch e.opt.Persona {
	case "claude":
		e.trace("stop")
		payload := map[string]any{"stop_hook_active": false, "last_assistant_message": answer, "prompt_id": e.promptID(),
			"effort": "medium", "background_tasks": []any{}, "session_crons": []any{}}
		gen := e.gen
		e.stopTotal = e.hooks.claudeProgress("Stop", payload, func(done int) {
			e.events <- func() {
				if e.gen != gen {
					return
				}
				e.stopDone = done
				if done == e.stopTotal {
					e.finish()
				}
			}
		})
		if e.stopTotal > 0 {
			e.stopping, e.stopDone, e.stopSince = true, 0, time.Now()
			return
		}
	case "codex":
		e.trace("notify")
		inputs := e.prompts
		if e.opt.AllInputs {
			inputs = e.inputs
		}
		e.rollout.completed(answer, "")
		e.hooks.codexTurn(e.thread, e.rollout.turn, inputs, answer)
	case "gemini":
		e.trace("after-agent")
		gen := e.gen
		if e.hooks.gemini(e.opt.Persona, "AfterAgent", map[string]any{"prompt": e.prompt, "prompt_response": answer, "stop_hook_active": false}, func() {
			e.events <- func() {
				if e.gen == gen {
					e.finish()
				}
			}
		}) {
			return
		}
	}
	e.finish()
}

// finish prints the turn's summary and goes idle (or on with the queue).
func (e *engine) finish() {
	took := time.Since(e.busySince)
	switch e.opt.Persona {
	case "claude":
		e.addHistory("✻ "+pastVerbs[rand.IntN(len(pastVerbs))]+" for "+claudeDur(took), "")
		e.transcript.end()
	case "codex":
		d := "<1s"
		if took >= time.Second {
			d = codexDur(took)
		}
		e.addHistory("  Worked for "+d+" • "+time.Now().Format("15:04"), "")
	}
	e.stopTurn()
}

// stopTurn leaves the turn and sends what was queued: claude all of it as
// one turn, gemini merged into one prompt, codex one at a time.
func (e *engine) stopTurn() {
	e.gen++
	e.busy, e.stopping = false, false
	e.sendQueue()
}

// sendQueue starts a turn on what was queued, if anything.
func (e *engine) sendQueue() {
	if len(e.queue) == 0 {
		return
	}
	var msgs []string
	switch {
	case e.opt.Persona == "claude" && e.opt.Batch:
		msgs, e.queue = e.queue, nil
	case e.opt.Persona == "gemini" && e.opt.Merge:
		msgs, e.queue = []string{strings.Join(e.queue, "\n\n")}, nil
	default:
		msgs, e.queue = e.queue[:1], e.queue[1:]
	}
	e.startTurn(msgs)
}

// trace records when the agent emitted a completion, for benchmarks.
func (e *engine) trace(what string) {
	if e.opt.TracePath != "" {
		_ = mocklog.Append(e.opt.TracePath, mocklog.Entry{Agent: e.opt.Persona, Pane: e.opt.Pane, Mode: what, Time: time.Now()})
	}
}

// userLine is how a submitted prompt shows in history.
func (e *engine) userLine(text string) []string {
	lines := strings.Split(text, "\n")
	if len(text) > 200 || len(lines) > 4 {
		lines = []string{fmt.Sprintf("[%d chars]", len(text))}
	}
	lead, cont := "mock> ", "      "
	switch e.opt.Persona {
	case "claude":
		lead, cont = "❯ ", "  "
	case "codex":
		lead, cont = "› ", "  "
	case "gemini":
		lead, cont = " > ", "   "
	}
	out := make([]string, 0, len(lines)+2)
	if e.opt.Persona == "gemini" {
		out = append(out, "") // the grey block's top
	}
	for i, l := range lines {
		if i == 0 {
			out = append(out, lead+l)
		} else {
			out = append(out, cont+l)
		}
	}
	if e.opt.Persona != "generic" {
		out = append(out, "")
	}
	return out
}

func (e *engine) answerLines(text string) []string {
	lead := map[string]string{"claude": "● ", "codex": "• ", "gemini": "✦ "}[e.opt.Persona]
	lines := strings.Split(text, "\n")
	if lead == "" {
		return lines
	}
	for i := range lines {
		if i == 0 {
			lines[i] = lead + lines[i]
		} else if lines[i] != "" {
			lines[i] = "  " + lines[i]
		}
	}
	return append(lines, "")
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
		pad := max(0, inner-width(l))
		out = append(out, "│ "+l+strings.Repeat(" ", pad)+" │")
	}
	return append(out, "╰"+strings.Repeat("─", w-2)+"╯")
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return s
}

// The words of claude's busy line and of its turn summary.
var (
	gerunds = []string{"Skedaddling", "Pondering", "Whirring", "Cogitating", "Noodling", "Percolating", "Ruminating",
		"Simmering", "Moseying", "Schlepping", "Unravelling", "Fluttering", "Sock-hopping", "Hatching", "Marinating", "Wrangling"}
	pastVerbs = []string{"Sautéed", "Churned", "Worked", "Brewed", "Cooked", "Baked", "Crunched", "Cogitated", "Mulled"}
)

// shownDur is a duration in whole seconds as the agents show it: 6s,
// 1m 52s, 1h 2m 3s (claude rounds, gemini truncates), or with padded
// minutes and seconds as codex does: 1m 04s, 1h 02m 03s.
func shownDur(d time.Duration, padded bool) string {
	s := int(d / time.Second)
	hms, ms := "%dh %dm %ds", "%dm %ds"
	if padded {
		hms, ms = "%dh %02dm %02ds", "%dm %02ds"
	}
	switch {
	case s >= 3600:
		return fmt.Sprintf(hms, s/3600, s%3600/60, s%60)
	case s >= 60:
		return fmt.Sprintf(ms, s/60, s%60)
	}
	return fmt.Sprintf("%ds", s)
}

func claudeDur(d time.Duration) string { return shownDur(d.Round(time.Second), false) }
func codexDur(d time.Duration) string  { return shownDur(d, true) }
func geminiDur(d time.Duration) string { return shownDur(d, false) }
