package mockagents

import (
	"bytes"
	"io"
	"os"
	"time"

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

// engine is one running mock agent: the screen, the input, the queue, the
// turns and the script, which every persona shares; what one agent does
// its own way is its persona's (persona.go). All its state belongs to the
// run loop.
type engine struct {
	opt    Options
	p      persona
	out    io.Writer
	size   func() (int, int)
	w, h   int
	events chan func()

	ready     bool     // past the start delay
	early     [][]byte // input read before ready
	startup   []func() // dialogs still to show at start
	initPhase bool     // the prompt is up but the agent still initializes (gemini)
	rawPhase  bool     // the first third of that: keys wait, then are read one by one
	enterLost bool     // the second third: an Enter is lost

	input     []segment
	tail      string // the input after the cursor (codex: a refused command stays there, the cursor before it)
	pastes    int
	inPaste   bool
	pasteBuf  bytes.Buffer
	pending   []byte // an incomplete escape sequence or UTF-8 char
	pasteEnd  time.Time
	lastTyped time.Time
	fresh     bool // nothing submitted yet (claude's Try hint)
	menuSel   int  // highlighted completion
	menuOff   bool // menu dismissed with Esc until the input changes

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
	prompt     string   // what the script answers (the last message)
	steps      []script.Step
	groups     []string
	step       int
	answer     []string
	resp       response // the model response the steps are making
	tokens     int
	firstToken bool

	hooks *hooks
	exit  chan int
	done  chan struct{} // closed when run returns: shell commands still running are killed

	startedAt time.Time
}

func newEngine(opt Options, out io.Writer, size func() (int, int)) *engine {
	e := &engine{opt: opt, out: out, size: size, events: make(chan func(), 256), exit: make(chan int, 1), done: make(chan struct{}), fresh: true, startedAt: time.Now()}
	e.w, e.h = size()
	e.hooks = newHooks(opt.Settings, opt.Notify)
	if opt.Resume != "" {
		e.hooks.session = opt.Resume
	}
	e.p = newPersona(e)
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
		e.addHistory(e.p.banner()...)
		// A resumed session shows its conversation, as the real agents do.
		for _, t := range past(e.opt) {
			if t.user {
				e.addHistory(e.userLine(t.text)...)
			} else {
				e.addHistory(e.answerLines(t.text)...)
			}
		}
		e.p.boot()
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

// start ends the start delay: the persona gets ready (claude's
// SessionStart hook runs, gemini sends what it queued meanwhile), the
// startup dialogs open, and the keys typed meanwhile are read.
func (e *engine) start() {
	e.ready = true
	e.p.ready()
	e.startup = append(e.startup, e.p.startDialogs()...)
	e.nextStartup()
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

// trustDialog asks whether to trust the working directory: the second
// item quits, unless the persona says otherwise.
func (e *engine) trustDialog() {
	d := &dialog{no: 1, choose: func(item int) {
		if item == 1 {
			e.quit(1)
			return
		}
		e.nextStartup()
	}}
	e.p.trustDialog(d)
	e.dialog = d
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

// logEntry appends one entry to the mock log.
func (e *engine) logEntry(mode, text string) {
	e.seq++
	_ = mocklog.Append(e.opt.LogPath, mocklog.Entry{Agent: e.opt.Persona, Pane: e.opt.Pane, Seq: e.seq, Mode: mode, Text: text, Time: time.Now().UTC()})
}

// trace records when the agent emitted a completion, for benchmarks.
func (e *engine) trace(what string) {
	if e.opt.TracePath != "" {
		_ = mocklog.Append(e.opt.TracePath, mocklog.Entry{Agent: e.opt.Persona, Pane: e.opt.Pane, Mode: what, Time: time.Now()})
	}
}

func (e *engine) addHistory(lines ...string) { e.history = append(e.history, lines...) }
