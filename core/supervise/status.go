package supervise

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/state"
)

// Status says whether the supervisor of a session runs, and why not when
// it failed: its process (daemon.Running) and its ProcFile read together.
type Status struct {
	daemon.Proc
	// State is running, starting (its keeper runs, it does not yet),
	// restarting (its keeper starts it again after a failure), failed
	// (its keeper gave up) or stopped.
	State  string `json:"state"`
	Dir    string `json:"dir"`
	Socket string `json:"socket"`
	// TCP is the loopback address it also serves, when started with
	// --listen (its bearer token is in Dir, api.token).
	TCP string `json:"tcp,omitempty"`
	// Error is why it is down (restarting, failed): its last failure.
	Error *Failure `json:"error,omitempty"`
	// Since is when it started serving or last failed.
	Since time.Time `json:"since,omitzero"`
}

// The states of Status.
const (
	StatusRunning    = "running"
	StatusStarting   = "starting"
	StatusRestarting = "restarting"
	StatusFailed     = "failed"
	StatusStopped    = "stopped"
)

// StatusOf is the Status of the supervisor of the session whose state
// dir is stateDir; getenv places its socket when it does not serve
// (APISocket).
func StatusOf(getenv func(string) string, stateDir string) Status {
	sock, _ := APISocket(getenv, stateDir)
	dir := Dir(stateDir)
	p := Status{Proc: daemon.Running(dir), Dir: dir, Socket: sock, State: StatusStopped}
	d, known := ReadProc(dir)
	switch {
	case p.Running:
		p.State = StatusRunning
		if known && d.State == ProcServing {
			p.Since = d.At
		}
	case known && d.State == ProcGaveUp:
		p.State, p.Error, p.Since = StatusFailed, d.Error, d.At
	case known && d.State == ProcFailed:
		p.State, p.Error, p.Since = StatusFailed, d.Error, d.At
		if p.Kept {
			p.State = StatusRestarting
		}
	case p.Kept:
		p.State = StatusStarting
	}
	if b, err := os.ReadFile(filepath.Join(dir, AddrFile)); err == nil && p.Running {
		p.TCP = string(b)
	}
	return p
}

// Describe says the supervisor's state in words, with its reason when it
// is down for one.
func (p Status) Describe() string {
	switch p.State {
	case StatusRunning:
		return p.Proc.Describe("")
	case StatusRestarting, StatusFailed:
		why := ""
		if p.Error != nil {
			why = ": " + p.Error.Code + ": " + p.Error.Message
		}
		if p.State == StatusFailed {
			return "failed (given up after a crash loop)" + why
		}
		return "restarting after a failure" + why
	case StatusStarting:
		return "starting"
	}
	return "not running"
}

// Down is why the supervisor is down after a failure (restarting or
// failed), as its error; nil when it runs or was stopped.
func (p Status) Down() error {
	if p.State != StatusRestarting && p.State != StatusFailed {
		return nil
	}
	d := ProcState{State: ProcFailed, Error: p.Error}
	if p.State == StatusFailed {
		d.State = ProcGaveUp
	}
	return d.Down(p.Dir)
}

// Start starts the supervisor of the session whose state dir is
// stateDir with launch (which runs its keeper in a hidden window), and
// waits until it serves (and, with listen, serves its TCP listener too)
// or fails: a supervisor that cannot start is its reason (*DownError),
// never a start that says it started. ErrRunning when it runs already.
func Start(ctx context.Context, clk clock.Clock, stateDir, listen string, launch func() error) error {
	dir := Dir(stateDir)
	if err := state.MkdirPrivate(dir); err != nil {
		return err
	}
	if daemon.Running(dir).Up() {
		return fmt.Errorf("the supervisor of this session: %w", ErrRunning)
	}
	if err := os.Remove(filepath.Join(dir, ProcFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	started := time.Now() // the AddrFile's time is the file system's
	if err := launch(); err != nil {
		return err
	}
	if err := AwaitServing(ctx, clk, dir); err != nil || listen == "" {
		return err
	}
	return AwaitListener(ctx, clk, dir, started)
}
