package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

func newCoordinatorCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "coordinator",
		Short: "Start, stop or inspect the review coordinator",
		Long: `The review coordinator moves work between the implementer (review.implementer)
and the reviewer (review.reviewer). It runs in a hidden window of the session
(party-coordinator) under a keeper that restarts it 2 s after a crash.
Its state is in the session's state dir, under review/.`,
	}
	run, keep := newCoordinatorRunCmd(f, nil), newCoordinatorKeepCmd(f, nil)
	run.Hidden, keep.Hidden = true, true
	cmd.AddCommand(newCoordinatorStartCmd(f, nil), newCoordinatorStopCmd(f, nil), newCoordinatorStatusCmd(f, nil), run, keep)
	return cmd
}

// noArgsCmd is a command of use and short that takes no arguments and
// runs do (or runF) with opts.
func noArgsCmd[O any](f *Factory, use, short string, opts *O, runF func(context.Context, *O) error, do func(context.Context, *Factory, *O) error) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, do) }}
}

// CoordinatorStartOptions are the inputs of party coordinator start (none).
type CoordinatorStartOptions struct{}

func newCoordinatorStartCmd(f *Factory, runF func(context.Context, *CoordinatorStartOptions) error) *cobra.Command {
	return noArgsCmd(f, "start", "Start the coordinator in a hidden window of the session", &CoordinatorStartOptions{}, runF,
		func(ctx context.Context, f *Factory, _ *CoordinatorStartOptions) error {
			c, err := party.StartCoordinator(ctx, f.env())
			return printCoordinator(f, err, c, "started")
		})
}

// CoordinatorStopOptions are the inputs of party coordinator stop (none).
type CoordinatorStopOptions struct{}

func newCoordinatorStopCmd(f *Factory, runF func(context.Context, *CoordinatorStopOptions) error) *cobra.Command {
	return noArgsCmd(f, "stop", "Stop the coordinator (its state stays)", &CoordinatorStopOptions{}, runF,
		func(ctx context.Context, f *Factory, _ *CoordinatorStopOptions) error {
			c, err := party.StopCoordinator(ctx, f.env())
			return printCoordinator(f, err, c, "stopped")
		})
}

// CoordinatorStatusOptions are the inputs of party coordinator status (none).
type CoordinatorStatusOptions struct{}

func newCoordinatorStatusCmd(f *Factory, runF func(context.Context, *CoordinatorStatusOptions) error) *cobra.Command {
	return noArgsCmd(f, "status", "Say whether the coordinator runs, and its state", &CoordinatorStatusOptions{}, runF,
		func(ctx context.Context, f *Factory, _ *CoordinatorStatusOptions) error {
			c, err := party.CoordinatorOf(ctx, f.env())
			return printCoordinator(f, err, c, "")
		})
}

// CoordinatorRunOptions are the inputs of party coordinator run (none).
type CoordinatorRunOptions struct{}

func newCoordinatorRunCmd(f *Factory, runF func(context.Context, *CoordinatorRunOptions) error) *cobra.Command {
	return noArgsCmd(f, "run", "Run the coordinator in the foreground", &CoordinatorRunOptions{}, runF,
		func(ctx context.Context, f *Factory, _ *CoordinatorRunOptions) error {
			return party.RunCoordinator(ctx, f.env())
		})
}

// CoordinatorKeepOptions are the inputs of party coordinator keep (none).
type CoordinatorKeepOptions struct{}

// newCoordinatorKeepCmd is party coordinator keep; its old name,
// supervise, stays an alias for one release.
func newCoordinatorKeepCmd(f *Factory, runF func(context.Context, *CoordinatorKeepOptions) error) *cobra.Command {
	c := noArgsCmd(f, "keep", "Run the coordinator and restart it when it crashes", &CoordinatorKeepOptions{}, runF,
		func(ctx context.Context, f *Factory, _ *CoordinatorKeepOptions) error {
			return party.KeepCoordinator(ctx, f.env(), f.IO.Out)
		})
	c.Aliases = []string{"supervise"}
	return c
}

// printCoordinator returns err, else prints c after what the command did
// (did) if anything.
func printCoordinator(f *Factory, err error, c party.Coordinator, did string) error {
	if err != nil {
		return err
	}
	p, s := c.Proc, c.Status
	if did != "" {
		did += ": "
	}
	return f.show(nil, map[string]any{"running": p.Running, "pid": p.PID, "supervisor_pid": p.Keeper,
		"state": s.State, "phase": s.Phase, "dir": c.Dir},
		"%scoordinator %s, state %s", did, p.Describe("not running"), party.ReviewLabel(s.State, s.Phase))
}
