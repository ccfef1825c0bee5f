package cli

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
)

// watcher turns pane output (seen by a control-mode client) and hook
// events (the session's wake sockets) into per-pane wake-ups. Its
// goroutines end when close is called or the session ends.
type watcher struct {
	cc     *tmux.Control
	waker  *state.Waiter
	mu     sync.Mutex
	wakes  map[string]chan struct{} // per pane: its output and hook events
	hooks  map[string]chan struct{} // per pane: hook events only
	anyC   chan struct{}            // any pane printed
	closed chan struct{}
}

// newWatcher starts the wake-up sources of session. With output false only
// hook events wake (a wait on hooks needs no pane output).
func newWatcher(ctx context.Context, f *Factory, tc *tmux.Client, session, stateDir string, output bool) (*watcher, error) {
	w := &watcher{wakes: map[string]chan struct{}{}, hooks: map[string]chan struct{}{}, anyC: make(chan struct{}, 1), closed: make(chan struct{})}
	waker, err := state.ListenSession(f.Getenv, stateDir)
	if err != nil {
		return nil, err
	}
	w.waker = waker
	cc, err := tc.Control(ctx, session, output)
	if err != nil {
		// The safety-net poll still works; say so rather than fail.
		fmt.Fprintf(f.IO.ErrOut, "party: no control-mode client (%v); polling\n", err)
	} else {
		w.cc = cc
		go func() {
			for o := range cc.Output() {
				w.wake(o.Pane)
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

func (w *watcher) close() {
	close(w.closed)
	if w.cc != nil {
		w.cc.Close()
	}
	w.waker.Close()
}

// done is closed when the session's control client exits (the session
// ended); nil when there is no control client.
func (w *watcher) done() <-chan struct{} {
	if w.cc == nil {
		return nil
	}
	return w.cc.Done()
}

// wakeChan returns the channel that wakes when pane prints or a hook
// event arrives.
func (w *watcher) wakeChan(pane string) chan struct{} { return w.chanIn(w.wakes, pane) }

// hookChan returns the channel that wakes only on hook events: a wait on
// hooks need not re-check whenever the agent's spinner turns.
func (w *watcher) hookChan(pane string) chan struct{} { return w.chanIn(w.hooks, pane) }

func (w *watcher) chanIn(m map[string]chan struct{}, pane string) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := m[pane]
	if !ok {
		c = make(chan struct{}, 1)
		m[pane] = c
	}
	return c
}

// mux is the multiplexer for waits: liveness checks and captures go over
// the control connection when there is one, with no tmux process each.
func (w *watcher) mux(tc *tmux.Client) mux.Multiplexer {
	if w.cc == nil {
		return tc
	}
	return controlMux{Client: tc, cc: w.cc}
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
func (w *watcher) wake(pane string) {
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
