package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/session"
)

func newCoordinatorCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "coordinator",
		Short: "Start, stop or inspect the review coordinator",
		Long: `The review coordinator moves work between the implementer (review.implementer)
and the reviewer (review.reviewer). It runs in a hidden window of the session
(party-coordinator) under a supervisor that restarts it 2 s after a crash.
Its state is in the session's state dir, under review/.`,
	}
	sub := func(use, short string, hidden bool, run func(ctx context.Context) error) *cobra.Command {
		return &cobra.Command{Use: use, Short: short, Hidden: hidden, Args: argsBetween(0, 0),
			RunE: func(c *cobra.Command, _ []string) error { return run(c.Context()) }}
	}
	cmd.AddCommand(
		sub("start", "Start the coordinator in a hidden window of the session", false, func(ctx context.Context) error {
			sc, err := f.env().OpenParty(ctx)
			if err != nil {
				return err
			}
			cfg, err := f.env().Config()
			if err != nil {
				return err
			}
			d, err := f.env().SessionDeps()
			if err != nil {
				return err
			}
			if err := session.StartCoordinator(ctx, d, sc.Session, sc.Info.StateDir, cfg.Review.MaxIterations); err != nil {
				return err
			}
			return printCoordinator(f, review.Dir(sc.Info.StateDir), "started")
		}),
		sub("stop", "Stop the coordinator (its state stays)", false, func(ctx context.Context) error {
			dir, err := reviewDir(ctx, f)
			if err != nil {
				return err
			}
			if err := review.Stop(ctx, f.Clock, dir); err != nil {
				return err
			}
			return printCoordinator(f, dir, "stopped")
		}),
		sub("status", "Say whether the coordinator runs, and its state", false, func(ctx context.Context) error {
			dir, err := reviewDir(ctx, f)
			if err != nil {
				return err
			}
			return printCoordinator(f, dir, "")
		}),
		sub("run", "Run the coordinator in the foreground", true, func(ctx context.Context) error { return coordinatorRun(ctx, f) }),
		sub("supervise", "Run the coordinator and restart it when it crashes", true, func(ctx context.Context) error { return superviseRun(ctx, f) }),
	)
	return cmd
}

func printCoordinator(f *Factory, dir, did string) error {
	p := review.Running(dir)
	s, err := review.Load(dir)
	if err != nil {
		return err
	}
	if did != "" {
		did += ": "
	}
	return f.show(map[string]any{"running": p.Running, "pid": p.PID, "supervisor_pid": p.Supervisor,
		"state": s.State, "phase": s.Phase, "dir": dir},
		"%scoordinator %s, state %s", did, p.Describe("not running"), review.Label(s.State, s.Phase))
}

// superviseRun runs "party coordinator run" until it exits cleanly (see
// review.Supervisor).
func superviseRun(ctx context.Context, f *Factory) error {
	dir, err := reviewDir(ctx, f)
	if err != nil {
		return err
	}
	exe, err := f.env().Executable()
	if err != nil {
		return err
	}
	argv := []string{exe, "coordinator", "run"}
	if f.Session != "" {
		argv = []string{exe, "--session", f.Session, "coordinator", "run"}
	}
	s := &review.Supervisor{Dir: dir, Clock: f.Clock, Logf: review.Logger(f.Clock, f.IO.ErrOut, dir),
		Start: review.Program(argv, f.Environ(), f.IO.Out, f.IO.ErrOut)}
	return s.Run(ctx)
}

// coordinatorRun is the coordinator process (session.CoordinatorProcess).
func coordinatorRun(ctx context.Context, f *Factory) error {
	cfg, err := f.env().Config()
	if err != nil {
		return err
	}
	tc := f.Tmux()
	sc, err := f.env().OpenParty(ctx)
	if err != nil {
		return err
	}
	root, err := f.env().StateRoot()
	if err != nil {
		return err
	}
	p := session.CoordinatorProcess{Clock: f.Clock, Getenv: f.Getenv, Session: sc.Session, StateDir: sc.Info.StateDir,
		Config: cfg.Review, Panes: tc, Log: f.IO.ErrOut,
		Deliver: func(ctx context.Context, role, line string) (string, deliver.Result, error) {
			t, err := f.env().Resolve(ctx, role)
			if err != nil {
				return "", deliver.Result{}, err
			}
			d := f.env().Deliverer(root, t.Info, map[string]string{t.Pane.ID: role})
			res, err := d.Send(ctx, deliver.Request{Pane: t.Pane.ID, Profile: cfg.Tune(role, t.Profile), Text: line})
			return t.Pane.ID, res, err
		}}
	return p.Serve(ctx)
}
