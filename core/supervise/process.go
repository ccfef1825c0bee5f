package supervise

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/state"
)

// The supervisor as a process of its own (party supervise run), a
// core/daemon: its directory holds a daemon's files (daemon.LockFile,
// daemon.KeeperLock, daemon.LogFile), its store (StoreFile) and these.
const (
	// ProcFile is the supervisor's last word on itself (ProcState): the
	// run writes it when it serves its API and when it fails, with the
	// failure's code and message; its keeper writes it when it gives up
	// after a crash loop. A start waits until it says serving or gave up.
	ProcFile = "daemon.json"
	// AddrFile holds the TCP address a running supervisor serves (with
	// Process.Listen).
	AddrFile = "api.addr"
	// TokenFile holds the bearer token of the TCP API (0600).
	TokenFile = "api.token"
)

// Dir is the supervisor's directory in a session's state dir.
func Dir(stateDir string) string { return filepath.Join(stateDir, "supervise") }

// SocketPath is the path of the supervisor's API socket for the session
// whose state dir is stateDir: in the runtime dir, short enough for a
// unix socket.
func SocketPath(getenv func(string) string, stateDir string) (string, error) {
	base, err := state.RuntimeDir(getenv)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(stateDir))
	return filepath.Join(base, "sv-"+hex.EncodeToString(h[:6])+".sock"), nil
}

// The states of a supervisor as its ProcFile says them.
const (
	// ProcServing: it serves its API.
	ProcServing = "serving"
	// ProcStopping: its run ends; it answers no new connection once it
	// said so (a caller waits for it to go, not to serve).
	ProcStopping = "stopping"
	// ProcFailed: a run failed (Error); its keeper starts it again.
	ProcFailed = "failed"
	// ProcGaveUp: its keeper gave up after a crash loop; Error is the
	// last run's failure.
	ProcGaveUp = "gave_up"
)

// startWait bounds how long a start waits for the supervisor to serve or
// fail: its runs fail within a second each, daemon.RestartDelay apart;
// listenWait how long it waits for its TCP listener after that.
const (
	startWait  = 30 * time.Second
	listenWait = 10 * time.Second
)

// Failure is an error as the ProcFile keeps it: its stable code and its
// message.
type Failure struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ProcState is what the ProcFile holds.
type ProcState struct {
	State string    `json:"state"`
	PID   int       `json:"pid,omitempty"`
	At    time.Time `json:"at"`
	Error *Failure  `json:"error,omitempty"`
	// Socket is the API's socket a serving supervisor listens on: its
	// clients take it from here, whatever their own environment says
	// (XDG_RUNTIME_DIR may differ between a shell and the tmux server).
	Socket string `json:"socket,omitempty"`
}

// ErrFailed is a supervisor that could not start or gave up; a
// *DownError carries its reason.
var ErrFailed = errors.New("the supervisor failed")

// DownError is why a supervisor is down, as its process said it: its
// error's code and message. It unwraps to ErrFailed; core/party's error
// table gives it the status of its Code.
type DownError struct {
	Code    string
	Message string
	GaveUp  bool // its keeper gave up
	Log     string
}

func (e *DownError) Error() string {
	msg := "the supervisor failed: " + e.Message
	if e.GaveUp {
		msg = fmt.Sprintf("the supervisor failed %d times within %s and was given up: %s", daemon.CrashLimit, daemon.CrashWindow, e.Message)
	}
	if e.Log != "" {
		msg += " (its log: " + e.Log + ")"
	}
	return msg
}

// Unwrap is ErrFailed.
func (e *DownError) Unwrap() error { return ErrFailed }

// JSONFields are the fields --json prints beside the code and message.
func (e *DownError) JSONFields() map[string]any {
	return map[string]any{"gave_up": e.GaveUp, "log": e.Log}
}

// ReadProc is the ProcFile of dir; ok false when there is none (or it
// does not parse: a file half-written by nobody else).
func ReadProc(dir string) (ProcState, bool) {
	b, err := os.ReadFile(filepath.Join(dir, ProcFile))
	if err != nil {
		return ProcState{}, false
	}
	var d ProcState
	if json.Unmarshal(b, &d) != nil {
		return ProcState{}, false
	}
	return d, true
}

// WriteProc replaces the ProcFile of dir (atomically).
func WriteProc(dir string, d ProcState) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return state.WriteFile(filepath.Join(dir, ProcFile), b, 0o600)
}

// Down is d's error as a *DownError, its log the one of dir.
func (d ProcState) Down(dir string) *DownError {
	e := &DownError{Code: "ERROR", Message: "no reason given", GaveUp: d.State == ProcGaveUp,
		Log: filepath.Join(dir, daemon.LogFile)}
	if d.Error != nil {
		e.Code, e.Message = d.Error.Code, d.Error.Message
	}
	return e
}

// AwaitServing waits until the supervisor of dir serves (nil) or its
// keeper gave up (*DownError), at most startWait. The start removed the
// ProcFile of an earlier run.
func AwaitServing(ctx context.Context, clk clock.Clock, dir string) error {
	seen := false
	for deadline := clk.Now().Add(startWait); ; {
		if d, ok := ReadProc(dir); ok {
			// Serving says the run of that pid: a run the keeper started
			// anew holds the lock before it serves.
			switch p := daemon.Running(dir); {
			case d.State == ProcServing && p.Running && p.PID == d.PID:
				return nil
			case d.State == ProcGaveUp:
				return d.Down(dir)
			}
		}
		if daemon.Running(dir).Up() {
			seen = true
		} else if seen {
			// It ran and both it and its keeper are gone without a word of
			// giving up: killed, or its window closed.
			if d, ok := ReadProc(dir); ok && (d.State == ProcFailed || d.State == ProcGaveUp) {
				return d.Down(dir)
			}
			return fmt.Errorf("%w: it and its keeper exited (its log: %s)", ErrFailed, filepath.Join(dir, daemon.LogFile))
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

// AwaitListener waits until the supervisor of dir started at started
// serves its TCP listener (it writes AddrFile once it does), so that the
// caller can use it at once.
func AwaitListener(ctx context.Context, clk clock.Clock, dir string, started time.Time) error {
	path := filepath.Join(dir, AddrFile)
	for deadline := clk.Now().Add(listenWait); ; {
		// A file from before the start is a killed supervisor's.
		if fi, err := os.Stat(path); err == nil && !fi.ModTime().Before(started.Truncate(time.Second)) {
			return nil
		}
		if !clk.Now().Before(deadline) {
			return fmt.Errorf("the supervisor started but serves no TCP listener after %s (its log: %s)", listenWait, filepath.Join(dir, daemon.LogFile))
		}
		if err := clk.Sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

// Process is the supervisor of one session as a process of its own.
type Process struct {
	Dir   string // Dir of the session's state dir
	Clock clock.Clock
	// Stderr is the hidden window's; the log lines go there and to the
	// daemon's log file.
	Stderr io.Writer
	// Listen adds a loopback TCP listener (HOST:PORT) whose callers need
	// the bearer token in TokenFile.
	Listen string
	// Classify is an error's stable code, for the ProcFile.
	Classify func(error) string
}

// Parts are what a supervisor process runs, built once it holds its lock
// (Process.Run): its operations and store, its effect loop (Metrics is
// Run's to set), its API's socket, and Close, which gives back what
// building took.
type Parts struct {
	Ops    *Ops
	Loop   *Loop
	Socket string
	Close  func()
	// Usage, when set, is what the team's agents spent, for /metrics.
	Usage func() []UsageSample
}

// Run is the supervisor process: it holds the daemon's lock of Dir
// (ErrRunning when another process holds it), builds its parts with build
// (given its log), serves the API on the parts' socket (and Listen), and
// runs the loop until ctx ends. Its ProcFile says when it serves, and why
// it failed (not when another supervisor runs: that one's stays). The
// API's goroutines end before Run returns.
func (p *Process) Run(ctx context.Context, build func(ctx context.Context, logf func(string, ...any)) (Parts, error)) error {
	logf := daemon.Logger(p.Clock, p.Stderr, p.Dir)
	err := p.run(ctx, logf, build)
	if err != nil && ctx.Err() == nil && !errors.Is(err, ErrRunning) {
		d := ProcState{State: ProcFailed, PID: os.Getpid(), At: p.Clock.Now().UTC(), Error: &Failure{Code: p.Classify(err), Message: err.Error()}}
		if werr := WriteProc(p.Dir, d); werr != nil {
			return fmt.Errorf("%w (and its state: %w)", err, werr)
		}
		logf("supervisor failed: %v", err)
	}
	return err
}

func (p *Process) run(ctx context.Context, logf func(string, ...any), build func(context.Context, func(string, ...any)) (Parts, error)) error {
	if err := state.MkdirPrivate(p.Dir); err != nil {
		return err
	}
	release, err := daemon.Hold(ctx, p.Clock, p.Dir)
	if errors.Is(err, daemon.ErrRunning) {
		return fmt.Errorf("the supervisor of this session: %w", ErrRunning)
	}
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := context.WithCancel(ctx) // ends what build started with the run
	defer cancel()
	parts, err := build(ctx, logf)
	if err != nil {
		return err
	}
	defer parts.Close()
	metrics := NewMetrics()
	if parts.Usage != nil {
		metrics.CountUsage(parts.Usage)
	}
	parts.Loop.Metrics = metrics
	srv := &Server{Service: parts.Ops, Metrics: metrics, Logf: logf, Clock: p.Clock}
	ln, err := ListenUnix(parts.Socket)
	if err != nil {
		return err
	}
	served := make(chan error, 2)
	// The API serves until stop, not until ctx ends: the ProcFile says
	// the run ends before the socket goes, so a caller that finds it gone
	// never reads a serving supervisor there.
	apiCtx, stopAPI := context.WithCancel(context.WithoutCancel(ctx))
	defer stopAPI()
	go func() { served <- srv.Serve(apiCtx, ln, false) }()
	servers := 1
	stop := func() { // the API's goroutines end with it
		if servers > 0 {
			if werr := WriteProc(p.Dir, ProcState{State: ProcStopping, PID: os.Getpid(), At: p.Clock.Now().UTC(), Socket: parts.Socket}); werr != nil {
				logf("daemon file: %v", werr)
			}
		}
		stopAPI()
		cancel()
		for ; servers > 0; servers-- {
			if err := <-served; err != nil {
				logf("api: %v", err)
			}
		}
	}
	defer stop()
	if p.Listen != "" {
		if srv.Token, err = apiToken(p.Dir); err != nil {
			return err
		}
		tl, err := ListenTCP(p.Listen)
		if err != nil {
			return err
		}
		servers++
		go func() { served <- srv.Serve(apiCtx, tl, true) }()
		addrFile := filepath.Join(p.Dir, AddrFile)
		if err := state.WriteFile(addrFile, []byte(tl.Addr().String()), 0o600); err != nil {
			return err
		}
		defer os.Remove(addrFile)
		logf("supervisor API on %s (bearer token in %s)", tl.Addr(), filepath.Join(p.Dir, TokenFile))
	}
	logf("supervisor started (pid %d), store %s, API %s", os.Getpid(), parts.Ops.Store.Path(), parts.Socket)
	if werr := WriteProc(p.Dir, ProcState{State: ProcServing, PID: os.Getpid(), At: p.Clock.Now().UTC(), Socket: parts.Socket}); werr != nil {
		logf("daemon file: %v", werr)
	}
	err = parts.Loop.Run(ctx)
	stop()
	logf("supervisor stopped")
	return err
}

// Keep runs the supervisor with start until it exits cleanly, restarting
// it when it crashes (daemon.Keeper), and gives up after
// daemon.CrashLimit runs that fail within daemon.CrashWindow before they
// served: then it records that
// in the ProcFile, with the last run's reason, and returns that reason.
func (p *Process) Keep(ctx context.Context, start func() (daemon.Child, error)) error {
	if err := state.MkdirPrivate(p.Dir); err != nil {
		return err
	}
	k := &daemon.Keeper{Dir: p.Dir, Name: "supervisor", Clock: p.Clock, Logf: daemon.Logger(p.Clock, p.Stderr, p.Dir),
		Start: start, MaxCrashes: daemon.CrashLimit, CrashWindow: daemon.CrashWindow, GiveUp: p.gaveUp,
		Served: func(pid int) bool {
			d, ok := ReadProc(p.Dir)
			return ok && d.State == ProcServing && d.PID == pid
		}}
	err := k.Run(ctx)
	if errors.Is(err, daemon.ErrRunning) {
		return fmt.Errorf("the supervisor of this session: %w", ErrRunning)
	}
	return err
}

// gaveUp records that the keeper gave up after a crash loop (err), with
// the last run's reason, and returns that reason.
func (p *Process) gaveUp(err error) error {
	d, ok := ReadProc(p.Dir)
	if !ok || d.State != ProcFailed || d.Error == nil {
		d = ProcState{Error: &Failure{Code: "ERROR", Message: err.Error()}}
	}
	d.State, d.PID, d.At = ProcGaveUp, os.Getpid(), p.Clock.Now().UTC()
	if werr := WriteProc(p.Dir, d); werr != nil {
		return fmt.Errorf("%w (and its state: %w)", err, werr)
	}
	return d.Down(p.Dir)
}

// apiToken is the bearer token of the TCP API, made on first use (0600).
func apiToken(dir string) (string, error) {
	path := filepath.Join(dir, TokenFile)
	if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
		return string(b), nil
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(b)
	return tok, state.WriteFile(path, []byte(tok), 0o600)
}

// CheckWorkspace refuses a session directory cwd outside the allowed
// workspaces (none: every one is allowed); the error wraps usage.
func CheckWorkspace(allowed []string, cwd string, usage error) error {
	if len(allowed) == 0 {
		return nil
	}
	for _, d := range allowed {
		if rel, err := filepath.Rel(d, cwd); err == nil && rel != ".." && !filepath.IsAbs(rel) && (rel == "." || !startsDotDot(rel)) {
			return nil
		}
	}
	return fmt.Errorf("%w: the session's directory %s is not under supervise.workspaces", usage, cwd)
}

func startsDotDot(rel string) bool {
	return len(rel) >= 3 && rel[:3] == ".."+string(filepath.Separator)
}
