package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/partyhq/party/core/clock"
)

// RestartDelay is how long a keeper waits before it restarts a daemon
// that crashed.
const RestartDelay = 2 * time.Second

// CrashLimit crashes within CrashWindow are the crash loop after which
// the keepers that have a bound (the supervisor's, the notifier's) give
// up (Keeper.MaxCrashes, Keeper.CrashWindow).
const (
	CrashLimit  = 3
	CrashWindow = time.Minute
)

// Child is one run of a daemon's process, as its keeper sees it.
type Child interface {
	Pid() int
	// Wait waits for the process to exit; nil is a clean exit.
	Wait() error
	// Terminate asks the process to stop (SIGTERM).
	Terminate()
}

// StartCommand starts cmd and returns it as a Child.
func StartCommand(cmd *exec.Cmd) (Child, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return execChild{cmd}, nil
}

type execChild struct{ cmd *exec.Cmd }

func (c execChild) Pid() int    { return c.cmd.Process.Pid }
func (c execChild) Wait() error { return c.cmd.Wait() }
func (c execChild) Terminate()  { _ = c.cmd.Process.Signal(syscall.SIGTERM) }

// Program starts one run of a daemon as the program argv with env, its
// output on stdout and stderr (Keeper.Start).
func Program(argv, env []string, stdout, stderr io.Writer) func() (Child, error) {
	return func() (Child, error) {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr, cmd.Env = stdout, stderr, env
		return StartCommand(cmd)
	}
}

// ErrCrashLoop is a keeper that gave up: its daemon crashed
// Keeper.MaxCrashes times within Keeper.CrashWindow.
var ErrCrashLoop = errors.New("crash loop")

// Keeper runs a daemon and restarts it when it crashes.
type Keeper struct {
	Dir   string // the daemon's directory, where the keeper's lock is
	Name  string // what the log calls the daemon ("coordinator")
	Clock clock.Clock
	// Start starts one run of the daemon.
	Start func() (Child, error)
	Logf  func(format string, args ...any)
	// MaxCrashes crashes within CrashWindow end Run with ErrCrashLoop;
	// zero restarts for ever. GiveUp, when set, is called with that error
	// while the keeper's lock is still held: what it records is there
	// before anyone sees the keeper gone.
	MaxCrashes  int
	CrashWindow time.Duration
	GiveUp      func(error) error
	// Served, when set, says whether the run with that pid got going (it
	// served) before it crashed: such a crash is restarted and starts the
	// count again, as a crash loop is runs that fail before they get
	// going. A crash it provokes again is bounded by the attempts of the
	// work it was doing.
	Served func(pid int) bool
}

// Run holds the keeper's lock (ErrRunning when another process holds it)
// and runs the daemon until it exits cleanly: a crash is logged and the
// daemon restarted after RestartDelay, until MaxCrashes crashes within
// CrashWindow (ErrCrashLoop, with the last crash's error). When ctx is
// done it stops the daemon, waits for it and returns nil. Run returns
// once the daemon it last started has exited; the goroutine that waits
// for a run ends with that run.
func (k *Keeper) Run(ctx context.Context) error {
	release, err := hold(ctx, k.Clock, k.Dir, KeeperLock, legacyKeeperLocks)
	if err != nil {
		return err
	}
	defer release()
	var crashes []time.Time
	for {
		child, err := k.Start()
		if err != nil {
			return fmt.Errorf("start %s: %w", k.Name, err)
		}
		done := make(chan error, 1)
		go func() { done <- child.Wait() }()
		select {
		case <-ctx.Done():
			child.Terminate()
			k.Logf("keeper: stopped (%s: %v)", k.Name, <-done) // its exit on our SIGTERM, for the log
			return nil
		case err := <-done:
			if err == nil {
				k.Logf("keeper: %s exited cleanly", k.Name)
				return nil
			}
			now := k.Clock.Now()
			if k.Served != nil && k.Served(child.Pid()) {
				crashes = nil
			}
			crashes = append(timesAfter(crashes, now.Add(-k.CrashWindow)), now)
			if k.MaxCrashes > 0 && len(crashes) >= k.MaxCrashes {
				k.Logf("keeper: %s (pid %d) crashed: %v; %d crashes within %s: giving up", k.Name, child.Pid(), err, len(crashes), k.CrashWindow)
				err = fmt.Errorf("%w: %d crashes within %s, the last: %w", ErrCrashLoop, len(crashes), k.CrashWindow, err)
				if k.GiveUp != nil {
					return k.GiveUp(err)
				}
				return err
			}
			k.Logf("keeper: %s (pid %d) crashed: %v; restarting in %s", k.Name, child.Pid(), err, RestartDelay)
		}
		if err := k.Clock.Sleep(ctx, RestartDelay); err != nil {
			k.Logf("keeper: stopped")
			return nil
		}
	}
}

// timesAfter are the times of ts after since.
func timesAfter(ts []time.Time, since time.Time) []time.Time {
	var out []time.Time
	for _, t := range ts {
		if t.After(since) {
			out = append(out, t)
		}
	}
	return out
}
