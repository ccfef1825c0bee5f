// Package deliver submits text to an agent pane: typed is not enough, the
// agent must have taken it. The protocol (DESIGN.md "Delivery means
// submitted") is: lock the pane across processes, refuse a dead pane, a pane
// not running its agent or a dialog on screen, leave copy mode, paste the text
// as one bracketed paste, let it settle, press Enter on its own, and confirm
// on screen that the input was taken, retrying Enter a bounded number of
// times and never into a dialog.
package deliver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/mux"
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
)

// Locker serializes deliveries to one pane across processes.
type Locker interface {
	// Lock blocks until key is held or ctx is done.
	Lock(ctx context.Context, key string) (unlock func(), err error)
}

// Request is one message for one pane.
type Request struct {
	Pane    string        // pane id, e.g. "%3"
	Profile agent.Profile // how the agent in the pane behaves
	Text    string        // as given; Sanitize is applied
	Force   bool          // send even when a menu is on screen
}

// Result reports a delivery.
type Result struct {
	Outcome  Outcome       `json:"outcome"`
	Pane     string        `json:"pane"`
	Bytes    int           `json:"bytes"`
	Enters   int           `json:"enters"` // Enter presses, retries included
	WasBusy  bool          `json:"busy"`
	Screen   string        `json:"-"` // last screen seen, for errors
	Duration time.Duration `json:"-"`
}

// Deliverer runs the protocol over a multiplexer.
type Deliverer struct {
	Mux    mux.Multiplexer
	Clock  clock.Clock
	Locker Locker
	// Retries is how many times Enter is pressed again when the first press
	// is not confirmed. Zero means the default (3).
	Retries int
	// Confirm is how long the first Enter is watched before a retry; each
	// retry doubles it. Zero means the default (400ms).
	Confirm time.Duration
	// Poll is the interval between screen captures while confirming. Zero
	// means the default (5ms).
	Poll time.Duration
	// Pasted, when set, is told each text as soon as it is in the pane,
	// before Enter (recordings log it as input).
	Pasted func(pane, text string)
}

const captureHistory = 0

// Send delivers req. On refusal the error wraps ErrPaneDead, ErrNotRunning
// or ErrDialog; when Enter was pressed but not seen taken the result's
// outcome is Unconfirmed and the error wraps ErrUnconfirmed.
func (d *Deliverer) Send(ctx context.Context, req Request) (Result, error) {
	start := d.Clock.Now()
	text := Sanitize(req.Text)
	res := Result{Outcome: Failed, Pane: req.Pane, Bytes: len(text)}
	if strings.TrimSpace(text) == "" {
		return res, fmt.Errorf("send to %s: %w", req.Pane, ErrEmpty)
	}
	unlock, err := d.Locker.Lock(ctx, req.Pane)
	if err != nil {
		return res, fmt.Errorf("send to %s: lock: %w", req.Pane, err)
	}
	defer unlock()

	pane, before, err := d.Mux.Inspect(ctx, req.Pane)
	if err != nil {
		return res, fmt.Errorf("send to %s: %w", req.Pane, err)
	}
	if pane.Dead {
		return res, fmt.Errorf("send to %s (%s): %w", req.Pane, describeDead(pane), ErrPaneDead)
	}
	if !req.Profile.Runs(pane.CurrentCommand) {
		return res, fmt.Errorf("send to %s: running %q, expected %s: %w",
			req.Pane, pane.CurrentCommand, strings.Join(req.Profile.Commands, " or "), ErrNotRunning)
	}
	if pane.InMode {
		// Copy mode shows the scrollback, not the agent: leave it and look
		// again.
		if err := d.Mux.LeaveMode(ctx, req.Pane); err != nil {
			return res, fmt.Errorf("send to %s: leave copy mode: %w", req.Pane, err)
		}
		if before, err = d.Mux.Capture(ctx, req.Pane, captureHistory); err != nil {
			return res, fmt.Errorf("send to %s: %w", req.Pane, err)
		}
	}
	res.Screen = before
	if line, ok := agent.Dialog(before); ok && !req.Force {
		return res, fmt.Errorf("send to %s: %q (answer it or use --force): %w", req.Pane, line, ErrDialog)
	}
	res.WasBusy = req.Profile.IsBusy(before)

	if err := d.Mux.Paste(ctx, req.Pane, []byte(text)); err != nil {
		return res, fmt.Errorf("send to %s: paste: %w", req.Pane, err)
	}
	if d.Pasted != nil {
		d.Pasted(req.Pane, text)
	}
	if err := d.Clock.Sleep(ctx, req.Profile.Settle); err != nil {
		return res, err
	}
	pasted, err := d.awaitInput(ctx, req)
	if err != nil {
		return res, err
	}
	res.Screen = pasted
	_, sawInput := typed(req.Profile, pasted)

	window := d.confirm()
	var keys []string
	for attempt := 0; attempt <= d.retries(); attempt++ {
		if _, ok := agent.Dialog(res.Screen); (ok && attempt > 0) || (req.Profile.MenuOpen(res.Screen) && !req.Force) {
			if attempt == 0 {
				return res, fmt.Errorf("send to %s: a completion menu opened over the text (Enter would pick from it): %w", req.Pane, ErrDialog)
			}
			break // never press Enter into a dialog or a menu
		}
		// The key follows the screen of the moment: a busy agent may have
		// finished its turn since the paste (codex ignores Tab when idle),
		// or turned busy (its Enter would steer).
		busy := req.Profile.IsBusy(res.Screen)
		key := "Enter"
		if busy && req.Profile.QueueKey != "" {
			key = req.Profile.QueueKey
		}
		if err := d.Mux.SendKey(ctx, req.Pane, key); err != nil {
			return res, fmt.Errorf("send to %s: press %s: %w", req.Pane, key, err)
		}
		res.Enters++
		keys = append(keys, key)
		ok, err := d.watch(ctx, req, pasted, sawInput, busy, window, &res)
		if err != nil {
			return res, err
		}
		if ok {
			res.Outcome = Submitted
			if busy {
				res.Outcome = Queued
			}
			res.Duration = d.Clock.Now().Sub(start)
			return res, nil
		}
		window *= 2
	}
	res.Outcome = Unconfirmed
	res.Duration = d.Clock.Now().Sub(start)
	return res, fmt.Errorf("send to %s: pressed %s: %w", req.Pane, strings.Join(keys, ", "), ErrUnconfirmed)
}

// watch captures the pane until the submission is confirmed or window ends.
func (d *Deliverer) watch(ctx context.Context, req Request, pasted string, sawInput, wasBusy bool, window time.Duration, res *Result) (bool, error) {
	deadline := d.Clock.Now().Add(window)
	for {
		if err := d.Clock.Sleep(ctx, d.poll()); err != nil {
			return false, err
		}
		screen, err := d.Mux.Capture(ctx, req.Pane, captureHistory)
		if err != nil {
			return false, fmt.Errorf("send to %s: %w", req.Pane, err)
		}
		res.Screen = screen
		if taken(req.Profile, pasted, screen, sawInput, wasBusy) {
			return true, nil
		}
		if _, has := typed(req.Profile, screen); has {
			sawInput = true
		}
		if pane, err := d.Mux.Pane(ctx, req.Pane); err == nil && pane.Dead {
			return false, fmt.Errorf("send to %s: pane died after Enter (%s): %w", req.Pane, describeDead(pane), ErrPaneDead)
		}
		if !d.Clock.Now().Before(deadline) {
			return false, nil
		}
	}
}

// awaitInput captures the pane after the paste settled. When the agent's
// input line is known but still empty, it keeps watching for up to the
// confirm window for the pasted text to show, so that an empty line after
// Enter can be trusted to mean "taken".
func (d *Deliverer) awaitInput(ctx context.Context, req Request) (string, error) {
	deadline := d.Clock.Now().Add(d.confirm())
	for {
		screen, err := d.Mux.Capture(ctx, req.Pane, captureHistory)
		if err != nil {
			return "", fmt.Errorf("send to %s: %w", req.Pane, err)
		}
		if _, has := typed(req.Profile, screen); has || len(req.Profile.Prompts) == 0 || !d.Clock.Now().Before(deadline) {
			return screen, nil
		}
		if err := d.Clock.Sleep(ctx, d.poll()); err != nil {
			return "", err
		}
	}
}

// typed returns the agent's input line and whether it holds text.
func typed(p agent.Profile, screen string) (string, bool) {
	in, found := p.InputLine(screen)
	return in, found && in != ""
}

// taken reports whether screen shows the input taken: the agent turned busy,
// or its input line, seen holding the text, is empty again. For agents whose
// input line is unknown, any change of the screen after Enter counts.
func taken(p agent.Profile, pasted, screen string, sawInput, wasBusy bool) bool {
	if len(p.Prompts) == 0 {
		return screen != pasted
	}
	if !wasBusy && p.IsBusy(screen) {
		return true
	}
	in, found := p.InputLine(screen)
	return sawInput && found && in == ""
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
