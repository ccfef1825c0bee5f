package review

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/termsafe"
)

// Logger returns a logger that writes timestamped lines to w (the hidden
// window's stderr) and appends them to the log file of dir.
func Logger(clk clock.Clock, w io.Writer, dir string) func(string, ...any) {
	return func(format string, args ...any) {
		line := clk.Now().UTC().Format(time.RFC3339Nano) + " " + termsafe.Text(fmt.Sprintf(format, args...)) + "\n"
		fmt.Fprint(w, line)
		if fh, err := os.OpenFile(filepath.Join(dir, LogFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			_, _ = io.WriteString(fh, line)
			fh.Close()
		}
	}
}

// Proc says whether the coordinator of a review directory runs.
type Proc struct {
	Running    bool `json:"running"`
	PID        int  `json:"pid,omitempty"`
	Supervisor int  `json:"supervisor_pid,omitempty"`
	Supervised bool `json:"-"` // the supervisor's lock is held
}

// Running says whether the coordinator of dir runs: whether its lock is
// held (a process that holds it is alive), and by which pid; and the same
// of its supervisor.
func Running(dir string) Proc {
	var p Proc
	p.PID, p.Running = state.Holder(filepath.Join(dir, CoordinatorLock))
	p.Supervisor, p.Supervised = state.Holder(filepath.Join(dir, SupervisorLock))
	return p
}

// stopPoll is how often Stop and AwaitRunning look at the locks, and
// stopTries how many times (5 s in all).
const (
	stopPoll  = 20 * time.Millisecond
	stopTries = 250
)

// StopTimeoutError is a coordinator that did not stop within 5 s of
// being told to.
type StopTimeoutError struct{ PID int }

func (e *StopTimeoutError) Error() string {
	return fmt.Sprintf("coordinator (pid %d) did not stop within 5s", e.PID)
}

// Is makes a StopTimeoutError an ErrRunning: the coordinator still runs.
func (e *StopTimeoutError) Is(target error) bool { return target == ErrRunning }

// Stop sends SIGTERM to the supervisor of dir (else the coordinator) and
// waits for their locks to go. It signals only a pid that a lock's holder
// gave: a process that holds the lock, never one a stale file names.
func Stop(ctx context.Context, clk clock.Clock, dir string) error {
	signalled := map[int]bool{}
	for i := 0; ; i++ {
		p := Running(dir)
		if !p.Running && !p.Supervised {
			return nil
		}
		pid := p.PID
		if p.Supervised {
			pid = p.Supervisor // it stops the coordinator, and does not restart it
		}
		if pid != 0 && !signalled[pid] {
			signalled[pid] = true
			if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("stop coordinator (pid %d): %w", pid, err)
			}
		}
		if i == stopTries {
			return &StopTimeoutError{PID: pid}
		}
		if err := clk.Sleep(ctx, stopPoll); err != nil {
			return err
		}
	}
}

// Start initializes the review state of dir (if new) and, unless a
// coordinator or its supervisor already runs (ErrRunning), calls spawn to
// start the supervisor, then waits up to 5 s for the coordinator to run,
// so that a signal sent right after is taken at once.
func Start(ctx context.Context, clk clock.Clock, dir string, maxIterations int, spawn func() error) error {
	if p := Running(dir); p.Running || p.Supervised {
		return ErrRunning
	}
	if err := Init(dir, clk.Now().UTC(), maxIterations); err != nil {
		return err
	}
	if err := spawn(); err != nil {
		return err
	}
	for i := 0; i < stopTries && !Running(dir).Running; i++ {
		if err := clk.Sleep(ctx, stopPoll); err != nil {
			return err
		}
	}
	return nil
}

// Serve is the coordinator process of a session: it initializes the
// review state (if new), holds the coordinator's lock (ErrRunning when
// another process holds it), builds its effects with newEffects, listens
// for the session's wake-ups and runs c until ctx is done.
func (c *Coordinator) Serve(ctx context.Context, getenv func(string) string, newEffects func() (Effects, error)) error {
	if err := Init(c.Dir, c.Clock.Now().UTC(), c.Config.MaxIterations); err != nil {
		return err
	}
	release, err := state.Hold(ctx, c.Clock, filepath.Join(c.Dir, CoordinatorLock))
	if errors.Is(err, state.ErrHeld) {
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
