package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/launch"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
)

// coordinatorWindow is the name of the hidden window the coordinator runs in.
const coordinatorWindow = "party-coordinator"

// restartDelay is how long the supervisor waits before restarting a
// coordinator that crashed.
const restartDelay = 2 * time.Second

var errCoordinatorRunning = fmt.Errorf("coordinator already running: %w", errConflict)

func newCoordinatorCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "coordinator",
		Short: "Start, stop or inspect the review coordinator",
		Long: `The review coordinator moves work between the implementer (review.implementer,
default claude) and the reviewer (review.reviewer, default codex). It runs in
a hidden window of the session (party-coordinator), so it lives and dies with
the session, under a supervisor that restarts it 2 s after a crash. Its state
is in the session's state dir, under review/.`,
	}
	start := &cobra.Command{
		Use: "start", Short: "Start the coordinator in a hidden window of the session", Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			sc, err := openPartyScope(c.Context(), f, f.Tmux())
			if err != nil {
				return err
			}
			if err := startCoordinator(c.Context(), f, f.Tmux(), sc.Session, sc.Info.StateDir); err != nil {
				return err
			}
			return printCoordinator(f, review.Dir(sc.Info.StateDir), "started")
		},
	}
	stop := &cobra.Command{
		Use: "stop", Short: "Stop the coordinator (its state stays)", Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			dir, err := reviewDir(c.Context(), f)
			if err != nil {
				return err
			}
			if err := stopCoordinator(c.Context(), f, dir); err != nil {
				return err
			}
			return printCoordinator(f, dir, "stopped")
		},
	}
	status := &cobra.Command{
		Use: "status", Short: "Say whether the coordinator runs, and its state", Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			dir, err := reviewDir(c.Context(), f)
			if err != nil {
				return err
			}
			return printCoordinator(f, dir, "")
		},
	}
	run := &cobra.Command{
		Use: "run", Short: "Run the coordinator in the foreground", Hidden: true, Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return coordinatorRun(c.Context(), f) },
	}
	supervise := &cobra.Command{
		Use: "supervise", Short: "Run the coordinator and restart it when it crashes", Hidden: true, Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return superviseRun(c.Context(), f) },
	}
	cmd.AddCommand(start, stop, status, run, supervise)
	return cmd
}

func printCoordinator(f *Factory, dir, did string) error {
	p := coordinatorProc(dir)
	s, err := review.Load(dir)
	if err != nil {
		return err
	}
	if f.JSON {
		writeJSON(f.IO.Out, map[string]any{"running": p.Running, "pid": p.PID, "supervisor_pid": p.Supervisor,
			"state": s.State, "phase": s.Phase, "dir": dir})
		return nil
	}
	run := "not running"
	if p.Running {
		run = "running (pid " + strconv.Itoa(p.PID) + ")"
	}
	if did != "" {
		did += ": "
	}
	st := s.State.String()
	if s.Phase != "" {
		st += " (" + string(s.Phase) + ")"
	}
	fmt.Fprintf(f.IO.Out, "%scoordinator %s, state %s\n", did, run, st)
	return nil
}

// startCoordinator initializes the review state of the session (if new)
// and runs the supervisor in a hidden window.
func startCoordinator(ctx context.Context, f *Factory, tc *tmux.Client, session, stateDir string) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	dir := review.Dir(stateDir)
	if p := coordinatorProc(dir); p.Running || p.supervised {
		return errCoordinatorRunning
	}
	if err := review.Init(dir, f.Clock.Now().UTC(), cfg.Review.MaxIterations); err != nil {
		return err
	}
	exe, err := exeForPanes()
	if err != nil {
		return err
	}
	spawn, err := launchSpawn(stateDir, coordinatorWindow, launch.Spec{Env: append(paneEnv(f.Environ(), session), "PARTY_STATE_DIR="+stateDir),
		Argv: []string{exe, "--session", session, "coordinator", "supervise"}})
	if err != nil {
		return err
	}
	if _, err := tc.NewWindow(ctx, session, coordinatorWindow, spawn); err != nil {
		return err
	}
	// Wait until the coordinator runs, so that a signal sent right after
	// start is taken at once.
	for i := 0; i < 250 && !coordinatorProc(dir).Running; i++ {
		if err := f.Clock.Sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

// stopCoordinator sends SIGTERM to the supervisor (else the coordinator)
// and waits for their locks to go. It signals only a pid that Holder gave:
// a process that holds the lock, never one a stale file names.
func stopCoordinator(ctx context.Context, f *Factory, dir string) error {
	signalled := map[int]bool{}
	for i := 0; ; i++ {
		p := coordinatorProc(dir)
		if !p.Running && !p.supervised {
			return nil
		}
		pid := p.PID
		if p.supervised {
			pid = p.Supervisor // it stops the coordinator, and does not restart it
		}
		if pid != 0 && !signalled[pid] {
			signalled[pid] = true
			if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("stop coordinator (pid %d): %w", pid, err)
			}
		}
		if i == 250 {
			return fmt.Errorf("coordinator (pid %d) did not stop within 5s: %w", pid, errConflict)
		}
		if err := f.Clock.Sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

// superviseRun runs "party coordinator run" until it exits cleanly: a
// crash is logged and the coordinator restarted after restartDelay. On
// SIGTERM/SIGINT it stops the coordinator and exits.
func superviseRun(ctx context.Context, f *Factory) error {
	dir, err := reviewDir(ctx, f)
	if err != nil {
		return err
	}
	release, err := state.Hold(ctx, f.Clock, filepath.Join(dir, review.SupervisorLock))
	if errors.Is(err, state.ErrHeld) {
		return errCoordinatorRunning
	}
	if err != nil {
		return err
	}
	defer release()
	logf := coordinatorLog(f, dir)
	exe, err := exeForPanes()
	if err != nil {
		return err
	}
	args := []string{"coordinator", "run"}
	if f.Session != "" {
		args = append([]string{"--session", f.Session}, args...)
	}
	for {
		cmd := exec.Command(exe, args...)
		cmd.Stdout, cmd.Stderr = f.IO.Out, f.IO.ErrOut
		cmd.Env = f.Environ()
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start coordinator: %w", err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
			logf("supervisor: stopped (coordinator: %v)", <-done) // its exit on our SIGTERM, for the log
			return nil
		case err := <-done:
			if err == nil {
				logf("supervisor: coordinator exited cleanly")
				return nil
			}
			logf("supervisor: coordinator (pid %d) crashed: %v; restarting in %s", cmd.Process.Pid, err, restartDelay)
		}
		if err := f.Clock.Sleep(ctx, restartDelay); err != nil {
			logf("supervisor: stopped")
			return nil
		}
	}
}

// coordinatorLog returns a logger that writes timestamped lines to the
// coordinator's log file and to stderr (the hidden window).
func coordinatorLog(f *Factory, dir string) func(string, ...any) {
	return func(format string, args ...any) {
		line := f.Clock.Now().UTC().Format(time.RFC3339Nano) + " " + fmt.Sprintf(format, args...) + "\n"
		fmt.Fprint(f.IO.ErrOut, line)
		if fh, err := os.OpenFile(filepath.Join(dir, review.LogFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			_, _ = io.WriteString(fh, line)
			fh.Close()
		}
	}
}

// coordinatorRun is the coordinator process.
func coordinatorRun(ctx context.Context, f *Factory) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	tc := f.Tmux()
	sc, err := openPartyScope(ctx, f, tc)
	if err != nil {
		return err
	}
	dir := review.Dir(sc.Info.StateDir)
	if err := review.Init(dir, f.Clock.Now().UTC(), cfg.Review.MaxIterations); err != nil {
		return err
	}
	release, err := state.Hold(ctx, f.Clock, filepath.Join(dir, review.CoordinatorLock))
	if errors.Is(err, state.ErrHeld) {
		return errCoordinatorRunning
	}
	if err != nil {
		return err
	}
	defer release()
	sess, err := readSessionRecord(sc.Info.StateDir)
	if err != nil {
		return err
	}
	w, err := state.ListenSession(f.Getenv, sc.Info.StateDir)
	if err != nil {
		return err
	}
	defer w.Close()
	logf := coordinatorLog(f, dir)
	logf("coordinator started (pid %d), state dir %s", os.Getpid(), dir)
	c := &review.Coordinator{
		Dir:     dir,
		Clock:   f.Clock,
		Effects: &paneEffects{f: f, tc: tc, session: sc.Session, rec: sess, logf: logf},
		Config: review.Config{Implementer: cfg.Review.Implementer, Reviewer: cfg.Review.Reviewer, Base: cfg.Review.Base,
			FindingsTimeout: cfg.Review.FindingsTimeout, HealthInterval: cfg.Review.HealthInterval,
			Poll: 100 * time.Millisecond, MarkerDir: cfg.Review.MarkerDir, MaxIterations: cfg.Review.MaxIterations},
		Wake: w.C,
		Logf: logf,
	}
	err = c.Run(ctx)
	logf("coordinator stopped")
	return err
}

// sessionRecord is what party start wrote to session.json.
type sessionRecord struct {
	Session string                `json:"session"`
	Cwd     string                `json:"cwd"`
	Env     []string              `json:"env"`
	Launch  map[string]paneLaunch `json:"launch"` // by role
}

// paneLaunch is how a pane was started, to respawn it the same way.
type paneLaunch struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
}

func readSessionRecord(stateDir string) (sessionRecord, error) {
	var r sessionRecord
	b, err := os.ReadFile(filepath.Join(stateDir, "session.json"))
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", filepath.Join(stateDir, "session.json"), err)
	}
	return r, nil
}

// paneEffects are the coordinator's effects on a real session: git in the
// session's directory, delivery into panes, respawn of dead agents.
type paneEffects struct {
	f       *Factory
	tc      *tmux.Client
	session string
	rec     sessionRecord
	logf    func(string, ...any)
}

func (e *paneEffects) git(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", e.rec.Cwd}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// Diff is the work against merge-base HEAD base: committed and uncommitted
// changes of tracked files, and new untracked files as additions.
func (e *paneEffects) Diff(ctx context.Context, base string) (review.Diff, error) {
	d := review.Diff{Base: base}
	if strings.HasPrefix(base, "-") {
		return d, fmt.Errorf("base %q is not a branch", base)
	}
	mb, err := e.git(ctx, "merge-base", "HEAD", base)
	if err != nil {
		return d, err
	}
	d.MergeBase = strings.TrimSpace(mb)
	patch, err := e.git(ctx, "diff", "--no-color", "--no-ext-diff", d.MergeBase, "--")
	if err != nil {
		return d, err
	}
	st, err := e.git(ctx, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return d, err
	}
	d.Uncommitted = strings.TrimSpace(st) != ""
	untracked, err := e.git(ctx, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return d, err
	}
	var b strings.Builder
	b.WriteString(patch)
	for _, name := range strings.Split(strings.TrimRight(untracked, "\x00"), "\x00") {
		if name == "" {
			continue
		}
		d.Untracked = append(d.Untracked, name)
		// git diff --no-index exits 1 when the files differ.
		cmd := exec.CommandContext(ctx, "git", "-C", e.rec.Cwd, "diff", "--no-color", "--no-index", "--", "/dev/null", name)
		out, _ := cmd.Output()
		b.Write(out)
	}
	d.Patch = []byte(b.String())
	return d, nil
}

// Send delivers line to role's pane with the delivery protocol.
func (e *paneEffects) Send(ctx context.Context, role, line string) error {
	t, err := resolveRole(ctx, e.f, e.tc, role)
	if err != nil {
		return err
	}
	root, err := e.f.StateRoot()
	if err != nil {
		return err
	}
	cfg, err := e.f.Config()
	if err != nil {
		return err
	}
	d := deliverer(e.f, e.tc, root, t.Info, map[string]string{t.Pane.ID: role})
	res, err := d.Send(ctx, deliver.Request{Pane: t.Pane.ID, Profile: tuned(cfg, role, t.Profile), Text: line})
	if errors.Is(err, deliver.ErrUnconfirmed) {
		// The line is in the pane: sending it again would paste it twice.
		e.logf("sent to %s (%s): %s [unconfirmed: not sent again]", role, t.Pane.ID, line)
		return nil
	}
	if err != nil {
		return err
	}
	e.logf("sent to %s (%s): %s [%s]", role, t.Pane.ID, line, res.Outcome)
	return nil
}

// Health respawns every dead agent pane of the session with the command
// and environment party start gave it, and returns their roles.
func (e *paneEffects) Health(ctx context.Context) ([]string, error) {
	panes, err := e.tc.ListPanes(ctx, e.session)
	if err != nil {
		return nil, err
	}
	var roles []string
	for _, p := range panes {
		if !p.Dead || p.Role == "" {
			continue
		}
		l, ok := e.rec.Launch[p.Role]
		if !ok {
			continue
		}
		if err := e.tc.RespawnPane(ctx, p.ID, tmux.Spawn{Cwd: e.rec.Cwd, Env: l.Env, Argv: l.Argv}); err != nil {
			e.logf("health: respawn %s (%s): %v", p.Role, p.ID, err)
			continue
		}
		e.logf("health: %s (%s) was dead (status %s); respawned", p.Role, p.ID, orDefault(p.DeadStatus, "unknown"))
		roles = append(roles, p.Role)
	}
	return roles, nil
}
