package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/relay"
	"github.com/partyhq/party/core/state"
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
		Long: `Send TASK to the planner, forward its plan block to the executor, the
executor's result block back to the planner, and print the planner's final
report. Each role is primed once per pane with how to write blocks. Only
blocks with ids this task issued are routed. Near a timeout the stalled
role gets one nudge; a real timeout exits 4 naming it and showing its last
screen. Ctrl-C aborts; --retry ID re-sends the last step of an aborted task.
Every block and routing decision goes to the event log (party log).`,
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
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			if !c.Flags().Changed("planner") {
				opts.Planner = cfg.Planner
			}
			if !c.Flags().Changed("executor") {
				opts.Executor = cfg.Executor
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return relayRun(c.Context(), f, opts)
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
	sc, err := openPartyScope(ctx, f, tc)
	if err != nil {
		return err
	}
	session, info := sc.Session, sc.Info
	root, err := f.StateRoot()
	if err != nil {
		return err
	}
	w, err := newWatcher(ctx, f, tc, session, info.StateDir, true)
	if err != nil {
		return err
	}
	defer w.Close()
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	rp := &relay.MuxPanes{Mux: tc, Clock: f.Clock, PrimeDir: filepath.Join(info.StateDir, "primed"),
		Resolve: func(ctx context.Context, role string) (relay.Target, error) {
			t, err := resolveRole(ctx, f, tc, role)
			return relay.Target{Pane: t.Pane.ID, Profile: cfg.Tune(role, t.Profile)}, err
		},
		Deliverer: func(roles map[string]string) *deliver.Deliverer { return deliverer(f, tc, root, info, roles) },
		Wake:      w.Wake,
	}
	events := filepath.Join(info.StateDir, state.EventLog)
	stepDir := filepath.Join(info.StateDir, "relay")
	r := &relay.Relay{
		Panes: rp,
		Log: func(kind string, fields map[string]any) {
			fields["kind"], fields["time"] = "relay."+kind, f.Clock.Now().UTC()
			_ = state.AppendEvent(events, fields)
		},
		Save: func(s relay.Step) error {
			if err := state.MkdirPrivate(stepDir); err != nil {
				return err
			}
			return writeJSONFile(filepath.Join(stepDir, s.Task.ID+".json"), s)
		},
	}

	var report string
	var taskID string
	if opts.Retry != "" {
		id := opts.Retry
		if id == "last" {
			if id, err = lastStep(stepDir); err != nil {
				return err
			}
		}
		b, err := os.ReadFile(filepath.Join(stepDir, filepath.Base(id)+".json"))
		if err != nil {
			return fmt.Errorf("%w: no aborted task %q in %s", errUsage, id, stepDir)
		}
		var s relay.Step
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("task %s: %w", opts.Retry, err)
		}
		taskID = s.Task.ID
		if err := rp.Prime(ctx, s.Task); err != nil {
			return err
		}
		report, err = r.Resume(ctx, s)
		if err != nil {
			return relayFailed(f, taskID, err)
		}
	} else {
		t := relay.Task{ID: "tk-" + wait.NewNonce()[:8], Text: opts.Task, Planner: opts.Planner, Executor: opts.Executor,
			Rounds: opts.Rounds, PlanWait: opts.PlanTimeout, ExecWait: opts.ExecTimeout}
		taskID = t.ID
		fmt.Fprintf(f.IO.ErrOut, "party: relay task %s: %s -> %s\n", t.ID, t.Planner, t.Executor)
		if err := rp.Prime(ctx, t); err != nil {
			return err
		}
		report, err = r.Run(ctx, t)
		if err != nil {
			return relayFailed(f, taskID, err)
		}
	}
	_ = os.Remove(filepath.Join(stepDir, taskID+".json"))
	if f.JSON {
		writeJSON(f.IO.Out, map[string]string{"task": taskID, "report": report})
		return nil
	}
	fmt.Fprintln(f.IO.Out, report)
	return nil
}

// lastStep returns the id of the most recently saved aborted task.
func lastStep(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return "", err
	}
	var id string
	var newest time.Time
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || filepath.Ext(e.Name()) != ".json" {
			continue
		}
		if info.ModTime().After(newest) {
			id, newest = strings.TrimSuffix(e.Name(), ".json"), info.ModTime()
		}
	}
	if id == "" {
		return "", fmt.Errorf("%w: no aborted relay task to retry", errUsage)
	}
	return id, nil
}

// relayFailed reports a relay error, naming the task to retry.
func relayFailed(f *Factory, task string, err error) error {
	var stall *relay.StallError
	if errors.As(err, &stall) || errors.Is(err, context.Canceled) {
		fmt.Fprintf(f.IO.ErrOut, "party: relay task %s stopped; 'party relay --retry %s' re-sends its last step\n", task, task)
	}
	return err
}
