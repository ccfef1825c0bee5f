package party

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/state"
)

// How a supervisor's start ends, and how status says why it is down: the
// supervisor process (party supervise run) writes its daemon file when it
// serves its API, and when it fails, with the failure's code and message;
// its keeper (party supervise keep) writes it when it gives up after
// a crash loop. party supervise start (and party start --supervise) waits
// until the file says serving or gave up.

// daemonFile is the supervisor's last word on itself, in its directory.
const daemonFile = "daemon.json"

// The states of a supervisor as its daemon file and status say them.
const (
	// DaemonServing: it serves its API.
	DaemonServing = "serving"
	// DaemonFailed: a run failed (Error); its keeper starts it again.
	DaemonFailed = "failed"
	// DaemonGaveUp: its keeper gave up after a crash loop; Error is the
	// last run's failure.
	DaemonGaveUp = "gave_up"
)

// crashLimit runs that fail within crashWindow, none of them after it
// served, make the keeper give up.
const (
	crashLimit  = 3
	crashWindow = time.Minute
)

// startWait bounds how long a start waits for the supervisor to serve or
// fail: its runs fail within a second each, restartDelay apart.
const startWait = 30 * time.Second

// DaemonState is what the daemon file holds.
type DaemonState struct {
	State string     `json:"state"`
	PID   int        `json:"pid,omitempty"`
	At    time.Time  `json:"at"`
	Error *ErrorInfo `json:"error,omitempty"`
	// Socket is the API's socket a serving supervisor listens on: its
	// clients take it from here, whatever their own environment says
	// (XDG_RUNTIME_DIR may differ between a shell and the tmux server).
	Socket string `json:"socket,omitempty"`
}

// ErrSupervisorFailed is a supervisor that could not start or gave up;
// a *SupervisorFailedError carries its reason.
var ErrSupervisorFailed = errors.New("the supervisor failed")

// SupervisorFailedError is why a supervisor is down, as its process said
// it: its error's code and message. It is the error of that code (a
// corrupt store is STORE_CORRUPT), else ErrSupervisorFailed.
type SupervisorFailedError struct {
	Code    string
	Message string
	GaveUp  bool // its keeper gave up
	Log     string
}

func (e *SupervisorFailedError) Error() string {
	msg := "the supervisor failed: " + e.Message
	if e.GaveUp {
		msg = fmt.Sprintf("the supervisor failed %d times within %s and was given up: %s", crashLimit, crashWindow, e.Message)
	}
	if e.Log != "" {
		msg += " (its log: " + e.Log + ")"
	}
	return msg
}

// Is makes the error the one its code stands for in the error table.
func (e *SupervisorFailedError) Is(target error) bool {
	for _, c := range codes {
		if c.code == e.Code && c.err == target {
			return true
		}
	}
	return false
}

// Unwrap is ErrSupervisorFailed, for a code the table has no error for.
func (e *SupervisorFailedError) Unwrap() error { return ErrSupervisorFailed }

// JSONFields are the fields --json prints beside the code and message.
func (e *SupervisorFailedError) JSONFields() map[string]any {
	return map[string]any{"gave_up": e.GaveUp, "log": e.Log}
}

// readDaemon is the daemon file of dir; ok false when there is none (or
// it does not parse: a file half-written by nobody else).
func readDaemon(dir string) (DaemonState, bool) {
	b, err := os.ReadFile(filepath.Join(dir, daemonFile))
	if err != nil {
		return DaemonState{}, false
	}
	var d DaemonState
	if json.Unmarshal(b, &d) != nil {
		return DaemonState{}, false
	}
	return d, true
}

// writeDaemon replaces the daemon file of dir (atomically).
func writeDaemon(dir string, d DaemonState) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return state.WriteFile(filepath.Join(dir, daemonFile), b, 0o600)
}

// failure is d's error as a *SupervisorFailedError.
func (d DaemonState) failure(dir string) *SupervisorFailedError {
	e := &SupervisorFailedError{Code: "ERROR", Message: "no reason given", GaveUp: d.State == DaemonGaveUp,
		Log: filepath.Join(dir, daemon.LogFile)}
	if d.Error != nil {
		e.Code, e.Message = d.Error.Code, d.Error.Message
	}
	return e
}

// awaitServing waits until the supervisor of dir serves (nil) or its keeper gave up (*SupervisorFailedError), at most
// startWait. The start removed the file of an earlier run.
func awaitServing(ctx context.Context, clk clock.Clock, dir string) error {
	seen := false
	for deadline := clk.Now().Add(startWait); ; {
		if d, ok := readDaemon(dir); ok {
			// Serving says the run of that pid: a run the keeper
			// started anew holds the lock before it serves.
			switch p := daemon.Running(dir); {
			case d.State == DaemonServing && p.Running && p.PID == d.PID:
				return nil
			case d.State == DaemonGaveUp:
				return d.failure(dir)
			}
		}
		if daemon.Running(dir).Up() {
			seen = true
		} else if seen {
			// It ran and both it and its keeper are gone without a
			// word of giving up: killed, or its window closed.
			if d, ok := readDaemon(dir); ok && (d.State == DaemonFailed || d.State == DaemonGaveUp) {
				return d.failure(dir)
			}
			return fmt.Errorf("%w: it and its keeper exited (its log: %s)", ErrSupervisorFailed, filepath.Join(dir, daemon.LogFile))
		}
		if !clk.Now().Before(deadline) {
			return fmt.Errorf("the supervisor neither serves nor failed %s after the start (its log: %s): %w",
				startWait, filepath.Join(dir, daemon.LogFile), context.DeadlineExceeded)
		}
		if err := clk.Sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}
