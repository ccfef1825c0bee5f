package record

import (
	"context"
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
)

// LockFile is the lock, in a session's state dir, that a recorder of the
// session holds once it records: party start --record waits for it.
const LockFile = "recorder.lock"

// tickEvery is how often a session's recording re-reads the event log
// and the pane sizes when nothing woke it.
const tickEvery = time.Second

// DefaultOut is the directory of a recording of session begun at t.
func DefaultOut(session string, t time.Time) string {
	return filepath.Join("recordings", session+"-"+t.Format("20060102-150405"))
}

// Stream is what a session's panes print, attached.
type Stream struct {
	Output <-chan tmux.Output
	// Close detaches.
	Close func() error
}

// Session records the panes of a party session (party record).
type Session struct {
	Mux   mux.Multiplexer
	Clock clock.Clock
	// Getenv finds the session's wake-up socket and TMUX_PANE, the
	// recorder's own pane, which is not recorded.
	Getenv   func(string) string
	Name     string
	StateDir string
	Panes    []mux.Pane
	Out      string // the directory of the casts; "" is DefaultOut
	Redactor *Redactor
	// Output attaches to what the session's panes print (tmux control
	// mode).
	Output func(ctx context.Context) (Stream, error)
	// Started, when set, is told where the casts go and how many panes are
	// recorded once recording has begun.
	Started func(out string, panes int)
}

// Run records until the session ends or ctx ends and returns the
// directory of the casts. Once it records it holds LockFile; a second
// recorder of the session records all the same.
func (s *Session) Run(ctx context.Context) (out string, rerr error) {
	out = s.Out
	if out == "" {
		out = DefaultOut(s.Name, s.Clock.Now())
	}
	if err := MkdirPrivate(out); err != nil {
		return out, err
	}
	stream, err := s.Output(ctx)
	if err != nil {
		return out, err
	}
	defer func() { _ = stream.Close() }()
	var panes []mux.Pane
	for _, p := range s.Panes {
		if p.ID != s.Getenv("TMUX_PANE") {
			panes = append(panes, p)
		}
	}
	rec := &Recorder{Mux: s.Mux, Clock: s.Clock, Session: s.Name, Panes: panes, Out: out,
		Events: filepath.Join(s.StateDir, state.EventLog), Redactor: s.Redactor}
	defer func() {
		if err := rec.Close(); err != nil && rerr == nil {
			rerr = err
		}
	}()
	if err := rec.Start(ctx); err != nil {
		return out, err
	}
	waker, err := state.ListenSession(s.Getenv, s.StateDir)
	if err != nil {
		return out, err
	}
	defer waker.Close()
	if release, err := state.Hold(ctx, s.Clock, filepath.Join(s.StateDir, LockFile)); err == nil {
		defer release()
	}
	if s.Started != nil {
		s.Started(out, rec.Recording())
	}
	tctx, stop := context.WithCancel(ctx)
	defer stop()
	return out, rec.Run(ctx, Sources{Output: stream.Output, Wake: waker.C, Tick: ticks(tctx, s.Clock, tickEvery)})
}

// ticks sends the time every d of clk until ctx ends; its goroutine exits
// then.
func ticks(ctx context.Context, clk clock.Clock, d time.Duration) <-chan time.Time {
	c := make(chan time.Time)
	go func() {
		for clk.Sleep(ctx, d) == nil {
			select {
			case c <- clk.Now():
			case <-ctx.Done():
				return
			}
		}
	}()
	return c
}
