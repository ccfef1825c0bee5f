package deliver

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/observe"
)

// submission is one pasted text on its way in.
type submission struct {
	d      *Deliverer
	req    Request
	text   string    // as pasted
	events bool      // the agent announces submissions in the event log
	mark   int64     // the event log's end before the paste
	began  time.Time // when the send began
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
				if theirs, ok := s.typedInto(st); ok {
					// Keys typed after the paste, or before an Enter the
					// agent took for a new line (Gemini, a burst of keys
					// just before it): ours out, theirs left.
					return s.untangleAfter(ctx, theirs)
				}
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
				return s.took(ctx, lastBusy)
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
		gated := s.gated(blind)
		release := func() {}
		if gated {
			if release, err = s.gate(ctx, &st); err != nil {
				return err
			}
			if !s.pressable(st) {
				release()
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
			release()
			return fmt.Errorf("send to %s: press %s: %w", pane, key, err)
		}
		if gated {
			s.keyRead(ctx, st.Pane, window)
			release()
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
			return s.took(ctx, lastBusy)
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
			return s.took(ctx, lastBusy)
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

// took records that the agent took the text, and gives back the keys
// someone typed into the box as Enter was pressed (giveBack).
func (s *submission) took(ctx context.Context, busy bool) error {
	s.taken(busy)
	if s.events {
		s.giveBack(ctx, !busy)
	}
	return nil
}

// giveBack finds keys typed into the input box between the last look and
// Enter, which the agent submitted after the text (its announced prompt
// runs on past it), and types them back into the box when it is empty
// again: they are someone's draft, not the sender's. The result says what
// went (TypedAfter) and whether it is back (GivenBack); a box someone
// typed into since is left as it is.
func (s *submission) giveBack(ctx context.Context, submitted bool) {
	prompt, ok := s.d.Events.SubmittedPrompt(s.req.Pane, s.mark, s.text)
	// The screen can tell a submission first: the agent's hook reports
	// the prompt a moment later (later still on a loaded machine),
	// waited for up to a confirm window, unless the hook said it could
	// not record it. A queued text is reported when the running turn
	// ends: not waited for.
	for end := s.d.Clock.Now().Add(s.d.confirm()); submitted && !ok && s.d.Clock.Now().Before(end) && !s.unheard(); {
		if s.d.Clock.Sleep(ctx, eventPoll) != nil {
			return
		}
		prompt, ok = s.d.Events.SubmittedPrompt(s.req.Pane, s.mark, s.text)
	}
	if !ok {
		return
	}
	theirs := typedAfter(prompt, s.text)
	if theirs == "" {
		return
	}
	s.res.TypedAfter = theirs
	// The agent may still show the submission in its box (Claude clears
	// it after its hook): look until the box is empty, or holds what
	// someone typed since.
	for end := s.d.Clock.Now().Add(s.d.confirm()); ; {
		st, err := s.look(ctx)
		if err != nil || st.Dialog != "" || st.Menu {
			return
		}
		if st.HasInput && st.Input == "" {
			break
		}
		if (st.HasInput && !s.req.Profile.Holds(st.Input, prompt)) || !s.d.Clock.Now().Before(end) {
			return
		}
		if s.d.Clock.Sleep(ctx, s.d.poll()) != nil {
			return
		}
	}
	if s.d.Mux.Paste(ctx, s.req.Pane, []byte(theirs)) == nil {
		s.res.GivenBack = true
	}
}

// maxTypedAfter bounds the keys a person can type between a look and an
// Enter: more that follows the text is not theirs.
const maxTypedAfter = 200

// unheard says a hook of the pane could not record its event since the
// submission began (Deliverer.Unheard).
func (s *submission) unheard() bool {
	return s.d.Unheard != nil && s.d.Unheard(s.req.Pane, s.began)
}

// eventPoll is how often the give-back reads the event log for the
// submission's report.
const eventPoll = 20 * time.Millisecond

// typedAfter is what follows text in prompt, an agent's report of a
// submission that holds it (white space aside, as agents rewrap and
// trim): text starts prompt or one of the prompts merged into it after a
// blank line (Gemini), and what follows it up to the next such prompt is
// keys typed into the box before Enter: one line, at most maxTypedAfter
// characters. "" when nothing but white space follows, text starts
// nowhere, or what follows is not such keys (more lines: something the
// agent added, never given back as someone's).
func typedAfter(prompt, text string) string {
	if agent.Squeeze(text) == "" {
		return ""
	}
	for start := 0; ; {
		if after, ok := cutShownStart(prompt[start:], text); ok {
			if k := strings.Index(after, "\n\n"); k >= 0 {
				after = after[:k] // the prompts queued after it
			}
			after = strings.TrimRightFunc(after, unicode.IsSpace)
			if strings.Contains(after, "\n") || utf8.RuneCountInString(after) > maxTypedAfter {
				return ""
			}
			return after
		}
		next := strings.Index(prompt[start:], "\n\n")
		if next < 0 {
			break
		}
		start += next + 2
	}
	return ""
}

// taken records that the agent took the text: submitted, or queued when
// it was busy.
func (s *submission) taken(busy bool) {
	s.res.Outcome = Submitted
	if busy {
		s.res.Outcome = Queued
	}
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

// showWindow is how long a paste may take to show in the input box: a
// loaded machine and gemini's placeholder (drawn 0.5-1 s after a long
// paste) take their time.
const showWindow = 5 * time.Second

// showing waits, up to showWindow after since, for the input box to show
// the pasted text (or its placeholder), and returns the last state seen.
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
		if theirs, ok := s.typedInto(st); ok {
			// Someone typed into the box after the paste: take ours
			// out, leave theirs.
			return st, false, s.untangleAfter(ctx, theirs)
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

// hookWait is how long an agent that runs its submit hook is watched for
// the submission it announces, pressing nothing (Deliverer.Announcing).
const hookWait = 10 * time.Second

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
	ending := s.ending
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

// ending reports whether st shows the agent idle with messages queued:
// its turn ended and its queue is about to run.
func (s *submission) ending(st observe.State) bool {
	return !st.Busy && s.req.Profile.Queueing(st.Screen)
}

// gated says whether the keys of this submission go under the pane's key
// gate: an agent whose hooks hold it, whose box we read (not blind).
func (s *submission) gated(blind bool) bool {
	return s.req.Profile.Gated && s.d.Gate != nil && s.events && s.d.Announcing != nil && !blind
}

// gate holds the pane's key gate for the key about to be pressed, when
// the agent's hooks hold it (Profile.Gated, Deliverer.Gate), from a look
// taken under it (into st) until the agent read the key (release). While
// a hook runs or ended less than hookQuiet ago, or the agent sits idle
// with messages queued, it lets go and looks again, pressing nothing, up
// to hookWait. The real Claude's Stop hook and the queue it runs next
// are what it keeps the key from: an Enter read between them ran the
// text at once and kept it queued as well.
func (s *submission) gate(ctx context.Context, st *observe.State) (release func(), err error) {
	deadline := s.d.Clock.Now().Add(hookWait)
	for {
		ended, release := s.d.Gate(ctx, st.Pane)
		next, err := s.look(ctx)
		if err != nil {
			release()
			return func() {}, err
		}
		*st = next
		now := s.d.Clock.Now()
		if (!s.d.Announcing(st.Pane) && now.Sub(ended) >= hookQuiet && !s.ending(*st)) || !now.Before(deadline) {
			return release, nil
		}
		release()
		if err := s.d.Clock.Sleep(ctx, hookLook); err != nil {
			return func() {}, err
		}
	}
}

// keyRead waits, pressing nothing, until the agent read the key just
// pressed into pane: its box no longer holds the text whole, or a hook
// of it runs (Claude runs UserPromptSubmit before it clears its box); at
// most window. Only for a key under the gate, held meanwhile.
func (s *submission) keyRead(ctx context.Context, pane mux.Pane, window time.Duration) {
	for end := s.d.Clock.Now().Add(window); s.d.Clock.Now().Before(end); {
		if s.d.Clock.Sleep(ctx, s.d.poll()) != nil {
			return
		}
		st, err := s.look(ctx)
		if err != nil || !st.HasInput || !s.req.Profile.HoldsAll(st.Input, s.text) || s.d.Announcing(pane) {
			return
		}
	}
}

// pressable reports whether st shows our text in the input box with no
// dialog or menu over it: the only state a key goes into.
func (s *submission) pressable(st observe.State) bool {
	return st.Dialog == "" && !st.Menu && st.HasInput && s.req.Profile.Holds(st.Input, s.text)
}

// typedInto says whether the input box holds the text followed by
// someone's keys (theirsAfter), with nothing over it, and returns them.
func (s *submission) typedInto(st observe.State) (string, bool) {
	if len(s.req.Profile.Prompts) == 0 || s.req.Force || !st.HasInput || st.Dialog != "" || st.Menu {
		return "", false
	}
	return theirsAfter(s.req.Profile, st.Input, s.text)
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

// tail is the bottom of a screen, for errors: the input box and what is
// just above it.
func tail(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	return strings.Join(lines[max(0, len(lines)-15):], "\n")
}
