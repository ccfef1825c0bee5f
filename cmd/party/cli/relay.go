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

	"github.com/partyhq/party/core/blocks"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/relay"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
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
	defer w.close()
	rp := &relayPanes{f: f, tc: tc, info: info, root: root, watch: w, targets: map[string]target{}}
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
		if err := rp.prime(ctx, s.Task); err != nil {
			return err
		}
		report, err = r.Resume(ctx, s)
		if err != nil {
			return rp.failed(taskID, err)
		}
	} else {
		t := relay.Task{ID: "tk-" + wait.NewNonce()[:8], Text: opts.Task, Planner: opts.Planner, Executor: opts.Executor,
			Rounds: opts.Rounds, PlanWait: opts.PlanTimeout, ExecWait: opts.ExecTimeout}
		taskID = t.ID
		fmt.Fprintf(f.IO.ErrOut, "party: relay task %s: %s -> %s\n", t.ID, t.Planner, t.Executor)
		if err := rp.prime(ctx, t); err != nil {
			return err
		}
		report, err = r.Run(ctx, t)
		if err != nil {
			return rp.failed(taskID, err)
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

// relayPanes implements relay.Panes on tmux.
type relayPanes struct {
	f       *Factory
	tc      *tmux.Client
	info    tmux.SessionInfo
	root    string
	watch   *watcher
	targets map[string]target
}

// history is how much scrollback a block search reads.
const history = 3000

func (rp *relayPanes) target(ctx context.Context, role string) (target, error) {
	if t, ok := rp.targets[role]; ok {
		return t, nil
	}
	t, err := resolveRole(ctx, rp.f, rp.tc, role)
	if err != nil {
		return t, err
	}
	rp.targets[role] = t
	return t, nil
}

// prime tells each role, once per pane, how to write blocks.
func (rp *relayPanes) prime(ctx context.Context, t relay.Task) error {
	dir := filepath.Join(rp.info.StateDir, "primed")
	if err := state.MkdirPrivate(dir); err != nil {
		return err
	}
	for role, as := range map[string]string{t.Planner: relay.ToPlanner, t.Executor: relay.ToExecutor} {
		tg, err := rp.target(ctx, role)
		if err != nil {
			return err
		}
		mark := filepath.Join(dir, tg.Pane.ID[1:]+"-"+as)
		if _, err := os.Stat(mark); err == nil {
			continue
		}
		if err := rp.Send(ctx, role, relay.Primer(as)); err != nil {
			return err
		}
		if err := state.WriteFile(mark, []byte(rp.f.Clock.Now().UTC().Format(time.RFC3339)), 0o600); err != nil {
			return err
		}
	}
	return nil
}

func (rp *relayPanes) screen(ctx context.Context, role string) (string, error) {
	t, err := rp.target(ctx, role)
	if err != nil {
		return "", err
	}
	return rp.tc.Capture(ctx, t.Pane.ID, history)
}

// Mark implements relay.Panes.
func (rp *relayPanes) Mark(ctx context.Context, role string) (map[string]bool, error) {
	s, err := rp.screen(ctx, role)
	if err != nil {
		return nil, err
	}
	found, _ := blocks.Parse(s)
	seen := map[string]bool{}
	for _, b := range found {
		seen[b.ID] = true
	}
	return seen, nil
}

// Send implements relay.Panes.
func (rp *relayPanes) Send(ctx context.Context, role, text string) error {
	t, err := rp.target(ctx, role)
	if err != nil {
		return err
	}
	cfg, err := rp.f.Config()
	if err != nil {
		return err
	}
	d := deliverer(rp.f, rp.tc, rp.root, rp.info, map[string]string{t.Pane.ID: role})
	_, err = d.Send(ctx, deliver.Request{Pane: t.Pane.ID, Profile: tuned(cfg, role, t.Profile), Text: text})
	return err
}

// Await implements relay.Panes: it re-reads the screen when the pane
// prints, with a 1 s poll as a safety net.
func (rp *relayPanes) Await(ctx context.Context, role string, ids []string, seen map[string]bool, d time.Duration) (*blocks.Block, string, error) {
	t, err := rp.target(ctx, role)
	if err != nil {
		return nil, "", err
	}
	wake := rp.watch.wakeChan(t.Pane.ID)
	deadline := rp.f.Clock.Now().Add(d)
	for {
		p, err := rp.tc.Pane(ctx, t.Pane.ID)
		if err != nil {
			return nil, "", err
		}
		s, err := rp.tc.Capture(ctx, t.Pane.ID, history)
		if err != nil {
			return nil, "", err
		}
		if p.Dead {
			return nil, s, fmt.Errorf("%s (%s) exited while relaying: %w", role, t.Pane.ID, deliver.ErrPaneDead)
		}
		found, _ := blocks.Parse(s)
		for i := len(found) - 1; i >= 0; i-- {
			b := found[i]
			for _, id := range ids {
				if b.ID == id && !seen[id] {
					return &b, s, nil
				}
			}
		}
		left := deadline.Sub(rp.f.Clock.Now())
		if left <= 0 {
			return nil, s, nil
		}
		w := &wait.Waiter{Clock: rp.f.Clock, Wake: wake}
		if err := w.Sleep(ctx, min(left, time.Second)); err != nil {
			return nil, s, err
		}
	}
}

// failed reports a relay error, naming the task to retry.
func (rp *relayPanes) failed(task string, err error) error {
	var stall *relay.StallError
	if errors.As(err, &stall) || errors.Is(err, context.Canceled) {
		fmt.Fprintf(rp.f.IO.ErrOut, "party: relay task %s stopped; 'party relay --retry %s' re-sends its last step\n", task, task)
	}
	return err
}
