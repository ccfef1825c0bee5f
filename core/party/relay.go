package party

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/relay"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/wait"
)

// RelayOptions are the inputs of Relay.
type RelayOptions struct {
	Task string
	// Planner and Executor are the roles of the two panes; "" is the
	// configured one (relay.planner, relay.executor).
	Planner, Executor        string
	Rounds                   int
	PlanTimeout, ExecTimeout time.Duration
	// Retry, when set, re-sends the last step of this aborted task
	// (relay.Latest: the one aborted last) instead of starting Task.
	Retry string
}

// Relay relays a task between the planner and the executor of the session
// (relay.Job) and returns the task's id and the planner's report. Both
// roles must run claude, codex or gemini, or be opted in by
// route.allowRoles: the relay types what one agent wrote into the other. Retrying
// a task that was not aborted is a usage error. When a stall or Ctrl-C
// stops a task, a line on stderr says how to retry it.
func Relay(ctx context.Context, env *Env, opts RelayOptions) (id, report string, err error) {
	cfg, err := env.Config()
	if err != nil {
		return "", "", err
	}
	sc, err := env.OpenParty(ctx)
	if err != nil {
		return "", "", err
	}
	root, err := env.StateRoot()
	if err != nil {
		return "", "", err
	}
	w, err := env.Watch(ctx, sc.Session, sc.Info.StateDir, true, false)
	if err != nil {
		return "", "", err
	}
	defer w.Close()
	panes := &relay.MuxPanes{Mux: env.Tmux, Clock: env.Clock, PrimeDir: filepath.Join(sc.Info.StateDir, "primed"),
		Events: filepath.Join(sc.Info.StateDir, state.EventLog),
		Warn:   func(msg string) { env.Warnf("%s", msg) },
		Resolve: func(ctx context.Context, role string) (relay.Target, error) {
			t, err := env.Resolve(ctx, role)
			return relay.Target{Pane: t.Pane.ID, Profile: cfg.Tune(role, t.Profile), Allowed: cfg.AllowsRole(role),
				Hooks: t.Pane.Hooks != ""}, err
		},
		Deliverer: func(roles map[string]string) *deliver.Deliverer { return env.Deliverer(root, sc.Info, roles) },
		Wake:      w.Wake,
	}
	job := relay.SessionJob(panes, env.Clock, sc.Info.StateDir)
	panes.Note = job.Log
	var task relay.Task
	if opts.Retry != "" {
		task, report, err = job.Retry(ctx, opts.Retry)
		if errors.Is(err, relay.ErrNoTask) {
			return "", "", fmt.Errorf("%w: %w", ErrUsage, err)
		}
	} else {
		task = relayTask(opts, cfg, wait.NewNonce())
		env.Warnf("relay task %s: %s -> %s", task.ID, task.Planner, task.Executor)
		report, err = job.Run(ctx, task)
	}
	if err != nil {
		if job.Steps.Retriable(task.ID, err) {
			env.Warnf("relay task %s stopped; 'party relay --retry %s' re-sends its last step", task.ID, task.ID)
		}
		return task.ID, "", err
	}
	return task.ID, report, nil
}

// relayTask is the task that opts start, with the id nonce gives it and
// the roles of cfg where opts names none.
func relayTask(opts RelayOptions, cfg config.Config, nonce string) relay.Task {
	t := relay.Task{ID: "tk-" + nonce[:8], Text: opts.Task, Planner: opts.Planner, Executor: opts.Executor,
		Rounds: opts.Rounds, PlanWait: opts.PlanTimeout, ExecWait: opts.ExecTimeout}
	if t.Planner == "" {
		t.Planner = cfg.Planner
	}
	if t.Executor == "" {
		t.Executor = cfg.Executor
	}
	return t
}
