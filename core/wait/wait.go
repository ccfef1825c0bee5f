package wait

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/state"
)

// Errors a wait ends with.
var (
	ErrTimeout     = errors.New("timed out waiting for the answer")
	ErrTurnFailed  = errors.New("the agent's turn failed")
	ErrPermission  = errors.New("the agent is waiting for permission")
	ErrInterrupted = errors.New("the agent's turn was interrupted")
)

// TimeoutError is a wait that ran out of time; Screen is the last screen
// seen, the evidence of what the agent was doing.
type TimeoutError struct {
	Pane   string
	After  time.Duration
	Screen string
	// Retrying is the API error retry the screen shows ("attempt 7/10,
	// next in 13s"), or "": the agent was not stuck but kept retrying.
	Retrying string
}

func (e *TimeoutError) Error() string {
	if e.Retrying != "" {
		return fmt.Sprintf("no answer from %s after %s: the agent was retrying an API error (%s); last screen:\n%s",
			e.Pane, e.After, e.Retrying, e.Screen)
	}
	return fmt.Sprintf("no answer from %s after %s; last screen:\n%s", e.Pane, e.After, e.Screen)
}

// Unwrap makes errors.Is(err, ErrTimeout) true.
func (e *TimeoutError) Unwrap() error { return ErrTimeout }

// Turn is one prompt whose answer is awaited.
type Turn struct {
	Pane   string
	Prompt string // the text as delivered (sanitized)
	// Hooks says the agent reports its turns to the event log at Events;
	// Offset is the log's size before the prompt was sent.
	Hooks  bool
	Events string
	Offset int64
	// Nonce, when set, is the marker the agent was asked to print.
	Nonce string
	// Mark is where the pane stood just before the prompt was pasted: the
	// marker answer is looked for in what came after it. Nil: only the
	// echoed nonce tells where the turn begins.
	Mark *Mark
	// History is how many scrollback lines a marker search captures.
	History int
	// Started is when the caller began (queued behind other talks, say):
	// the timeout counts from it. Zero means from Wait.
	Started time.Time
	// Began is when the turn began (its prompt was about to be sent): a
	// hook failure noted before it was an earlier turn's (Waiter.Unheard).
	Began time.Time
	// Sources are further witnesses of the turn (the agent's transcript
	// file), checked on every look after the events.
	Sources []Source
	// SourcesOnly says the event log only wakes the wait and the Sources
	// alone tell the turn's end (Codex: notify fails past 128 KiB of
	// thread text and matches a repeated text to the wrong turn). Such a
	// wait looks at least every 200 ms.
	SourcesOnly bool
}

// Marked places t where the pane stood just before its prompt was pasted
// (NewMark): the marker answer is looked for after it, and the sources
// that read the screen (a Source with a Marked(*Mark) method) are told.
// A nil m leaves t as it was.
func (t *Turn) Marked(m *Mark) {
	if m == nil {
		return
	}
	if t.Nonce != "" {
		t.Mark = m
	}
	for _, s := range t.Sources {
		if ms, ok := s.(interface{ Marked(*Mark) }); ok {
			ms.Marked(m)
		}
	}
}

// A Source is a witness of a turn besides the event log: typically an
// agent's transcript file, read from where it stood when the prompt was
// sent. Check reports the turn's end once the source shows it: an answer,
// or an error wrapping ErrTurnFailed, ErrPermission or ErrInterrupted.
// A Source that also has a See(hook.Event) method is shown every event of
// the turn's pane the waiter reads, before Check (to learn a transcript's
// path, say).
type Source interface {
	Check() (res Result, done bool, err error)
}

// eventSeer is a Source that learns from the pane's hook events.
type eventSeer interface{ See(hook.Event) }

// Result is a finished turn.
type Result struct {
	Answer string `json:"answer"`
	Via    string `json:"via"` // "hook" or "marker"
}

// Waiter waits for turns.
type Waiter struct {
	Mux   mux.Multiplexer
	Clock clock.Clock
	// Wake delivers wake-ups (pane output, hook events). Nil means the
	// waiter relies on Poll alone.
	Wake <-chan struct{}
	// Poll is the safety-net interval between checks without a wake-up.
	Poll time.Duration
	// Resume, when set, is called before each look at the screen: the
	// pane's output, paused after it woke the wait, wakes it again
	// (Watcher.Resume).
	Resume func(ctx context.Context)
	// Unheard, when set, returns the report of a hook of the pane that
	// could not record its event (a read-only or full state dir) since a
	// time (SessionUnheard): a wait on events then says so at once (Warn)
	// and goes on with what the agent's transcript or screen shows
	// (sources that are Deaf).
	Unheard func(pane string, since time.Time) (state.Report, bool)
	// Warn is told, once, that a wait goes on without the pane's events.
	Warn func(msg string)
}

// SessionUnheard is a Waiter.Unheard for the session whose state dir is
// stateDir: the report waker received while it listened (nil: none), else
// the note a hook left for waits that started after it failed
// (hook.LastUnheard), when it failed at or after since.
func SessionUnheard(waker *state.Waiter, getenv func(string) string, stateDir string) func(string, time.Time) (state.Report, bool) {
	return func(pane string, since time.Time) (state.Report, bool) {
		if waker != nil {
			if r, ok := waker.Report(pane); ok {
				return r, true
			}
		}
		return hook.LastUnheard(getenv, stateDir, pane, since)
	}
}

// deafSource is a Source that can tell a turn's answer itself once the
// pane's events are known to be lost (Waiter.Unheard).
type deafSource interface{ Deaf() }

// Wait blocks until the turn is answered, the pane dies, the agent
// reports a failure or a permission prompt, ctx ends, or timeout passes.
func (w *Waiter) Wait(ctx context.Context, t Turn, timeout time.Duration) (Result, error) {
	start := w.Clock.Now()
	if !t.Started.IsZero() {
		start = t.Started
	}
	deadline := start.Add(timeout)
	tracker := turnTracker{prompt: t.Prompt}
	offset := t.Offset
	var screen string
	// A marker wait reads the screen when the pane changed (a wake-up) or
	// the safety-net poll came round, and no sooner than gap after its
	// last look: lookGap, doubled (up to maxLookGap) while the pane
	// prints faster than the wait looks (a flood).
	look, lastLook, gap := true, time.Time{}, lookGap
	deaf := false // the pane's hook reported it could not record
	var marker *regexp.Regexp
	if t.Nonce != "" {
		marker = markerLine(t.Nonce)
	}
	for {
		pane, err := w.Mux.Pane(ctx, t.Pane)
		if err != nil {
			return Result{}, err
		}
		if pane.Dead {
			// tmux marks a pane dead when its terminal closes and learns
			// the exit status when it reaps the process, a moment later.
			for i := 0; i < 20 && pane.DeadStatus == ""; i++ {
				if w.Clock.Sleep(ctx, 5*time.Millisecond) != nil {
					break
				}
				if p, err := w.Mux.Pane(ctx, t.Pane); err == nil {
					pane = p
				}
			}
			last, _ := w.Mux.Capture(ctx, t.Pane, 0)
			return Result{}, fmt.Errorf("%s exited (status %s) while answering; last screen:\n%s: %w",
				t.Pane, orUnknown(pane.DeadStatus), last, deliver.ErrPaneDead)
		}
		if t.Hooks && !t.SourcesOnly {
			lines, next, err := state.ReadFrom(t.Events, offset)
			if err != nil {
				return Result{}, err
			}
			offset = next
			for _, l := range lines {
				var ev hook.Event
				if json.Unmarshal(l, &ev) != nil || ev.Pane != t.Pane {
					continue
				}
				for _, s := range t.Sources {
					if es, ok := s.(eventSeer); ok {
						es.See(ev)
					}
				}
				if res, done, err := tracker.see(ev); done || err != nil {
					if errors.Is(err, ErrTurnFailed) {
						err = w.interrupted(ctx, t, err)
					}
					return res, err
				}
			}
		}
		if t.Hooks && !t.SourcesOnly && !deaf && w.Unheard != nil {
			if r, ok := w.Unheard(t.Pane, t.Began); ok {
				deaf = true
				w.goDeaf(t, r)
			}
		}
		for _, s := range t.Sources {
			if res, done, err := s.Check(); done || err != nil {
				return res, err
			}
		}
		if (t.Nonce != "" || !t.Hooks) && look {
			if left := gap - w.Clock.Now().Sub(lastLook); left > 0 {
				if err := w.Clock.Sleep(ctx, left); err != nil {
					return Result{}, err
				}
			}
			lastLook = w.Clock.Now()
			if w.Resume != nil {
				w.Resume(ctx)
			}
			if screen, err = w.Mux.Capture(ctx, t.Pane, t.History); err != nil {
				return Result{}, err
			}
			if marker != nil && marker.MatchString(screen) {
				answer, found, err := w.findTurn(ctx, t, screen)
				if found || err != nil {
					return Result{Answer: answer, Via: "marker"}, err
				}
			}
		}
		left := deadline.Sub(w.Clock.Now())
		if left <= 0 {
			if screen == "" {
				screen, _ = w.Mux.Capture(ctx, t.Pane, 0)
			}
			return Result{}, &TimeoutError{Pane: t.Pane, After: timeout, Screen: screen, Retrying: Retrying(screen)}
		}
		poll := w.poll()
		if t.SourcesOnly || deaf {
			// Nothing wakes the wait when a source changes: look often.
			poll = min(poll, sourcePoll)
		}
		woke, err := w.sleep(ctx, min(left, poll))
		if err != nil {
			return Result{}, err
		}
		since := w.Clock.Now().Sub(lastLook)
		look = woke || w.Wake == nil || since >= poll
		if woke && since < gap {
			gap = min(2*gap, maxLookGap)
		} else {
			gap = lookGap
		}
	}
}

// lookGap is the shortest time between two screen reads of a marker wait,
// and maxLookGap the longest it grows to while the pane keeps printing:
// an agent that floods its pane would wake the wait on every chunk.
const (
	lookGap    = 20 * time.Millisecond
	maxLookGap = 320 * time.Millisecond
)

// findTurn finds the marker answer of t, whose marker screen shows: in the
// rows after t's mark, read again with their places, or, without a mark,
// in screen after the echoed nonce.
func (w *Waiter) findTurn(ctx context.Context, t Turn, screen string) (string, bool, error) {
	if t.Mark == nil {
		return FindMarker(screen, t.Nonce, t.Prompt)
	}
	rows, err := w.Mux.Rows(ctx, t.Pane, t.History)
	if err != nil {
		return "", false, err
	}
	return FindTurn(rows, t.Mark, t.Nonce, t.Prompt)
}

// goDeaf goes on with turn t without its pane's events, which r reported
// lost: it says so, shows the sources what the event said (its transcript's
// path), and has them tell the answer.
func (w *Waiter) goDeaf(t Turn, r state.Report) {
	var ev hook.Event
	_ = json.Unmarshal(r.Event, &ev)
	if w.Warn != nil {
		what := ev.Raw
		if what == "" {
			what = "an event"
		}
		w.Warn(fmt.Sprintf("party hook could not record %s of %s (%s): reading the agent's transcript and screen instead", what, t.Pane, r.Error))
	}
	ev.Pane = t.Pane
	answers := false
	for _, s := range t.Sources {
		if es, ok := s.(eventSeer); ok && ev.Transcript != "" {
			es.See(ev)
		}
		if d, ok := s.(deafSource); ok {
			d.Deaf()
			answers = true
		}
	}
	if !answers && w.Warn != nil {
		w.Warn(fmt.Sprintf("nothing but its events tells the end of %s's turn: the wait runs to its timeout", t.Pane))
	}
}

// interrupted tells a failed turn from an interrupted one where the
// agent's event does not (gemini's AfterAgent has no response text for
// both): a source that sees the interrupt within a moment wins.
func (w *Waiter) interrupted(ctx context.Context, t Turn, failed error) error {
	for try := 0; try < 4; try++ {
		for _, s := range t.Sources {
			if _, _, err := s.Check(); errors.Is(err, ErrInterrupted) {
				return err
			}
		}
		if len(t.Sources) == 0 || w.Clock.Sleep(ctx, 100*time.Millisecond) != nil {
			break
		}
	}
	return failed
}

// Sleep waits for d, a wake-up, or the end of ctx.
func (w *Waiter) Sleep(ctx context.Context, d time.Duration) error {
	_, err := w.sleep(ctx, d)
	return err
}

// sleep is Sleep that says whether a wake-up ended it.
func (w *Waiter) sleep(ctx context.Context, d time.Duration) (bool, error) {
	if w.Wake == nil {
		return false, w.Clock.Sleep(ctx, d)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan bool)
	go func() {
		select {
		case <-w.Wake:
			cancel()
			done <- true
		case <-sctx.Done():
			done <- false
		}
	}()
	_ = w.Clock.Sleep(sctx, d) // an error is a wake-up or ctx's end
	cancel()
	woke := <-done
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	return woke, nil
}

// sourcePoll is the longest pause between looks of a turn that only its
// Sources can end.
const sourcePoll = 200 * time.Millisecond

func (w *Waiter) poll() time.Duration {
	if w.Poll > 0 {
		return w.Poll
	}
	return time.Second
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// turnTracker follows one pane's hook events and ties the turn to the
// prompt that started it: a Stop counts only after the UserPromptSubmit
// that carried this prompt (claude), or when its input messages hold it
// (codex), or when Gemini's AfterAgent prompt holds it (Gemini merges
// queued prompts into one), never merely because it is the next Stop.
type turnTracker struct {
	prompt  string
	started bool
}

func (tt *turnTracker) see(ev hook.Event) (Result, bool, error) {
	mine := false
	for _, p := range ev.Prompts {
		if samePrompt(p, tt.prompt) || (ev.Agent == "gemini" && inMerged(p, tt.prompt)) {
			mine = true
		}
	}
	switch ev.Kind {
	case hook.PromptSubmit:
		// Claude sends the messages queued during a turn as one turn: N
		// submits, then one Stop that closes them all. A later submit
		// does not end ours.
		if mine {
			tt.started = true
		}
	case hook.TurnComplete:
		if (mine && tt.own(ev)) || (tt.started && len(ev.Prompts) == 0) {
			return Result{Answer: strings.TrimSpace(ev.Answer), Via: "hook"}, true, nil
		}
	case hook.TurnFailed:
		if tt.started || (mine && tt.own(ev)) {
			return Result{}, true, fmt.Errorf("%s: %s: %w", ev.Type, ev.Message, ErrTurnFailed)
		}
	case hook.Notification:
		if tt.started && ev.Type == hook.PermissionPrompt {
			return Result{}, true, fmt.Errorf("%s: %w", ev.Message, ErrPermission)
		}
	}
	return Result{}, false, nil
}

// own says whether a completion whose prompts hold ours ends our turn,
// not an earlier one given the same text: Gemini reports each submission
// (BeforeAgent), so its turn is ours only once ours was submitted after
// the wait began. A talk that timed out while the model went on, then the
// same text asked again, would otherwise take the first turn's late
// answer.
func (tt *turnTracker) own(ev hook.Event) bool {
	return ev.Agent != "gemini" || tt.started
}

// samePrompt says whether a prompt an agent reported is the one sent:
// the same, white space at the edges aside (agents trim or expand it), or
// the one sent followed by keys someone typed into the input box between
// the sender's last look and its Enter, which the agent submitted with it.
func samePrompt(got, sent string) bool {
	got, sent = strings.TrimSpace(got), strings.TrimSpace(sent)
	return sent != "" && strings.HasPrefix(got, sent)
}

// inMerged reports whether sent is one of the prompts that Gemini merged
// into got: queued prompts are trimmed and joined by a blank line, so sent
// starts got or follows a "\n\n" boundary (and may run on with keys typed
// after it, as samePrompt allows).
func inMerged(got, sent string) bool {
	got, sent = strings.TrimSpace(got), strings.TrimSpace(sent)
	if sent == "" {
		return false
	}
	const sep = "\n\n"
	for from := 0; ; {
		i := strings.Index(got[from:], sent)
		if i < 0 {
			return false
		}
		if at := from + i; at == 0 || strings.HasSuffix(got[:at], sep) {
			return true
		}
		from += i + 1
	}
}
