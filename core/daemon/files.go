package daemon

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/state"
)

// The files of a daemon's directory, the same for every daemon.
const (
	// LockFile is held by the daemon while it runs; it holds its pid.
	LockFile = "daemon.lock"
	// KeeperLock is held by the daemon's keeper while it runs; it holds
	// the keeper's pid.
	KeeperLock = "keeper.lock"
	// LogFile gets the daemon's and its keeper's log lines (Logger).
	LogFile = "daemon.log"
)

// The names of the locks before they were the same for every daemon: the
// review coordinator's and the trigger supervisor's directories had
// coordinator.lock and supervisor.lock, the notifier's notify.lock. A
// daemon an older party started (before an upgrade) still holds them, so
// Running, Hold and Stop look at them too. They can go one release after
// the names changed. The old log, coordinator.log, is read by people
// only: a new daemon writes LogFile, nothing reads the old one.
var (
	legacyLocks       = []string{"coordinator.lock", "notify.lock"}
	legacyKeeperLocks = []string{"supervisor.lock"}
)

// ErrRunning is a daemon (or its keeper) that runs already.
var ErrRunning = errors.New("already running")

// Proc says whether the daemon of a directory runs, and its keeper.
type Proc struct {
	Running bool `json:"running"`
	PID     int  `json:"pid,omitempty"`
	// Keeper is the pid of the daemon's keeper (the JSON name is the one
	// party printed before the keeper had its name, and stays).
	Keeper int  `json:"supervisor_pid,omitempty"`
	Kept   bool `json:"-"` // the keeper's lock is held
}

// Up says whether the daemon or its keeper runs.
func (p Proc) Up() bool { return p.Running || p.Kept }

// Describe is "running (pid N)" when the daemon runs, else stopped.
func (p Proc) Describe(stopped string) string {
	if p.Running {
		return "running (pid " + strconv.Itoa(p.PID) + ")"
	}
	return stopped
}

// Running says whether the daemon of dir runs: whether its lock is held
// (a process that holds it is alive), and by which pid; and the same of
// its keeper.
func Running(dir string) Proc {
	var p Proc
	p.PID, p.Running = holder(dir, LockFile, legacyLocks)
	p.Keeper, p.Kept = holder(dir, KeeperLock, legacyKeeperLocks)
	return p
}

// holder is the pid of the process that holds the lock name of dir, or
// one of its legacy names.
func holder(dir, name string, legacy []string) (int, bool) {
	for _, n := range append([]string{name}, legacy...) {
		if pid, held := state.Holder(filepath.Join(dir, n)); held {
			return pid, true
		}
	}
	return 0, false
}

// LockPaths are the paths of the daemon's lock of dir: its name, then the
// names an older party used (a reader that watches the lock for changes
// watches them all).
func LockPaths(dir string) []string {
	paths := []string{filepath.Join(dir, LockFile)}
	for _, n := range legacyLocks {
		paths = append(paths, filepath.Join(dir, n))
	}
	return paths
}

// Hold takes the daemon's lock of dir for this process (ErrRunning when
// another process holds it, or its legacy name) and returns its release.
func Hold(ctx context.Context, clk clock.Clock, dir string) (release func(), err error) {
	return hold(ctx, clk, dir, LockFile, legacyLocks)
}

func hold(ctx context.Context, clk clock.Clock, dir, name string, legacy []string) (func(), error) {
	for _, n := range legacy {
		if pid, held := state.Holder(filepath.Join(dir, n)); held {
			return nil, fmt.Errorf("lock %s (pid %d): %w", filepath.Join(dir, n), pid, ErrRunning)
		}
	}
	release, err := state.Hold(ctx, clk, filepath.Join(dir, name))
	if errors.Is(err, state.ErrHeld) {
		return nil, fmt.Errorf("%w: %w", ErrRunning, err)
	}
	return release, err
}
