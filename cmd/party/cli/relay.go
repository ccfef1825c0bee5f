package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/relay"
	"github.com/partyhq/party/core/wait"
)

// RelayOptions are the inputs of party relay.
type RelayOptions struct {
	Task        string
	Planner     string
	Executor    string
	Rounds      int
	PlanTimeout time.Duration
	ExecTimeout time.Duration
	Retry       string
}

func newRelayCmd(f *Factory, runF func(context.Context, *RelayOptions) error) *cobra.Command {
	opts := &RelayOptions{}
	var planT, execT string
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
			var err error
			if opts.PlanTimeout, err = config.ParseDuration(planT); err != nil {
				return fmt.Errorf("%w: --plan-timeout: %w", errUsage, err)
			}
			if opts.ExecTimeout, err = config.ParseDuration(execT); err != nil {
				return fmt.Errorf("%w: --exec-timeout: %w", errUsage, err)
			}
			for flag, d := range map[string]time.Duration{"--plan-timeout": opts.PlanTimeout, "--exec-timeout": opts.ExecTimeout} {
				if err := config.CheckFlag(flag, "defaults.timeout", d); err != nil {
					return fmt.Errorf("%w: %w", errUsage, err)
				}
			}
			if opts.Rounds < 1 {
				return fmt.Errorf("%w: --rounds must be at least 1", errUsage)
			}
			cfg, err := f.env().Config()
			if err != nil {
				return err
			}
			if !c.Flags().Changed("planner") {
				opts.Planner = cfg.Planner
			}
			if !c.Flags().Changed("executor") {
				opts.Executor = cfg.Executor
			}
			return run(c, f, opts, runF, relayRun)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Planner, "planner", "planner", "role of the planner pane (config relay.planner)")
	fl.StringVar(&opts.Executor, "executor", "executor", "role of the executor pane (config relay.executor)")
	fl.IntVar(&opts.Rounds, "rounds", 3, "plan/result rounds before giving up")
	fl.StringVar(&planT, "plan-timeout", "5m", "how long the planner may take per step")
	fl.StringVar(&execT, "exec-timeout", "15m", "how long the executor may take per step")
	fl.StringVar(&opts.Retry, "retry", "", "re-send the last step of the aborted task ID (last: the latest)")
	return cmd
}

func relayRun(ctx context.Context, f *Factory, opts *RelayOptions) error {
	tc := f.Tmux()
	sc, err := f.env().OpenParty(ctx)
	if err != nil {
		return err
	}
	root, err := f.env().StateRoot()
	if err != nil {
		return err
	}
	cfg, err := f.env().Config()
	if err != nil {
		return err
	}
	w, err := f.env().Watch(ctx, sc.Session, sc.Info.StateDir, true)
	if err != nil {
		return err
	}
	defer w.Close()
	job := relay.SessionJob(&relay.MuxPanes{Mux: tc, Clock: f.Clock, PrimeDir: filepath.Join(sc.Info.StateDir, "primed"),
		Resolve: func(ctx context.Context, role string) (relay.Target, error) {
			t, err := f.env().Resolve(ctx, role)
			return relay.Target{Pane: t.Pane.ID, Profile: cfg.Tune(role, t.Profile)}, err
		},
		Deliverer: func(roles map[string]string) *deliver.Deliverer { return f.env().Deliverer(root, sc.Info, roles) },
		Wake:      w.Wake,
	}, f.Clock, sc.Info.StateDir)
	var task relay.Task
	var report string
	if opts.Retry != "" {
		task, report, err = job.Retry(ctx, opts.Retry)
		if errors.Is(err, relay.ErrNoTask) {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
	} else {
		task = relay.Task{ID: "tk-" + wait.NewNonce()[:8], Text: opts.Task, Planner: opts.Planner, Executor: opts.Executor,
			Rounds: opts.Rounds, PlanWait: opts.PlanTimeout, ExecWait: opts.ExecTimeout}
		fmt.Fprintf(f.IO.ErrOut, "party: relay task %s: %s -> %s\n", task.ID, task.Planner, task.Executor)
		report, err = job.Run(ctx, task)
	}
	if err != nil {
		var stall *relay.StallError
		if _, lost := job.Steps.Load(task.ID); lost == nil && (errors.As(err, &stall) || errors.Is(err, context.Canceled)) {
			fmt.Fprintf(f.IO.ErrOut, "party: relay task %s stopped; 'party relay --retry %s' re-sends its last step\n", task.ID, task.ID)
		}
		return err
	}
	return f.show(map[string]string{"task": task.ID, "report": report}, "%s", report)
}
