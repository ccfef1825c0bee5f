package wait

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
)

// WatchConfig says which session a Watcher watches.
type WatchConfig struct {
	Tmux     *tmux.Client
	Session  string
	StateDir string // the session's state dir: its wake sockets
	Getenv   func(string) string
	// Output false wakes on hook events only (a wait on hooks needs no
	// pane output).
	Output bool
	// Pause stops a pane's output reaching the watcher once it has woken
	// the pane's waiters, until Resume: an agent flooding its pane then
	// costs the watcher (and tmux, which sends the control client every
	// byte) one notification per look, not every byte it prints.
	Pause bool
	// Warn is told when no control-mode client could start: waits then
	// rely on their safety-net poll. Nil says nothing.
	Warn func(error)
}

// Watcher turns pane output (seen by a control-mode client) and hook
// events (the session's wake sockets) into per-pane wake-ups. Its
// goroutines end when Close is called or the session ends.
type Watcher struct {
	tc *tmux.Client
	cc *tmux.Control
	// paused are the panes whose output is paused; pauseMu is held while
	// a pause or a resume is sent, so the two never cross.
	pauseMu sync.Mutex
	paused  map[string]bool
	pauses  chan string
	waker   *state.Waiter
	unheard func(string, time.Time) (state.Report, bool)
	mu      sync.Mutex
	wakes   map[string]chan struct{} // per pane: its output and hook events
	hooks   map[string]chan struct{} // per pane: hook events only
	anyC    chan struct{}            // any pane printed
	closed  chan struct{}
}

// Watch starts the wake-up sources of a session.
func Watch(ctx context.Context, c WatchConfig) (*Watcher, error) {
	w := &Watcher{tc: c.Tmux, wakes: map[string]chan struct{}{}, hooks: map[string]chan struct{}{}, anyC: make(chan struct{}, 1), closed: make(chan struct{}),
		paused: map[string]bool{}}
	waker, err := state.ListenSession(c.Getenv, c.StateDir)
	if err != nil {
		return nil, err
	}
	w.waker = waker
	w.unheard = SessionUnheard(waker, c.Getenv, c.StateDir)
	cc, err := c.Tmux.Control(ctx, c.Session, c.Output)
	if err != nil {
		// The safety-net poll still works; say so rather than fail.
		if c.Warn != nil {
			c.Warn(err)
		}
	} else {
		w.cc = cc
		if c.Pause && c.Output {
			// Pauses are sent off the output loop: a command's reply comes
			// through the reader that this loop drains.
			w.pauses = make(chan string, 64)
			go w.pauseLoop()
		}
		go func() {
			for o := range cc.Output() {
				w.wake(o.Pane)
				if w.pauses != nil {
					select {
					case w.pauses <- o.Pane:
					default: // a pause is on its way already
					}
				}
			}
			if w.pauses != nil {
				close(w.pauses)
			}
		}()
	}
	go func() {
		for {
			select {
			case _, ok := <-waker.C:
				if !ok {
					return
				}
				w.wake("")
			case <-w.closed:
				return
			}
		}
	}()
	return w, nil
}

// Close stops the watcher's sources.
func (w *Watcher) Close() {
	close(w.closed)
	if w.cc != nil {
		w.cc.Close()
	}
	w.waker.Close()
}

// pauseLoop pauses the output of each pane that printed, once, until
// Resume. It ends when the control client's output ends.
func (w *Watcher) pauseLoop() {
	for pane := range w.pauses {
		w.pauseMu.Lock()
		if !w.paused[pane] {
			// A pane gone or a client closed: the next Resume finds out.
			if _, err := w.cc.Command(context.Background(), "refresh-client", "-A", pane+":pause"); err == nil {
				w.paused[pane] = true
			}
		}
		w.pauseMu.Unlock()
	}
}

// Resume lets pane's output wake its waiters again, when the watcher
// paused it (WatchConfig.Pause): a waiter calls it before each look, so
// that what the pane prints after the look wakes it.
func (w *Watcher) Resume(ctx context.Context, pane string) {
	if w.pauses == nil {
		return
	}
	w.pauseMu.Lock()
	defer w.pauseMu.Unlock()
	if w.paused[pane] {
		if _, err := w.cc.Command(ctx, "refresh-client", "-A", pane+":continue"); err == nil {
			w.paused[pane] = false
		}
	}
}

// Unheard returns the last report of a hook of pane that could not record
// its event (state.Report): one sent while the watcher listened, else one
// a hook noted at or after since (SessionUnheard).
func (w *Watcher) Unheard(pane string, since time.Time) (state.Report, bool) {
	return w.unheard(pane, since)
}

// Done is closed when the session's control client exits (the session
// ended); nil when there is no control client.
func (w *Watcher) Done() <-chan struct{} {
	if w.cc == nil {
		return nil
	}
	return w.cc.Done()
}

// Any wakes when any pane prints or a hook event arrives.
func (w *Watcher) Any() <-chan struct{} { return w.anyC }

// Wake returns the channel that wakes when pane prints or a hook event
// arrives.
func (w *Watcher) Wake(pane string) <-chan struct{} { return w.chanIn(w.wakes, pane) }

// Hook returns the channel that wakes only on hook events: a wait on
// hooks need not re-check whenever the agent's spinner turns.
func (w *Watcher) Hook(pane string) <-chan struct{} { return w.chanIn(w.hooks, pane) }

func (w *Watcher) chanIn(m map[string]chan struct{}, pane string) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := m[pane]
	if !ok {
		c = make(chan struct{}, 1)
		m[pane] = c
	}
	return c
}

// Mux is the multiplexer for waits: liveness checks and captures go over
// the control connection when there is one, with no tmux process each.
func (w *Watcher) Mux() mux.Multiplexer {
	if w.cc == nil {
		return w.tc
	}
	return controlMux{Client: w.tc, cc: w.cc}
}

// controlMux is a tmux client whose Pane and Capture use a control client.
type controlMux struct {
	*tmux.Client
	cc *tmux.Control
}

func (m controlMux) Pane(ctx context.Context, id string) (mux.Pane, error) {
	p, err := m.cc.PaneState(ctx, id)
	return p, sessionGone(id, err)
}

func (m controlMux) Rows(ctx context.Context, id string, history int) (mux.Rows, error) {
	r, err := m.cc.Rows(ctx, id, history)
	return r, sessionGone(id, err)
}

func (m controlMux) Capture(ctx context.Context, id string, history int) (string, error) {
	s, err := m.cc.CaptureHistory(ctx, id, history)
	return s, sessionGone(id, err)
}

// sessionGone reads a closed control client as what it means: the
// session (or its whole server) ended, a not-found error (exit 3).
func sessionGone(pane string, err error) error {
	if errors.Is(err, tmux.ErrControlClosed) {
		return fmt.Errorf("%s: the session or its tmux server ended (%w): %w", pane, err, mux.ErrNoSession)
	}
	return err
}

// wake wakes pane's waiter, or every waiter when pane is empty.
func (w *Watcher) wake(pane string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	poke := func(c chan struct{}) {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	poke(w.anyC)
	for p, c := range w.wakes {
		if pane == "" || p == pane {
			poke(c)
		}
	}
	if pane == "" {
		for _, c := range w.hooks {
			poke(c)
		}
	}
}
