package party

import (
	"context"
	"io"
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/task"
)

// coordinatorPoll is how often the coordinator looks for findings and
// answers (signals wake it at once).
const coordinatorPoll = 100 * time.Millisecond

// ReviewDir is the review directory of the session: inside an agent's
// pane $PARTY_STATE_DIR's, unless Session names another; else that of the
// session the operation acts on.
func ReviewDir(ctx context.Context, env *Env) (string, error) {
	if d := env.Getenv("PARTY_STATE_DIR"); d != "" && env.Session == "" {
		return review.Dir(d), nil
	}
	sc, err := env.OpenParty(ctx)
	if err != nil {
		return "", err
	}
	return review.Dir(sc.Info.StateDir), nil
}

// ReviewStatus is the review coordinator's state, as it last saved it.
func ReviewStatus(ctx context.Context, env *Env) (review.Status, error) {
	dir, err := ReviewDir(ctx, env)
	if err != nil {
		return review.Status{}, err
	}
	return review.Load(dir)
}

// SignalOptions are the inputs of Signal.
type SignalOptions struct {
	Event review.Event
	// Wait is how long to wait for the coordinator to apply the signal.
	Wait time.Duration
}

// Signal sends the review coordinator a signal (review.Submit) and wakes
// it; the result says the state that followed, or that the signal is
// queued because the coordinator did not apply it within Wait.
func Signal(ctx context.Context, env *Env, opts SignalOptions) (review.Submitted, error) {
	dir, err := ReviewDir(ctx, env)
	if err != nil {
		return review.Submitted{}, err
	}
	return review.Submit(ctx, env.Clock, dir, opts.Event, opts.Wait, func() { state.WakeSession(env.Getenv, filepath.Dir(dir)) })
}

// WriteFindings writes b as the findings of the review the coordinator
// dispatched last (review.WriteFindings) and wakes the coordinator.
func WriteFindings(ctx context.Context, env *Env, b []byte) (string, error) {
	dir, err := ReviewDir(ctx, env)
	if err != nil {
		return "", err
	}
	path, err := review.WriteFindings(dir, b)
	if err == nil {
		state.WakeSession(env.Getenv, filepath.Dir(dir))
	}
	return path, err
}

// WriteAnswer writes text as the answer to question n
// (review.WriteAnswer) and wakes the coordinator.
func WriteAnswer(ctx context.Context, env *Env, n int, text string) (string, error) {
	dir, err := ReviewDir(ctx, env)
	if err != nil {
		return "", err
	}
	path, err := review.WriteAnswer(dir, n, text)
	if err == nil {
		state.WakeSession(env.Getenv, filepath.Dir(dir))
	}
	return path, err
}

// StatusOptions are the inputs of Status.
type StatusOptions struct {
	// Watch shows the status again every second until ctx ends.
	Watch bool
}

// Status shows the review coordinator's status, its process and the time
// with show: once, or with Watch every second (review.Watch).
func Status(ctx context.Context, env *Env, opts StatusOptions, show func(review.Status, daemon.Proc, time.Time)) error {
	dir, err := ReviewDir(ctx, env)
	if err != nil {
		return err
	}
	every := time.Duration(0)
	if opts.Watch {
		every = time.Second
	}
	return review.Watch(ctx, env.Clock, dir, every, show)
}

// Coordinator is the review coordinator of a session: its directory,
// whether its process runs, and the state it saved.
type Coordinator struct {
	Dir    string
	Proc   daemon.Proc
	Status review.Status
}

// coordinatorIn reads the coordinator of the review directory dir.
func coordinatorIn(dir string) (Coordinator, error) {
	c := Coordinator{Dir: dir, Proc: daemon.Running(dir)}
	var err error
	c.Status, err = review.Load(dir)
	return c, err
}

// StartCoordinator starts the review coordinator in a hidden window of
// the session (startCoordinator) and returns it.
func StartCoordinator(ctx context.Context, env *Env) (Coordinator, error) {
	sc, err := env.OpenParty(ctx)
	if err != nil {
		return Coordinator{}, err
	}
	cfg, err := env.Config()
	if err != nil {
		return Coordinator{}, err
	}
	d, err := env.SessionDeps()
	if err != nil {
		return Coordinator{}, err
	}
	if err := startCoordinator(ctx, d, sc.Session, sc.Info.StateDir, cfg.Review.MaxIterations); err != nil {
		return Coordinator{}, err
	}
	return coordinatorIn(review.Dir(sc.Info.StateDir))
}

// StopCoordinator stops the review coordinator (daemon.Stop), keeping its
// state, and returns it.
func StopCoordinator(ctx context.Context, env *Env) (Coordinator, error) {
	dir, err := ReviewDir(ctx, env)
	if err != nil {
		return Coordinator{}, err
	}
	if err := daemon.Stop(ctx, env.Clock, dir); err != nil {
		return Coordinator{}, err
	}
	return coordinatorIn(dir)
}

// CoordinatorOf is the review coordinator of the session.
func CoordinatorOf(ctx context.Context, env *Env) (Coordinator, error) {
	dir, err := ReviewDir(ctx, env)
	if err != nil {
		return Coordinator{}, err
	}
	return coordinatorIn(dir)
}

// RunCoordinator is the coordinator process (review.SessionProcess):
// it serves the session's review until ctx ends, typing into the panes of
// the roles through the delivery protocol; its log goes to stderr. Its
// notices reach only panes that run claude, codex or gemini (or a role
// route.allowRoles opts in): one refused is logged and retried
// (review.SessionProcess).
func RunCoordinator(ctx context.Context, env *Env) error {
	cfg, err := env.Config()
	if err != nil {
		return err
	}
	sc, err := env.OpenParty(ctx)
	if err != nil {
		return err
	}
	root, err := env.StateRoot()
	if err != nil {
		return err
	}
	r, stateDir := cfg.Review, sc.Info.StateDir
	p := review.SessionProcess{Clock: env.Clock, Getenv: env.Getenv, Session: sc.Session, StateDir: stateDir, Panes: env.Tmux, Log: env.Stderr,
		Config: review.Config{Implementer: r.Implementer, Reviewer: r.Reviewer, Base: r.Base, FindingsTimeout: r.FindingsTimeout,
			HealthInterval: r.HealthInterval, Poll: coordinatorPoll, MarkerDir: r.MarkerDir, MaxIterations: r.MaxIterations},
		Team: func(role string) (review.Team, error) {
			rec, err := session.ReadRecord(stateDir)
			if err != nil {
				return review.Team{}, err
			}
			t := review.Team{Cwd: rec.DirOf(role), Launch: map[string]review.Launch{}}
			t.Base, t.HasBase = rec.BaseOf(role)
			for name, l := range rec.Launch {
				t.Launch[name] = review.Launch(l)
			}
			return t, nil
		},
		Deliver: func(ctx context.Context, role, line string) (string, deliver.Result, error) {
			t, err := env.Resolve(ctx, role)
			if err != nil {
				return "", deliver.Result{}, err
			}
			d := env.Deliverer(root, t.Info, map[string]string{t.Pane.ID: role})
			res, err := d.Send(ctx, deliver.Request{Pane: t.Pane.ID, Profile: cfg.Tune(role, t.Profile), Text: line,
				AgentsOnly: !cfg.AllowsRole(role)})
			return t.Pane.ID, res, err
		}}
	return p.Serve(ctx)
}

// KeepCoordinator runs "party coordinator run" of the session until
// it exits cleanly, restarting it when it crashes (review.Keep); the
// runs write to stdout and stderr.
func KeepCoordinator(ctx context.Context, env *Env, stdout io.Writer) error {
	dir, err := ReviewDir(ctx, env)
	if err != nil {
		return err
	}
	exe, err := env.Executable()
	if err != nil {
		return err
	}
	return review.Keep(ctx, env.Clock, dir, env.Stderr, daemon.Program(coordinatorArgv(exe, env.Session), env.Environ, stdout, env.Stderr))
}

// coordinatorArgv is the command line of the coordinator process of
// session ("" : the one the environment picks).
func coordinatorArgv(exe, session string) []string {
	if session != "" {
		return []string{exe, "--session", session, "coordinator", "run"}
	}
	return []string{exe, "coordinator", "run"}
}

// Instructions is the text party instructions prints for agent: claude's
// or codex's part of the review loop, then the pm commands; for "pm" those
// alone.
func Instructions(agent string) (string, bool) {
	if agent == "pm" {
		return task.Instructions, true
	}
	text, ok := review.Instructions(agent)
	return text + "\n" + task.Instructions, ok
}

// prepareReview makes the review state of a session started with review
// and, when cfg allows it, lets its agents run the loop's commands
// (review.Prepare). It is session.Deps.PrepareReview.
func prepareReview(d session.Deps, stateDir, root string, panes []session.PaneSpec, cfg config.Review) error {
	agents := make([]review.Pane, len(panes))
	for i, p := range panes {
		agents[i] = review.Pane{Agent: p.Agent, Hooks: p.Hooks}
	}
	return review.Prepare(stateDir, root, d.Clock.Now().UTC(), cfg.MaxIterations, cfg.AllowCommands, agents, d.Getenv)
}

// startCoordinator initializes the review state of the session (if new)
// and runs "party coordinator keep" in its hidden window, so that the
// coordinator lives and dies with the session (review.Start: ErrRunning
// when it runs already). It is session.Deps.Coordinator.
func startCoordinator(ctx context.Context, d session.Deps, name, stateDir string, maxIterations int) error {
	return review.Start(ctx, d.Clock, review.Dir(stateDir), maxIterations, func() error {
		return session.StartHidden(ctx, d, name, stateDir, daemon.CoordinatorWindow, coordinatorKeeperArgv(d.Exe, name))
	})
}

// coordinatorKeeperArgv is what the coordinator's window runs in
// session name: party coordinator keep, which runs the coordinator
// (coordinatorArgv) and restarts it after a crash.
func coordinatorKeeperArgv(exe, name string) []string {
	return []string{exe, "--session", name, "coordinator", "keep"}
}
