package review

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/state"
)

// ErrRunning is a coordinator (or its keeper) that already runs.
var ErrRunning = errors.New("coordinator already running")

// Start initializes the review state of dir (if new) and, unless a
// coordinator or its keeper already runs (ErrRunning), calls spawn to
// start its keeper, then waits up to 5 s for the coordinator to run, so
// that a signal sent right after is taken at once (daemon.Start).
func Start(ctx context.Context, clk clock.Clock, dir string, maxIterations int, spawn func() error) error {
	if daemon.Running(dir).Up() {
		return ErrRunning
	}
	if err := Init(dir, clk.Now().UTC(), maxIterations); err != nil {
		return err
	}
	_, err := daemon.Start(ctx, clk, dir, spawn)
	if errors.Is(err, daemon.ErrRunning) {
		return ErrRunning
	}
	return err
}

// Serve is the coordinator process of a session: it initializes the
// review state (if new), holds the coordinator's lock (daemon.Hold; ErrRunning when
// another process holds it), builds its effects with newEffects, listens
// for the session's wake-ups and runs c until ctx is done.
func (c *Coordinator) Serve(ctx context.Context, getenv func(string) string, newEffects func() (Effects, error)) error {
	if err := Init(c.Dir, c.Clock.Now().UTC(), c.Config.MaxIterations); err != nil {
		return err
	}
	release, err := daemon.Hold(ctx, c.Clock, c.Dir)
	if errors.Is(err, daemon.ErrRunning) {
		return ErrRunning
	}
	if err != nil {
		return err
	}
	defer release()
	if c.Effects, err = newEffects(); err != nil {
		return err
	}
	w, err := state.ListenSession(getenv, filepath.Dir(c.Dir))
	if err != nil {
		return err
	}
	defer w.Close()
	c.Wake = w.C
	c.Logf("coordinator started (pid %d), state dir %s", os.Getpid(), c.Dir)
	err = c.Run(ctx)
	c.Logf("coordinator stopped")
	return err
}

// Await reads the status of dir every poll until it is in state want, and
// returns it. When ctx ends first, it returns the status it read last
// (as Load returned it, whatever the error) and ctx's error.
func Await(ctx context.Context, clk clock.Clock, dir string, want State, poll time.Duration) (Status, error) {
	for {
		s, err := Load(dir)
		if err == nil && s.State == want {
			return s, nil
		}
		if err := clk.Sleep(ctx, poll); err != nil {
			return s, err
		}
	}
}
