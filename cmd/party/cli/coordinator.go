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
(party-coordinator) under a supervisor that restarts it 2 s after a crash.
Its state is in the session's state dir, under review/.`,
	}
	sub := func(use, short string, hidden bool, run func(ctx context.Context) error) *cobra.Command {
		return &cobra.Command{Use: use, Short: short, Hidden: hidden, Args: argsBetween(0, 0),
			RunE: func(c *cobra.Command, _ []string) error { return run(c.Context()) }}
	}
	// show is a subcommand that prints the coordinator op leaves, saying
	// what it did.
	show := func(use, short, did string, op func(context.Context, *party.Env) (party.Coordinator, error)) *cobra.Command {
		return sub(use, short, false, func(ctx context.Context) error {
			c, err := op(ctx, f.env())
			if err != nil {
				return err
			}
			return printCoordinator(f, c, did)
		})
	}
	cmd.AddCommand(
		show("start", "Start the coordinator in a hidden window of the session", "started", party.StartCoordinator),
		show("stop", "Stop the coordinator (its state stays)", "stopped", party.StopCoordinator),
		show("status", "Say whether the coordinator runs, and its state", "", party.CoordinatorOf),
		sub("run", "Run the coordinator in the foreground", true, func(ctx context.Context) error { return party.RunCoordinator(ctx, f.env()) }),
		sub("supervise", "Run the coordinator and restart it when it crashes", true, func(ctx context.Context) error {
			return party.SuperviseCoordinator(ctx, f.env(), f.IO.Out)
		}),
	)
	return cmd
}

// printCoordinator prints c, after what the command did (did) if anything.
func printCoordinator(f *Factory, c party.Coordinator, did string) error {
	p, s := c.Proc, c.Status
	if did != "" {
		did += ": "
	}
	return f.show(nil, map[string]any{"running": p.Running, "pid": p.PID, "supervisor_pid": p.Supervisor,
		"state": s.State, "phase": s.Phase, "dir": c.Dir},
		"%scoordinator %s, state %s", did, p.Describe("not running"), party.ReviewLabel(s.State, s.Phase))
}
