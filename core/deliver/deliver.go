package deliver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/observe"
)

// Outcome is how a delivery ended.
type Outcome string

// Delivery outcomes. Unconfirmed and Failed are errors for the caller.
const (
	Submitted   Outcome = "submitted"   // the agent took the message
	Queued      Outcome = "queued"      // the agent was busy and queued it
	Unconfirmed Outcome = "unconfirmed" // pasted and Enter pressed, but not seen taken
	Failed      Outcome = "failed"      // not delivered
)

// Errors a delivery can end with; wrapped with the pane id.
var (
	ErrPaneDead    = errors.New("pane is dead")
	ErrNotRunning  = errors.New("pane is not running its agent")
	ErrDialog      = errors.New("a menu or dialog is on screen")
	ErrUnconfirmed = errors.New("submission not confirmed")
	ErrEmpty       = errors.New("nothing to send")
	ErrInputBusy   = errors.New("the input box already holds text")
	ErrNotReady    = errors.New("the agent did not show its input box")
	// ErrNotAgent is text an agent wrote, refused for a pane that runs a
	// shell or another program (NotAgentError says which).
	ErrNotAgent = errors.New("not an agent's pane")
	// ErrInterpreted is a text the agent would run as a command.
	ErrInterpreted = agent.ErrInterpreted
)

// NotAgentError is text an agent wrote refused for a pane that does not
// run claude, codex or gemini: a shell would run it as a command, another
// program may too.
type NotAgentError struct {
	Pane string
	Kind agent.Kind // the pane's agent: shell, generic
	Why  string     // "shell" or "program" (agent.TakesAgentText)
}

func (e *NotAgentError) Error() string {
	return fmt.Sprintf("send to %s: it runs a %s, not claude, codex or gemini: text an agent wrote is never typed into it (route.allowRoles opts its role in)",
		e.Pane, e.Why)
}

// Unwrap makes errors.Is(err, ErrNotAgent) true.
func (e *NotAgentError) Unwrap() error { return ErrNotAgent }

// CheckAgentText returns a *NotAgentError when text an agent wrote must
// not be typed into pane, whose agent is kind (agent.TakesAgentText);
// nil for claude, codex and gemini.
func CheckAgentText(pane string, kind agent.Kind) error {
	if ok, why := agent.TakesAgentText(kind); !ok {
		return &NotAgentError{Pane: pane, Kind: kind, Why: why}
	}
	return nil
}

// Locker serializes deliveries to one pane across processes, first come
// first served.
type Locker interface {
	// Lock blocks until key is held or ctx is done.
	Lock(ctx context.Context, key string) (unlock func(), err error)
}

// Request is one message for one pane.
type Request struct {
	Pane    string        // pane id, e.g. "%3"
	Profile agent.Profile // how the agent in the pane behaves (settle tuned)
	Text    string        // as given; Sanitize is applied
	// Force pastes even when a dialog or menu is on screen and presses
	// Enter once, unconfirmed by the input box (the operator knows).
	Force bool
	// Raw sends the text as the agent reads it: a leading "/" or "!" is
	// its command. Text an agent wrote is never sent raw.
	Raw bool
	// AgentsOnly is set for text an agent wrote, or that party sends on
	// an agent's behalf (route, relay, the review loop's notices): it is
	// typed only into claude, codex or gemini (agent.TakesAgentText) and
	// refused for a shell or another program with a *NotAgentError,
	// before anything is pasted. Callers leave it off for a role the user
	// opted in (route.allowRoles).
	AgentsOnly bool
	// Clear empties the input box when it holds someone else's text,
	// instead of refusing.
	Clear bool
	// Ready is how long an agent still starting is waited for; zero means
	// DefaultReady.
	Ready time.Duration
	// Pasting, when set, is called once the pane is found ready, under
	// its lock, just before the paste: where a wait marks the position of
	// the paste on screen.
	Pasting func(ctx context.Context)
}

// DefaultReady is how long a delivery waits for an agent to show its
// input box: gemini takes 4-10 s after start.
const DefaultReady = 30 * time.Second

// Result reports a delivery.
type Result struct {
	Outcome  Outcome       `json:"outcome"`
	Pane     string        `json:"pane"`
	Bytes    int           `json:"bytes"`
	Enters   int           `json:"enters"` // Enter (or Tab) presses
	WasBusy  bool          `json:"busy"`
	Via      string        `json:"confirmed_by,omitempty"` // event, screen
	Screen   string        `json:"-"`                      // last screen seen, for errors
	Duration time.Duration `json:"-"`
}

// Deliverer runs the protocol over a multiplexer.
type Deliverer struct {
	Mux    mux.Multiplexer
	Clock  clock.Clock
	Locker Locker
	// Events is the session's event log, where agents with hooks announce
	// each submission; the zero value reads none.
	Events observe.Events
	// Retries is how many times Enter is pressed again while the box
	// still holds the text after the first press. Zero means 3.
	Retries int
	// Confirm is how long the first Enter is watched before looking again;
	// each retry doubles it. Zero means 400ms.
	Confirm time.Duration
	// Poll is the interval between screen captures. Zero means 5ms.
	Poll time.Duration
	// Pasted, when set, is told each text as soon as it is in the pane,
	// before Enter (recordings log it as input).
	Pasted func(pane, text string)
	// Step, when set, is told each step of a submission as soon as it is
	// done: "paste" (the text is in the pane), "check" (the box showed it;
	// the first key follows), "enter" (the first key was pressed), and is
	// called on the sending goroutine. The supervisor's crash tests stop
	// it there.
	Step func(step string)
	// Working, when set, says whether the agent of kind in pane p works
	// on a turn where its screen shows no sign of it: Codex streaming an
	// answer shows no busy line, and its Enter would steer the running
	// turn instead of queueing. Asked only before a key is pressed.
	Working func(kind agent.Kind, p mux.Pane) bool
	// Announcing, when set, says whether the agent in pane p runs its
	// submit hook now (Claude's UserPromptSubmit, Gemini's BeforeAgent):
	// it took an Enter and reads no key until the hook ends, its box still
	// showing the text. No further Enter is pressed then: queued behind
	// keys someone types meanwhile, unseen on the screen, it would submit
	// their text once the agent reads them.
	Announcing func(p mux.Pane) bool
}

// Send delivers req. On refusal the error wraps ErrPaneDead,
// ErrNotRunning, ErrDialog, ErrInputBusy, ErrNotReady or ErrInterpreted;
// when the submission was not seen the outcome is Unconfirmed and the
// error wraps ErrUnconfirmed.
func (d *Deliverer) Send(ctx context.Context, req Request) (Result, error) {
	start := d.Clock.Now()
	res := Result{Outcome: Failed, Pane: req.Pane, Bytes: len(Sanitize(req.Text))}
	text, err := req.pasteText()
	if err != nil {
		return res, err
	}
	res.Bytes = len(text)
	unlock, err := d.Locker.Lock(ctx, req.Pane)
	if err != nil {
		return res, fmt.Errorf("send to %s: waiting for earlier sends: %w", req.Pane, err)
	}
	defer unlock()

	st, err := d.ready(ctx, req)
	res.Screen = st.Screen
	if err != nil {
		return res, err
	}
	res.WasBusy = st.Busy
	events := st.Pane.Hooks != ""
	mark := d.Events.Mark()
	if req.Pasting != nil {
		req.Pasting(ctx)
	}
	if err := d.Mux.Paste(ctx, req.Pane, []byte(text)); err != nil {
		return res, fmt.Errorf("send to %s: paste: %w", req.Pane, err)
	}
	if d.Pasted != nil {
		d.Pasted(req.Pane, text)
	}
	d.step("paste")
	s := submission{d: d, req: req, text: text, events: events, mark: mark, res: &res}
	err = s.run(ctx)
	if err != nil && res.Outcome != Submitted && res.Outcome != Queued {
		if ctx.Err() != nil {
			tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			d.takeBack(tctx, req, text)
			cancel()
		}
	}
	res.Duration = d.Clock.Now().Sub(start)
	return res, err
}

// pasteText is req's text as it is pasted: sanitized, and made plain for
// the agent unless raw. It refuses an empty text, and text an agent wrote
// for a pane that does not run one.
func (req Request) pasteText() (string, error) {
	text := Sanitize(req.Text)
	if strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("send to %s: %w", req.Pane, ErrEmpty)
	}
	if req.AgentsOnly {
		if err := CheckAgentText(req.Pane, req.Profile.Kind); err != nil {
			return "", err
		}
	}
	if !req.Raw {
		plain, err := req.Profile.Literal(text)
		if err != nil {
			return "", fmt.Errorf("send to %s: %w (--raw sends it as a command on purpose)", req.Pane, err)
		}
		text = plain
	}
	return text, nil
}

func (d *Deliverer) step(name string) {
	if d.Step != nil {
		d.Step(name)
	}
}

// ready looks at the pane until the agent takes text: it waits for an
// agent still starting (up to req.Ready) and refuses a dead pane, another
// program, a dialog, a menu, and text in the input box unless req.Clear.
func (d *Deliverer) ready(ctx context.Context, req Request) (observe.State, error) {
	limit := req.Ready
	if limit <= 0 {
		limit = DefaultReady
	}
	deadline := d.Clock.Now().Add(limit)
	clears := 0
	var (
		foreign time.Time // when text was first seen in the box
		shown   time.Time // when the box was first seen ready
	)
	for {
		pane, screen, err := d.Mux.Inspect(ctx, req.Pane)
		if err != nil {
			return observe.State{}, fmt.Errorf("send to %s: %w", req.Pane, err)
		}
		if pane.Dead {
			return observe.State{Pane: pane, Screen: screen}, fmt.Errorf("send to %s (%s): %w", req.Pane, describeDead(pane), ErrPaneDead)
		}
		if !req.Profile.Runs(pane.CurrentCommand) {
			// A pane just started may still run party's launcher
			// (party exec-spec) before it execs the agent, or env: an
			// agent npm installs is a script run by #!/usr/bin/env node
			// (codex, gemini), env until it execs node.
			if (pane.CurrentCommand == launcher || pane.CurrentCommand == "env") && observe.Young(pane.PID, youngAgent) && d.Clock.Now().Before(deadline) {
				if err := d.Clock.Sleep(ctx, readyPoll); err != nil {
					return observe.State{Pane: pane, Screen: screen}, err
				}
				continue
			}
			return observe.State{Pane: pane, Screen: screen}, fmt.Errorf("send to %s: running %q, expected %s: %w",
				req.Pane, pane.CurrentCommand, strings.Join(req.Profile.Commands, " or "), ErrNotRunning)
		}
		if pane.InMode {
			// Copy mode shows the scrollback, not the agent: leave it.
			if err := d.Mux.LeaveMode(ctx, req.Pane); err != nil {
				return observe.State{}, fmt.Errorf("send to %s: leave copy mode: %w", req.Pane, err)
			}
			if screen, err = d.Mux.Capture(ctx, req.Pane, 0); err != nil {
				return observe.State{}, fmt.Errorf("send to %s: %w", req.Pane, err)
			}
		}
		st := observe.Read(req.Profile, pane, screen)
		switch {
		case req.Force:
			return st, nil
		case st.Dialog != "":
			return st, fmt.Errorf("send to %s: %q (answer it, or --force): %w", req.Pane, st.Dialog, ErrDialog)
		case st.Menu:
			return st, fmt.Errorf("send to %s: a completion menu is open over the input (Enter would pick from it): %w", req.Pane, ErrDialog)
		case st.HasInput && st.Input != "":
			if foreign.IsZero() {
				foreign = d.Clock.Now()
			}
			if !req.Clear && d.Clock.Now().Sub(foreign) < foreignGrace {
				break // an earlier submission may still be leaving the box
			}
			if !req.Clear {
				return st, fmt.Errorf("send to %s: it holds %q, not sent by party (someone typing?); --clear removes it first: %w",
					req.Pane, clip(st.Input, 80), ErrInputBusy)
			}
			if clears++; clears > maxClears {
				return st, fmt.Errorf("send to %s: the input box still holds %q after %d Ctrl-U: %w", req.Pane, clip(st.Input, 80), maxClears, ErrInputBusy)
			}
			if err := d.clearLine(ctx, req); err != nil {
				return st, fmt.Errorf("send to %s: clear the input: %w", req.Pane, err)
			}
		case st.Ready(req.Profile):
			// A freshly started agent may show its box before it takes
			// a paste as a paste.
			if w := req.Profile.Warmup; w > 0 && observe.Young(pane.PID, youngAgent) && fresh(req.Profile, st) {
				if shown.IsZero() {
					shown = d.Clock.Now()
				}
				if d.Clock.Now().Sub(shown) < w {
					break
				}
			}
			return st, nil
		case !d.Clock.Now().Before(deadline):
			return st, fmt.Errorf("send to %s: no input box on screen after %s: %w", req.Pane, limit, ErrNotReady)
		}
		if err := d.Clock.Sleep(ctx, readyPoll); err != nil {
			return st, fmt.Errorf("send to %s: waiting for the agent's input box: %w", req.Pane, err)
		}
	}
}

// maxClears bounds the Ctrl-U presses that empty a box (one per line in
// some agents).
const maxClears = 20

// showWindow is how long a paste may take to show in the input box: a
// loaded machine and gemini's placeholder (drawn 0.5-1 s after a long
// paste) take their time.
const showWindow = 5 * time.Second

// hookWait is how long an agent that runs its submit hook is watched for
// the submission it announces, pressing nothing (Deliverer.Announcing).
const hookWait = 10 * time.Second

// foreignGrace is how long text in the input box is watched before it is
// taken for someone else's: the agent may still be clearing a submission.
const foreignGrace = 300 * time.Millisecond

// launcher is the pane command of party's launcher, which execs the agent.
const launcher = "party"

// youngAgent is the age under which an agent's Warmup applies.
const youngAgent = 30 * time.Second

// readyPoll is how often a starting agent is looked at.
const readyPoll = 50 * time.Millisecond

// submission is one pasted text on its way in.
type submission struct {
	d      *Deliverer
	req    Request
	text   string // as pasted
	events bool   // the agent announces submissions in the event log
	mark   int64  // the event log's end before the paste
	res    *Result
}

func (s *submission) run(ctx context.Context) error {
	p, pane := s.req.Profile, s.req.Pane
	blind := len(p.Prompts) == 0 || s.req.Force
	pasted := s.d.Clock.Now()
	_, seen, err := s.showing(ctx, pasted)
	if err != nil {
		return err
	}
	if wait := p.Settle - s.d.Clock.Now().Sub(pasted); wait > 0 {
		if err := s.d.Clock.Sleep(ctx, wait); err != nil {
			return err
		}
	}
	if !blind && !seen {
		over := ""
		if st, err := s.look(ctx); err == nil && st.Menu {
			over = ", a completion menu open over what it shows"
		}
		return fmt.Errorf("send to %s: pasted, but the text never showed whole in its input box%s; Enter not pressed; last screen:\n%s\n%w", pane, over, tail(s.res.Screen), ErrUnconfirmed)
	}
	window := s.d.confirm()
	if p.Confirm > 0 {
		window = p.Confirm
	}
	var (
		keys     []string
		st       observe.State
		lastBusy bool   // the last press queued: the agent was busy, and idle at none before
		idleKey  bool   // a key was pressed while the agent was idle
		stopped  string // why no further key was pressed
		inferred bool   // the last press took it for busy on signs off its screen
	)
	for attempt := 0; attempt <= s.d.retries(); attempt++ {
		// The key follows the screen of the moment: a busy agent may have
		// finished since the last look (codex ignores Tab when idle), or
		// turned busy (its Enter would steer).
		if st, err = s.look(ctx); err != nil {
			return err
		}
		if attempt == 0 && s.events && s.d.Announcing != nil && !blind {
			if st, err = s.hooksQuiet(ctx, st); err != nil {
				return err
			}
		}
		if attempt == 0 && !blind && !(st.HasInput && p.Holds(st.Input, s.text)) {
			// Seen a moment ago: a capture can catch the agent
			// between clearing and redrawing its box. Look again.
			if st, _, err = s.showing(ctx, s.d.Clock.Now()); err != nil {
				return err
			}
		}
		if attempt == 0 && !blind && st.Menu {
			if st, err = s.menuOver(ctx, st); err != nil {
				return err
			}
		}
		if attempt > 0 || !blind {
			// Only into our own text, in an idle box with nothing over it.
			if st, err = s.steady(ctx, st); err != nil {
				return err
			}
			if !s.pressable(st) {
				stopped = unpressed(p, st, s.text)
				break
			}
		}
		if attempt > 0 && s.d.Announcing != nil && s.d.Announcing(st.Pane) {
			// A hook of the agent runs (the last Enter is being taken, or
			// an earlier turn's hook ends): watch, pressing nothing, and
			// look at the box afresh once it is over.
			var ok bool
			if st, ok, err = s.hooked(ctx, st, window); err != nil {
				return err
			} else if ok {
				s.taken(lastBusy)
				return nil
			}
			if s.d.Announcing(st.Pane) {
				stopped = "a hook of the agent still ran"
				break
			}
			if !s.pressable(st) {
				stopped = unpressed(p, st, s.text)
				break
			}
		}
		busy := st.Busy
		switch {
		case busy:
		case inferred:
			// The queue key a busy sign off the screen asked for was
			// not taken: the agent is idle (a rollout a crash left
			// mid-turn says otherwise), and Enter submits.
			inferred = false
		case p.Queueing(st.Screen) || p.TurnStarting(st.Screen):
			// Codex takes the next queued message as a turn ends, a
			// moment before its screen or rollout says it works: the
			// queue key then queues ours, Enter would steer that turn.
			busy, inferred = true, true
		case s.d.Working != nil && s.d.Working(p.Kind, st.Pane):
			busy, inferred = true, true
		}
		if inferred {
			st.Busy, s.res.WasBusy = true, true
		}
		// A turn that starts after a key pressed while the agent was
		// idle is most likely that key's (codex records it in its rollout
		// before a loaded machine draws it): a later key then finds the
		// agent busy, but the text went as a submission, not queued.
		if !busy {
			idleKey = true
		}
		lastBusy = busy && !idleKey
		key := "Enter"
		if busy && p.QueueKey != "" {
			key = p.QueueKey
		}
		if attempt == 0 {
			s.d.step("check")
		}
		if err := s.d.Mux.SendKey(ctx, pane, key); err != nil {
			return fmt.Errorf("send to %s: press %s: %w", pane, key, err)
		}
		if attempt == 0 {
			s.d.step("enter")
		}
		s.res.Enters++
		keys = append(keys, key)
		var ok bool
		st, ok, err = s.watch(ctx, st, window)
		if err != nil {
			return err
		}
		if ok {
			s.taken(lastBusy)
			return nil
		}
		if blind {
			break // never a second Enter into what we cannot see
		}
		window *= 2
	}
	if len(keys) > 0 && !blind {
		// The text left the box some other way, or the agent is slow to
		// say so: watch once more, pressing nothing.
		var ok bool
		if st, ok, err = s.watch(ctx, st, window); err != nil {
			return err
		} else if ok {
			s.taken(lastBusy)
			return nil
		}
	}
	s.res.Outcome = Unconfirmed
	s.res.Screen = st.Screen
	pressed := "nothing: " + unpressed(p, st, s.text)
	if len(keys) > 0 {
		pressed = strings.Join(keys, ", ")
		if stopped != "" {
			pressed += ", then no more keys: " + stopped
		}
	}
	if !blind && st.Menu && st.HasInput && p.HoldsAll(st.Input, s.text) {
		// Our text under a menu that came back after Enter: no Enter
		// goes into it, and it is not left there to merge with the next.
		return fmt.Errorf("send to %s: pressed %s; a completion menu is open over the text, %s; last screen:\n%s\n%w", pane, pressed, s.takeBack(ctx), tail(st.Screen), ErrUnconfirmed)
	}
	return fmt.Errorf("send to %s: pressed %s; last screen:\n%s\n%w", pane, pressed, tail(st.Screen), ErrUnconfirmed)
}

// unpressed says why no key was pressed into a pasted text, from the last
// state seen.
func unpressed(p agent.Profile, st observe.State, text string) string {
	switch {
	case st.Dialog != "":
		return fmt.Sprintf("%q is on screen over the text", st.Dialog)
	case st.Menu:
		return "a completion menu is open over the text"
	case !st.HasInput:
		return "the input box is not on screen"
	case !p.Holds(st.Input, text):
		return "the box no longer held the text"
	}
	return "the agent was not idle"
}

// menuWindow is how long a completion menu over the whole pasted text is
// watched for the agent to take it down itself, before its MenuKey is
// pressed, and again after.
const menuWindow = time.Second

// menuOver deals with a completion menu open over the pasted text before
// the first Enter, which would pick one of its items. Gemini opens its /
// menu for a text that starts with "/" once trimmed; under load it drew
// the menu of a first part of a paste over the whole text and took it
// down a moment later. menuOver waits menuWindow for that, then presses
// the profile's MenuKey once (gemini's Esc closes the menu and keeps the
// text; a second Esc would empty the box) and waits again. It returns the
// state once no menu is open, or the box no longer holds the text. A menu
// that stays: the text is taken back, and the error says so and what to
// do.
func (s *submission) menuOver(ctx context.Context, st observe.State) (observe.State, error) {
	p := s.req.Profile
	deadline := s.d.Clock.Now().Add(menuWindow)
	pressed := false
	for st.Menu && st.HasInput && p.Holds(st.Input, s.text) {
		if !s.d.Clock.Now().Before(deadline) {
			if pressed || p.MenuKey == "" {
				return st, s.menuStays(ctx, st, pressed)
			}
			if err := s.d.Mux.SendKey(ctx, s.req.Pane, p.MenuKey); err != nil {
				return st, fmt.Errorf("send to %s: press %s to close the completion menu: %w", s.req.Pane, p.MenuKey, err)
			}
			pressed = true
			deadline = s.d.Clock.Now().Add(menuWindow)
		}
		if err := s.d.Clock.Sleep(ctx, s.d.poll()); err != nil {
			return st, err
		}
		var err error
		if st, err = s.look(ctx); err != nil {
			return st, err
		}
	}
	if pressed {
		// The Enter that follows must not come as one with the key that
		// closed the menu (ESC then CR reads as Alt+Enter): settle.
		if err := s.d.Clock.Sleep(ctx, p.Settle); err != nil {
			return st, err
		}
		return s.look(ctx)
	}
	return st, nil
}

// menuStays takes the pasted text back from under a completion menu that
// would not close, and returns the refusal: what is on screen, where the
// text is, and the way out.
func (s *submission) menuStays(ctx context.Context, st observe.State, pressed bool) error {
	closed := ""
	if pressed {
		closed = fmt.Sprintf(" (%s did not close it)", s.req.Profile.MenuKey)
	}
	return fmt.Errorf("send to %s: a completion menu stayed open over the pasted text%s, where Enter would pick from it; Enter not pressed, %s; nothing was sent: send it again, or start the text with a word: %w",
		s.req.Pane, closed, s.takeBack(ctx), ErrDialog)
}

// takeBack takes the pasted text back from under a completion menu
// (Deliverer.takeBack) and says where the text is now.
func (s *submission) takeBack(ctx context.Context) string {
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	s.d.takeBack(tctx, s.req, s.text)
	cancel()
	if now, err := s.look(ctx); err != nil || (now.HasInput && s.req.Profile.Holds(now.Input, s.text)) {
		return "the text is still in the input box (clear it, or send again with --clear)"
	}
	return "the text was taken back"
}

// showing waits, up to the confirm window, for the input box to show the
// pasted text (or its placeholder), and returns the last state seen.
func (s *submission) showing(ctx context.Context, since time.Time) (observe.State, bool, error) {
	p := s.req.Profile
	deadline := since.Add(showWindow)
	for {
		st, err := s.look(ctx)
		if err != nil {
			return st, false, err
		}
		if len(p.Prompts) == 0 || s.req.Force {
			return st, false, nil
		}
		if st.HasInput && p.Holds(st.Input, s.text) {
			return st, true, nil
		}
		if st.HasInput && typedBefore(p, st.Input, s.text) {
			// Someone typed into the box between the last look and
			// the paste: take ours back off its end, leave theirs.
			if s.untangle(ctx, st) {
				return st, false, fmt.Errorf("send to %s: someone typed into the input box as the text was pasted; the text was taken back, theirs left as it was: %w", s.req.Pane, ErrInputBusy)
			}
			return st, false, fmt.Errorf("send to %s: someone typed into the input box as the text was pasted, and the text could not be taken back; Enter not pressed: %w", s.req.Pane, ErrInputBusy)
		}
		if st.Dialog != "" {
			return st, false, fmt.Errorf("send to %s: %q opened over the pasted text; Enter not pressed: %w", s.req.Pane, st.Dialog, ErrDialog)
		}
		// A completion menu over part of the text is not the end: gemini
		// under load reads a paste in pieces and draws the menu of the
		// first. The whole text is waited for; the menu is dealt with
		// then (menuOver).

		if !s.d.Clock.Now().Before(deadline) {
			return st, false, nil
		}
		if err := s.d.Clock.Sleep(ctx, s.d.poll()); err != nil {
			return st, false, err
		}
	}
}

// typedBefore reports whether the input box shows text of someone else's
// followed by the text pasted, shown in full or as placeholders.
func typedBefore(p agent.Profile, in, text string) bool {
	_, ok := theirsBefore(p, in, text)
	return ok
}

// theirsBefore cuts the text pasted off the end of the input box showing
// in, shown in full or as the agent's placeholders of it (Claude's
// "[Pasted text #1 +5 lines]"), and returns what is left before it, as
// shown: someone else's text, when there is any.
func theirsBefore(p agent.Profile, in, text string) (string, bool) {
	if p.Pasted != nil {
		end := len(in)
		locs := p.Pasted.FindAllStringIndex(in, -1)
		for i := len(locs) - 1; i >= 0 && strings.TrimSpace(in[locs[i][1]:end]) == ""; i-- {
			end = locs[i][0]
		}
		if end < len(in) {
			theirs := in[:end]
			return theirs, agent.Squeeze(theirs) != ""
		}
	}
	theirs, ok := cutShown(in, text)
	return theirs, ok && agent.Squeeze(theirs) != ""
}

// cutShown cuts text off the end of in, white space aside (an agent
// rewraps what it shows), and returns what is before it.
func cutShown(in, text string) (string, bool) {
	shown, want := []rune(in), []rune(agent.Squeeze(text))
	i := len(shown)
	for j := len(want) - 1; j >= 0; j-- {
		for i > 0 && unicode.IsSpace(shown[i-1]) {
			i--
		}
		if i == 0 || shown[i-1] != want[j] {
			return "", false
		}
		i--
	}
	return string(shown[:i]), true
}

// presses is how many BSpace presses at most delete what the input box
// shows as in: one a character (white space aside, which an agent may
// draw where it wrapped) and one a placeholder, which the agents delete
// whole.
func presses(p agent.Profile, in string) int {
	n := 0
	if p.Pasted != nil {
		n = len(p.Pasted.FindAllStringIndex(in, -1))
		in = p.Pasted.ReplaceAllString(in, "")
	}
	return n + utf8.RuneCountInString(agent.Squeeze(in))
}

// untangle presses BSpace at the end of the input box until only what
// came before the pasted text is left (theirsBefore), never more presses
// than it shows of ours, looking again after each round; it reports
// whether the box ended holding just the other text.
func (s *submission) untangle(ctx context.Context, st observe.State) bool {
	p := s.req.Profile
	theirs, _ := theirsBefore(p, st.Input, s.text)
	for range maxClears {
		n := presses(p, st.Input) - presses(p, theirs)
		if n <= 0 {
			return n == 0
		}
		for range n {
			if err := s.d.Mux.SendKey(ctx, s.req.Pane, "BSpace"); err != nil {
				return false
			}
		}
		if err := s.d.Clock.Sleep(ctx, s.d.poll()); err != nil {
			return false
		}
		var err error
		if st, err = s.look(ctx); err != nil || !st.HasInput || !strings.HasPrefix(agent.Squeeze(st.Input), agent.Squeeze(theirs)) {
			return false
		}
	}
	return false
}

// hookQuiet is how long no hook of the agent must have run before the
// first Enter, looked at every hookLook.
const (
	hookQuiet = 120 * time.Millisecond
	hookLook  = 40 * time.Millisecond
)

// hooksQuiet waits, pressing nothing, while a turn of the agent ends
// (at most hookWait), and looks at the pane afresh: until no hook of the
// agent has run for hookQuiet, and no queued message waits for an agent
// that is no longer busy. As a turn ends the real Claude runs its Stop
// hook, then takes its queue (a UserPromptSubmit hook for each message):
// an Enter read in between made it run that text at once and keep it
// queued as well (the model got it two or three times), or drop another
// queued text (never sent): real_claude_concurrent, 6 of 40 beside two
// CPU hogs. An idle agent running no hook, with nothing queued, has no
// turn ending: it is not waited for.
func (s *submission) hooksQuiet(ctx context.Context, st observe.State) (observe.State, error) {
	p := s.req.Profile
	ending := func(st observe.State) bool { return !st.Busy && p.Queueing(st.Screen) }
	if !st.Busy && !ending(st) && !s.d.Announcing(st.Pane) {
		return st, nil
	}
	deadline := s.d.Clock.Now().Add(hookWait)
	var quiet time.Time // since when no hook ran; zero while one runs
	for {
		now := s.d.Clock.Now()
		switch {
		case s.d.Announcing(st.Pane):
			quiet = time.Time{}
		case quiet.IsZero():
			quiet = now
		}
		if !now.Before(deadline) {
			return s.look(ctx)
		}
		if !quiet.IsZero() && now.Sub(quiet) >= hookQuiet {
			next, err := s.look(ctx)
			if err != nil || !ending(next) {
				return next, err
			}
			st = next
		}
		if err := s.d.Clock.Sleep(ctx, hookLook); err != nil {
			return st, err
		}
	}
}

// pressable reports whether st shows our text in the input box with no
// dialog or menu over it: the only state a key goes into.
func (s *submission) pressable(st observe.State) bool {
	return st.Dialog == "" && !st.Menu && st.HasInput && s.req.Profile.Holds(st.Input, s.text)
}

// steadyLooks is how many more looks decide that a state no key may go
// into is the agent's, not a redraw caught half way.
const steadyLooks = 2

// steady returns st when a key may go into it, else looks again up to
// steadyLooks times: a capture can catch the agent mid-redraw (gemini
// under load drew its box and footer twice over), and one such look
// would end the retries with the text still in the box, never submitted.
func (s *submission) steady(ctx context.Context, st observe.State) (observe.State, error) {
	for range steadyLooks {
		if s.pressable(st) {
			return st, nil
		}
		if err := s.d.Clock.Sleep(ctx, s.d.poll()); err != nil {
			return st, err
		}
		var err error
		if st, err = s.look(ctx); err != nil {
			return st, err
		}
	}
	return st, nil
}

// watch looks at the pane after a key press until the submission is
// confirmed or window ends.
func (s *submission) watch(ctx context.Context, before observe.State, window time.Duration) (observe.State, bool, error) {
	p := s.req.Profile
	deadline := s.d.Clock.Now().Add(window)
	st := before
	empty := 0 // looks in a row that found the box empty
	for {
		if err := s.d.Clock.Sleep(ctx, s.d.poll()); err != nil {
			return st, false, err
		}
		if s.events && s.d.Events.Submitted(s.req.Pane, s.mark, s.text) {
			// The real Claude runs UserPromptSubmit before it clears
			// its box: wait for that first, so that what follows (talk
			// reading the turn) does not see the text still there.
			var ok bool
			if st, ok = s.cleared(ctx, st); ok || !before.Busy {
				// An idle agent had nothing queued to announce: the
				// event is this Enter's. Our text in its box again is
				// the agent putting it back (Claude after an Esc before
				// the first token), not a lost Enter to press again.
				s.res.Via = "event"
				return st, true, nil
			}
			// A busy agent still holds the text: it is slow to clear
			// it, or the event was an earlier queued submission of the
			// same words and this Enter was lost. Watch on.
		}
		var err error
		if st, err = s.look(ctx); err != nil {
			return st, false, err
		}
		if st.Pane.Dead {
			return st, false, fmt.Errorf("send to %s: pane died after Enter (%s): %w", s.req.Pane, describeDead(st.Pane), ErrPaneDead)
		}
		taken := false
		switch {
		case len(p.Prompts) == 0:
			taken = st.Screen != before.Screen
		case st.HasInput && st.Input == "" && st.Dialog == "":
			// Twice in a row: one capture can catch the agent between
			// clearing its box and drawing it again.
			empty++
			taken = empty >= 2
		case !st.HasInput && st.Dialog == "" && !before.Busy && st.Busy:
			// The box hides while the agent works: turning busy is all
			// the screen tells. Where the box stays, busy alone proves
			// nothing (a queued turn starting), the text must leave it.
			taken = true
		case st.Dialog != "" && before.Dialog == "" && !before.Busy && !(st.HasInput && p.Holds(st.Input, s.text)):
			// An idle agent opened a dialog after Enter: the turn our
			// text started asks for approval before anything else (on a
			// loaded machine, before a look caught it busy).
			taken = true
		}
		if !(st.HasInput && st.Input == "") {
			empty = 0
		}
		if taken {
			s.res.Via = "screen"
			return st, true, nil
		}
		if !s.d.Clock.Now().Before(deadline) {
			return st, false, nil
		}
	}
}

// hooked watches the pane while the agent runs a hook (Announcing), up to
// hookWait, pressing nothing: it reports true when the submission was
// seen, else the last state once the hook is over (or the wait is).
func (s *submission) hooked(ctx context.Context, st observe.State, window time.Duration) (observe.State, bool, error) {
	deadline := s.d.Clock.Now().Add(hookWait)
	for s.d.Announcing(st.Pane) && s.d.Clock.Now().Before(deadline) {
		var ok bool
		var err error
		if st, ok, err = s.watch(ctx, st, window); err != nil || ok {
			return st, ok, err
		}
	}
	return st, false, nil
}

// cleared follows a submission the agent announced until its input box no
// longer shows the text (the hook can come before the box is redrawn), so
// that the next delivery finds it empty. It presses nothing, and reports
// false when the box still holds the text at the end of the confirm window.
func (s *submission) cleared(ctx context.Context, st observe.State) (observe.State, bool) {
	holds := func(st observe.State) bool {
		return st.HasInput && s.req.Profile.HoldsAll(st.Input, s.text)
	}
	deadline := s.d.Clock.Now().Add(s.d.confirm())
	for holds(st) && s.d.Clock.Now().Before(deadline) {
		if s.d.Clock.Sleep(ctx, s.d.poll()) != nil {
			return st, true // interrupted: the event stands
		}
		next, err := s.look(ctx)
		if err != nil {
			return st, true
		}
		st = next
	}
	return st, !holds(st)
}

// look reads the pane once.
func (s *submission) look(ctx context.Context) (observe.State, error) {
	pane, screen, err := s.d.Mux.Inspect(ctx, s.req.Pane)
	if err != nil {
		return observe.State{}, fmt.Errorf("send to %s: %w", s.req.Pane, err)
	}
	st := observe.Read(s.req.Profile, pane, screen)
	s.res.Screen = screen
	return st, nil
}

// takeBack removes a text that was pasted but not submitted, when the
// input box holds exactly that: a send interrupted between paste and
// confirmation leaves nothing behind to merge with the next one. It
// reports whether the box held it whole and was emptied of it.
func (d *Deliverer) takeBack(ctx context.Context, req Request, text string) bool {
	for i := range maxClears {
		pane, screen, err := d.Mux.Inspect(ctx, req.Pane)
		if err != nil || pane.Dead {
			return false
		}
		st := observe.Read(req.Profile, pane, screen)
		if st.Dialog != "" || !st.HasInput {
			return false
		}
		if st.Input == "" || !req.Profile.Holds(st.Input, text) {
			return i > 0
		}
		// All of it, not a part next to someone else's text; later
		// presses clear what is left of it line by line.
		if i == 0 && !ownBox(req.Profile, st.Input, text) {
			return false
		}
		if err := d.clearLine(ctx, req); err != nil {
			return false
		}
		_ = d.Clock.Sleep(ctx, d.poll())
	}
	return false
}

// ownBox says whether the input box showing in holds text and nothing
// else: all of it, or its first line where the agent reads only the line
// of its prompt glyph (Codex's › line) of a tall input.
func ownBox(p agent.Profile, in, text string) bool {
	if p.HoldsAll(in, text) {
		return true
	}
	first, _, tall := strings.Cut(text, "\n")
	return tall && in != "" && agent.Squeeze(in) == agent.Squeeze(first)
}

// Reclaim is what a sender that stopped between its paste and its Enter
// (a supervisor killed) does with req.Text when it starts again: the text
// in req.Pane's input box is its own, never someone's draft. Under the
// pane's lock, when the box holds the text whole, alone or after someone
// else's, it is taken back (theirs left as they typed it); nothing is
// pressed when the box does not hold it. Held says the box held it; the
// error says it could not be taken back.
func (d *Deliverer) Reclaim(ctx context.Context, req Request) (held bool, err error) {
	text, err := req.pasteText()
	if err != nil {
		return false, err
	}
	unlock, err := d.Locker.Lock(ctx, req.Pane)
	if err != nil {
		return false, fmt.Errorf("reclaim in %s: waiting for earlier sends: %w", req.Pane, err)
	}
	defer unlock()
	pane, screen, err := d.Mux.Inspect(ctx, req.Pane)
	if err != nil {
		return false, fmt.Errorf("reclaim in %s: %w", req.Pane, err)
	}
	if pane.Dead {
		return false, nil
	}
	st := observe.Read(req.Profile, pane, screen)
	switch {
	case !st.HasInput || st.Input == "":
		return false, nil
	case ownBox(req.Profile, st.Input, text):
		if !d.takeBack(ctx, req, text) {
			return true, fmt.Errorf("reclaim in %s: the input box still holds the text pasted: %w", req.Pane, ErrInputBusy)
		}
		return true, nil
	case typedBefore(req.Profile, st.Input, text):
		s := submission{d: d, req: req, text: text, res: &Result{}}
		if !s.untangle(ctx, st) {
			return true, fmt.Errorf("reclaim in %s: the text pasted could not be taken back off the end of someone's: %w", req.Pane, ErrInputBusy)
		}
		return true, nil
	}
	return false, nil
}

// fresh reports whether the agent has not taken a prompt yet, as far as
// its screen shows: its warm-up applies only then.
func fresh(p agent.Profile, st observe.State) bool {
	return p.Taken == nil || !p.Taken.MatchString(st.Screen)
}

// clearLine presses the agent's keys that empty one line of its input.
func (d *Deliverer) clearLine(ctx context.Context, req Request) error {
	keys := req.Profile.ClearKeys
	if len(keys) == 0 {
		keys = []string{"C-u"}
	}
	for _, k := range keys {
		if err := d.Mux.SendKey(ctx, req.Pane, k); err != nil {
			return err
		}
	}
	return nil
}

// tail is the bottom of a screen, for errors: the input box and what is
// just above it.
func tail(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	return strings.Join(lines[max(0, len(lines)-15):], "\n")
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

func (d *Deliverer) retries() int {
	if d.Retries > 0 {
		return d.Retries
	}
	return 3
}

func (d *Deliverer) confirm() time.Duration {
	if d.Confirm > 0 {
		return d.Confirm
	}
	return 400 * time.Millisecond
}

func (d *Deliverer) poll() time.Duration {
	if d.Poll > 0 {
		return d.Poll
	}
	return 5 * time.Millisecond
}

func describeDead(p mux.Pane) string {
	if p.DeadStatus != "" {
		return "exited with status " + p.DeadStatus
	}
	return "its program exited"
}

// Sanitize returns text as it will be delivered: CRLF becomes LF, and
// control characters other than tab and LF are removed (ESC included, so a
// payload can never end the bracketed paste early), as are C1 controls and
// DEL: as characters (U+0080-U+009F) and as raw bytes 0x80-0x9F that are
// not part of a UTF-8 character (0x9B is CSI to an 8-bit terminal). Other
// invalid UTF-8 bytes are kept as they are.
func Sanitize(text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			if c := text[i]; c < 0x80 || c > 0x9f {
				b.WriteByte(c)
			}
		case r == '\t' || r == '\n':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			// dropped
		default:
			b.WriteString(text[i : i+size])
		}
		i += size
	}
	return b.String()
}

// taken records that the agent took the text: submitted, or queued when
// it was busy.
func (s *submission) taken(busy bool) {
	s.res.Outcome = Submitted
	if busy {
		s.res.Outcome = Queued
	}
}
