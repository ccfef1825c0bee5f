package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

func newRelayCmd(f *Factory, runF func(context.Context, *party.RelayOptions) error) *cobra.Command {
	opts := &party.RelayOptions{}
	cmd := &cobra.Command{
		Use:   "relay TASK | relay --retry ID",
		Short: "Relay a task between a planner and an executor through tagged blocks",
		Long: `Send TASK to the planner, its plan block to the executor, the result block
back to the planner, and print the planner's report. Only blocks with ids
of this task are routed. A stalled role is nudged once; a timeout exits 4
with its last screen. --retry ID re-sends the last step of an aborted task.
Every block and decision goes to the event log (party log).`,
		Args: func(c *cobra.Command, args []string) error {
			if opts.Retry != "" {
				return argsBetween(0, 0)(c, args)
			}
			return argsBetween(1, 1)(c, args)
		},
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Task = args[0]
			}
			if opts.Rounds < 1 {
				return fmt.Errorf("%w: --rounds must be at least 1", party.ErrUsage)
			}
			// Unset roles are "": Relay takes the configured ones (the defaults shown).
			if !c.Flags().Changed("planner") {
				opts.Planner = ""
			}
			if !c.Flags().Changed("executor") {
				opts.Executor = ""
			}
			return run(c, f, opts, runF, relayRun)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Planner, "planner", "planner", "role of the planner pane (config relay.planner)")
	fl.StringVar(&opts.Executor, "executor", "executor", "role of the executor pane (config relay.executor)")
	fl.IntVar(&opts.Rounds, "rounds", 3, "plan/result rounds before giving up")
	durationVar(fl, &opts.PlanTimeout, "plan-timeout", 5*time.Minute, "defaults.timeout", "how long the planner may take per step")
	durationVar(fl, &opts.ExecTimeout, "exec-timeout", 15*time.Minute, "defaults.timeout", "how long the executor may take per step")
	fl.StringVar(&opts.Retry, "retry", "", "re-send the last step of the aborted task ID (last: the latest)")
	return cmd
}

func relayRun(ctx context.Context, f *Factory, opts *party.RelayOptions) error {
	id, report, err := party.Relay(ctx, f.env(), *opts)
	return f.show(err, map[string]string{"task": id, "report": report}, "%s", report)
}
