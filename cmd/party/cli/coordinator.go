package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/launch"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/tmux"
)

// coordinatorWindow is the name of the hidden window the coordinator runs in.
const coordinatorWindow = "party-coordinator"

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
	p := review.Running(dir)
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
	err = review.Start(ctx, f.Clock, review.Dir(stateDir), cfg.Review.MaxIterations, func() error {
		exe, err := exeForPanes()
		if err != nil {
			return err
		}
		spawn, err := launchSpawn(stateDir, coordinatorWindow, launch.Spec{Env: append(paneEnv(f.Environ(), session), "PARTY_STATE_DIR="+stateDir),
			Argv: []string{exe, "--session", session, "coordinator", "supervise"}})
		if err != nil {
			return err
		}
		_, err = tc.NewWindow(ctx, session, coordinatorWindow, spawn)
		return err
	})
	return coordinatorErr(err)
}

// stopCoordinator stops the coordinator of dir and its supervisor.
func stopCoordinator(ctx context.Context, f *Factory, dir string) error {
	return coordinatorErr(review.Stop(ctx, f.Clock, dir))
}

// coordinatorErr makes the coordinator's conflicts (it runs already, it
// does not stop) conflicts of the CLI.
func coordinatorErr(err error) error {
	var timeout *review.StopTimeoutError
	if errors.Is(err, review.ErrRunning) || errors.As(err, &timeout) {
		return fmt.Errorf("%w: %w", err, errConflict)
	}
	return err
}

// superviseRun runs "party coordinator run" until it exits cleanly (see
// review.Supervisor).
func superviseRun(ctx context.Context, f *Factory) error {
	dir, err := reviewDir(ctx, f)
	if err != nil {
		return err
	}
	exe, err := exeForPanes()
	if err != nil {
		return err
	}
	args := []string{"coordinator", "run"}
	if f.Session != "" {
		args = append([]string{"--session", f.Session}, args...)
	}
	s := &review.Supervisor{Dir: dir, Clock: f.Clock, Logf: review.Logger(f.Clock, f.IO.ErrOut, dir),
		Start: func() (review.Child, error) {
			cmd := exec.Command(exe, args...)
			cmd.Stdout, cmd.Stderr = f.IO.Out, f.IO.ErrOut
			cmd.Env = f.Environ()
			return review.StartCommand(cmd)
		}}
	return coordinatorErr(s.Run(ctx))
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
	logf := review.Logger(f.Clock, f.IO.ErrOut, dir)
	c := &review.Coordinator{
		Dir:   dir,
		Clock: f.Clock,
		Config: review.Config{Implementer: cfg.Review.Implementer, Reviewer: cfg.Review.Reviewer, Base: cfg.Review.Base,
			FindingsTimeout: cfg.Review.FindingsTimeout, HealthInterval: cfg.Review.HealthInterval,
			Poll: 100 * time.Millisecond, MarkerDir: cfg.Review.MarkerDir, MaxIterations: cfg.Review.MaxIterations},
		Logf: logf,
	}
	return coordinatorErr(c.Serve(ctx, f.Getenv, func() (review.Effects, error) {
		rec, err := readSessionRecord(sc.Info.StateDir)
		if err != nil {
			return nil, err
		}
		launches := map[string]review.Launch{}
		for role, l := range rec.Launch {
			launches[role] = review.Launch(l)
		}
		return &review.PaneEffects{Session: sc.Session, Cwd: rec.Cwd, Launch: launches, Panes: tc, Logf: logf,
			Deliver: paneDeliver(f, tc)}, nil
	}))
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

// paneDeliver types a line into a role's pane of the session with the
// delivery protocol, for the coordinator.
func paneDeliver(f *Factory, tc *tmux.Client) review.DeliverFunc {
	return func(ctx context.Context, role, line string) (string, deliver.Result, error) {
		t, err := resolveRole(ctx, f, tc, role)
		if err != nil {
			return "", deliver.Result{}, err
		}
		root, err := f.StateRoot()
		if err != nil {
			return "", deliver.Result{}, err
		}
		cfg, err := f.Config()
		if err != nil {
			return "", deliver.Result{}, err
		}
		d := deliverer(f, tc, root, t.Info, map[string]string{t.Pane.ID: role})
		res, err := d.Send(ctx, deliver.Request{Pane: t.Pane.ID, Profile: cfg.Tune(role, t.Profile), Text: line})
		return t.Pane.ID, res, err
	}
}
