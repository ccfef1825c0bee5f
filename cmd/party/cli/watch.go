package cli

import (
	"context"
	"fmt"
	"sync"

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
	wakes  map[string]chan struct{} // per pane
	anyC   chan struct{}            // any pane printed
	closed chan struct{}
}

func newWatcher(ctx context.Context, f *Factory, tc *tmux.Client, session, stateDir string) (*watcher, error) {
	w := &watcher{wakes: map[string]chan struct{}{}, anyC: make(chan struct{}, 1), closed: make(chan struct{})}
	waker, err := state.Listen(state.WakeDir(f.Getenv, stateDir))
	if err != nil {
		return nil, err
	}
	w.waker = waker
	cc, err := tc.Control(ctx, session)
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

// wakeChan returns the wake channel of pane.
func (w *watcher) wakeChan(pane string) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := w.wakes[pane]
	if !ok {
		c = make(chan struct{}, 1)
		w.wakes[pane] = c
	}
	return c
}

// wake wakes pane's waiter, or every waiter when pane is empty.
func (w *watcher) wake(pane string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case w.anyC <- struct{}{}:
	default:
	}
	for p, c := range w.wakes {
		if pane == "" || p == pane {
			select {
			case c <- struct{}{}:
			default:
			}
		}
	}
}
