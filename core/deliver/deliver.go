package deliver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/observe"
)

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
	// Gate, when set, holds the key gate of pane p (state.HoldGate),
	// which the hooks of an agent whose Profile is Gated hold while they
	// run: it returns when a hook last let go of it (zero: never) and the
	// release. A gate it could not take in time is returned unheld (a
	// no-op release): the look under it still sees a hook that runs.
	Gate func(ctx context.Context, p mux.Pane) (ended time.Time, release func())
	// Unheard, when set, says a hook of pane reported at or after since
	// that it could not record its event: the report waited for will not
	// come.
	Unheard func(pane string, since time.Time) bool
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
	s := submission{d: d, req: req, text: text, events: events, mark: mark, began: d.Clock.Now(), res: &res}
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
