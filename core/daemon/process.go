package daemon

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/partyhq/party/core/clock"
)

// poll is how often Stop and Start look at the locks, and tries how many
// times (5 s in all).
const (
	poll  = 20 * time.Millisecond
	tries = 250
)

// StopTimeoutError is a daemon that did not stop within 5 s of being told
// to.
type StopTimeoutError struct {
	Dir string
	PID int
}

func (e *StopTimeoutError) Error() string {
	return fmt.Sprintf("the daemon of %s (pid %d) did not stop within 5s", e.Dir, e.PID)
}

// Is makes a StopTimeoutError an ErrRunning: the daemon still runs.
func (e *StopTimeoutError) Is(target error) bool { return target == ErrRunning }

// Stop sends SIGTERM to the keeper of dir (else the daemon) and waits for
// their locks to go. It signals only a pid that a lock's holder gave: a
// process that holds the lock, never one a stale file names.
func Stop(ctx context.Context, clk clock.Clock, dir string) error {
	signalled := map[int]bool{}
	for i := 0; ; i++ {
		p := Running(dir)
		if !p.Up() {
			return nil
		}
		pid := p.PID
		if p.Kept {
			pid = p.Keeper // it stops the daemon, and does not restart it
		}
		if pid != 0 && !signalled[pid] {
			signalled[pid] = true
			if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("stop the daemon of %s (pid %d): %w", dir, pid, err)
			}
		}
		if i == tries {
			return &StopTimeoutError{Dir: dir, PID: pid}
		}
		if err := clk.Sleep(ctx, poll); err != nil {
			return err
		}
	}
}

// Start calls spawn to start the daemon of dir (or its keeper), unless it
// or its keeper runs already (ErrRunning), then waits up to 5 s for the
// daemon to run, so that what is sent to it right after is taken at once.
// It says whether the daemon runs by then.
func Start(ctx context.Context, clk clock.Clock, dir string, spawn func() error) (bool, error) {
	if p := Running(dir); p.Up() {
		return false, fmt.Errorf("%s: %w", dir, ErrRunning)
	}
	if err := spawn(); err != nil {
		return false, err
	}
	for i := 0; i < tries; i++ {
		if Running(dir).Running {
			return true, nil
		}
		if err := clk.Sleep(ctx, poll); err != nil {
			return false, err
		}
	}
	return Running(dir).Running, nil
}
