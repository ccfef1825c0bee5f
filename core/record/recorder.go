package record

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
)

// Recorder records the panes of a session into Out, one cast per pane
// (named by role): what the pane printed, what party delivered to it (the
// "input" events of the session's event log) and size changes; at the end
// it copies the event log, redacted, beside the casts.
type Recorder struct {
	Mux      mux.Multiplexer
	Clock    clock.Clock
	Session  string
	Panes    []mux.Pane // the panes to record
	Out      string     // the directory of the casts (it exists)
	Events   string     // the session's event log
	Redactor *Redactor

	casts  map[string]*Cast
	sizes  map[string][2]int
	files  []*os.File
	offset int64
}

// Sources are what a recording reads while it runs.
type Sources struct {
	// Output is what the panes print; it is closed when the session ends.
	Output <-chan tmux.Output
	// Wake fires when an input was logged.
	Wake <-chan struct{}
	// Tick is the safety net: the event log and pane sizes are re-read on
	// every tick.
	Tick <-chan time.Time
}

// Start creates the casts and writes into each what its pane shows now.
// Close must be called even when Start fails.
func (r *Recorder) Start(ctx context.Context) error {
	start := r.Clock.Now()
	r.casts, r.sizes = map[string]*Cast{}, map[string][2]int{}
	for _, p := range r.Panes {
		name := p.Role
		if name == "" {
			name = strings.TrimPrefix(p.ID, "%")
		}
		fh, err := Create(filepath.Join(r.Out, name+".cast"))
		if err != nil {
			return err
		}
		r.files = append(r.files, fh)
		c, err := NewCast(fh, Header{Width: p.Width, Height: p.Height, Title: r.Session + " " + name,
			Party: PaneInfo{Pane: p.ID, Role: p.Role, Agent: p.Agent}}, start, r.Redactor)
		if err != nil {
			return err
		}
		r.casts[p.ID], r.sizes[p.ID] = c, [2]int{p.Width, p.Height}
		// The recording starts from what the pane shows now.
		if screen, err := r.Mux.Capture(ctx, p.ID, 0); err == nil {
			if err := c.Output(start, []byte("\x1b[H\x1b[2J"+strings.ReplaceAll(screen, "\n", "\r\n")+"\r\n")); err != nil {
				return err
			}
		}
	}
	r.offset = state.Size(r.Events)
	return nil
}

// Recording is how many panes are recorded.
func (r *Recorder) Recording() int { return len(r.casts) }

// Run records until the output ends (the session ended) or ctx ends, then
// copies the event log beside the casts. Start must have been called.
// What a pane printed before party delivered an input is written before
// that input: on a wake or a tick the output already waiting is taken
// first, then the event log.
func (r *Recorder) Run(ctx context.Context, src Sources) error {
	for {
		select {
		case o, ok := <-src.Output:
			if !ok {
				return r.finish() // the session ended
			}
			if err := r.output(o); err != nil {
				return err
			}
			continue
		case <-src.Wake: // an input was logged
		case <-src.Tick:
		case <-ctx.Done():
			r.side(context.WithoutCancel(ctx))
			return r.finish()
		}
		ended, err := r.drain(src.Output)
		if err != nil {
			return err
		}
		r.side(ctx)
		if ended {
			return r.finish()
		}
	}
}

// drain writes the output waiting on the channel (what its sender put in
// its buffer); ended says it was closed.
func (r *Recorder) drain(output <-chan tmux.Output) (ended bool, err error) {
	for n := len(output); n > 0; n-- {
		o, ok := <-output
		if !ok {
			return true, nil
		}
		if err := r.output(o); err != nil {
			return false, err
		}
	}
	return false, nil
}

func (r *Recorder) output(o tmux.Output) error {
	if c := r.casts[o.Pane]; c != nil {
		return c.Output(r.Clock.Now(), o.Data)
	}
	return nil
}

// Close flushes every cast and closes its file. A recording whose tail
// was not written is an error.
func (r *Recorder) Close() error {
	var errs []error
	for _, c := range r.casts {
		errs = append(errs, c.Flush())
	}
	for _, f := range r.files {
		_ = f.Close()
	}
	return errors.Join(errs...)
}

// side adds what party delivered (from the event log) and pane size
// changes to the casts.
func (r *Recorder) side(ctx context.Context) {
	now := r.Clock.Now()
	lines, next, err := state.ReadFrom(r.Events, r.offset)
	if err == nil {
		for _, l := range lines {
			var ev struct {
				Kind, Pane, Text string
			}
			if json.Unmarshal(l, &ev) == nil && ev.Kind == "input" && r.casts[ev.Pane] != nil {
				_ = r.casts[ev.Pane].Input(now, ev.Text)
			}
		}
		r.offset = next
	}
	panes, err := r.Mux.ListPanes(ctx, r.Session)
	if err != nil {
		return
	}
	for _, p := range panes {
		if c := r.casts[p.ID]; c != nil && r.sizes[p.ID] != [2]int{p.Width, p.Height} {
			r.sizes[p.ID] = [2]int{p.Width, p.Height}
			_ = c.Resize(now, p.Width, p.Height)
		}
	}
}

// finish copies the session's event log, redacted, beside the casts.
func (r *Recorder) finish() error {
	if b, err := os.ReadFile(r.Events); err == nil {
		if err := WriteFile(filepath.Join(r.Out, "events.jsonl"), []byte(r.Redactor.Redact(string(b)))); err != nil {
			return err
		}
	}
	return nil
}
