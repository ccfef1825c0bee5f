package review

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/state"
)

// ErrRunning is a coordinator (or its supervisor) that already runs.
var ErrRunning = errors.New("coordinator already running")

// RestartDelay is how long the supervisor waits before restarting a
// coordinator that crashed.
const RestartDelay = 2 * time.Second

// Child is one run of the coordinator process, as the supervisor sees it.
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

// ErrCrashLoop is a supervisor that gave up: its program crashed
// Supervisor.MaxCrashes times within Supervisor.CrashWindow.
var ErrCrashLoop = errors.New("crash loop")

// Supervisor runs the coordinator and restarts it when it crashes.
type Supervisor struct {
	Dir   string // the review directory
	Clock clock.Clock
	// Start starts one run of the coordinator.
	Start func() (Child, error)
	Logf  func(format string, args ...any)
	// MaxCrashes crashes within CrashWindow end Run with ErrCrashLoop;
	// zero restarts for ever. GiveUp, when set, is called with that error
	// while the supervisor's lock is still held: what it records is there
	// before anyone sees the supervisor gone.
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

// Run holds the supervisor's lock (ErrRunning when another process holds
// it) and runs the coordinator until it exits cleanly: a crash is logged
// and the coordinator restarted after RestartDelay, until MaxCrashes
// crashes within CrashWindow (ErrCrashLoop, with the last crash's error).
// When ctx is done it
// stops the coordinator, waits for it and returns nil. Run returns once
// the coordinator it last started has exited; the goroutine that waits
// for a run ends with that run.
func (s *Supervisor) Run(ctx context.Context) error {
	release, err := state.Hold(ctx, s.Clock, filepath.Join(s.Dir, SupervisorLock))
	if errors.Is(err, state.ErrHeld) {
		return ErrRunning
	}
	if err != nil {
		return err
	}
	defer release()
	var crashes []time.Time
	for {
		child, err := s.Start()
		if err != nil {
			return fmt.Errorf("start coordinator: %w", err)
		}
		done := make(chan error, 1)
		go func() { done <- child.Wait() }()
		select {
		case <-ctx.Done():
			child.Terminate()
			s.Logf("supervisor: stopped (coordinator: %v)", <-done) // its exit on our SIGTERM, for the log
			return nil
		case err := <-done:
			if err == nil {
				s.Logf("supervisor: coordinator exited cleanly")
				return nil
			}
			now := s.Clock.Now()
			if s.Served != nil && s.Served(child.Pid()) {
				crashes = nil
			}
			crashes = append(timesAfter(crashes, now.Add(-s.CrashWindow)), now)
			if s.MaxCrashes > 0 && len(crashes) >= s.MaxCrashes {
				s.Logf("supervisor: coordinator (pid %d) crashed: %v; %d crashes within %s: giving up", child.Pid(), err, len(crashes), s.CrashWindow)
				err = fmt.Errorf("%w: %d crashes within %s, the last: %w", ErrCrashLoop, len(crashes), s.CrashWindow, err)
				if s.GiveUp != nil {
					return s.GiveUp(err)
				}
				return err
			}
			s.Logf("supervisor: coordinator (pid %d) crashed: %v; restarting in %s", child.Pid(), err, RestartDelay)
		}
		if err := s.Clock.Sleep(ctx, RestartDelay); err != nil {
			s.Logf("supervisor: stopped")
			return nil
		}
	}
}

// Program starts one run of the coordinator as the program argv with env,
// its output on stdout and stderr (Supervisor.Start).
func Program(argv, env []string, stdout, stderr io.Writer) func() (Child, error) {
	return func() (Child, error) {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr, cmd.Env = stdout, stderr, env
		return StartCommand(cmd)
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
