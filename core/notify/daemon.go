package notify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
)

// ErrRunning is a notifier started for a session that has one.
var ErrRunning = errors.New("the notifier runs already")

// running is err, ErrRunning said for session when the notifier's lock
// is held.
func running(session string, err error) error {
	if errors.Is(err, daemon.ErrRunning) {
		return fmt.Errorf("session %s: %w", session, ErrRunning)
	}
	return err
}

// Start runs launch, which starts the keeper of the notifier of session
// (whose state dir is stateDir) in its hidden window, and waits, up to
// 5 s, until the notifier holds its lock (daemon.Start): started false
// when it has not by then.
func Start(ctx context.Context, clk clock.Clock, session, stateDir string, launch func() error) (started bool, err error) {
	dir := Dir(stateDir)
	if err := state.MkdirPrivate(dir); err != nil {
		return false, err
	}
	started, err = daemon.Start(ctx, clk, dir, launch)
	return started, running(session, err)
}

// Keep runs the notifier of session with start until it exits cleanly,
// restarting it when it crashes (daemon.Keeper), and gives up after
// daemon.CrashLimit crashes within daemon.CrashWindow; its log goes to
// stderr and the notifier's log file.
func Keep(ctx context.Context, clk clock.Clock, session, stateDir string, stderr io.Writer, start func() (daemon.Child, error)) error {
	dir := Dir(stateDir)
	if err := state.MkdirPrivate(dir); err != nil {
		return err
	}
	k := &daemon.Keeper{Dir: dir, Name: "notifier", Clock: clk, Logf: daemon.Logger(clk, stderr, dir),
		Start: start, MaxCrashes: daemon.CrashLimit, CrashWindow: daemon.CrashWindow}
	return running(session, k.Run(ctx))
}

// Serve is n as the daemon of its session (party notify watch): it holds
// the notifier's lock (daemon.Hold; ErrRunning when another process
// does), takes what happened before it ran as history, reads the
// supervisor's audit trail through its API as the operator (Audit), and
// runs (Run) woken by the session's wake-ups, until ctx ends. Its start
// and stop go to stderr and its log file.
func (n *Notifier) Serve(ctx context.Context, clk clock.Clock, getenv func(string) string, stderr, log io.Writer, warn func(error)) error {
	if err := state.MkdirPrivate(n.Dir); err != nil {
		return err
	}
	release, err := daemon.Hold(ctx, clk, n.Dir)
	if err != nil {
		return running(n.Session, err)
	}
	defer release()
	logf := daemon.Logger(clk, stderr, n.Dir)
	logf("notifier started (pid %d), state dir %s", os.Getpid(), n.Dir)
	defer logf("notifier stopped")
	n.Since = clk.Now().Add(-time.Minute) // what happened before it ran is history
	api, err := supervise.OperatorClient(getenv, n.StateDir)
	if err != nil {
		return err
	}
	defer api.HTTP.CloseIdleConnections()
	n.Audit = api
	waiter, err := state.ListenSession(getenv, n.StateDir)
	if err != nil {
		return err
	}
	defer waiter.Close()
	return n.Run(ctx, clk, waiter.C, log, warn)
}
