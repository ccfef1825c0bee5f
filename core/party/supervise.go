package party

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/remote"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/spend"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/supervise/panes"
	"github.com/partyhq/party/core/tmux"
)

// SupervisorFailedError is why a supervisor is down, as its process said
// it (supervise.DownError).
type SupervisorFailedError = supervise.DownError

// supervisorScope is the session the supervisor commands act on: inside an
// agent's pane $PARTY_STATE_DIR's (unless Session names another), else the
// session the operation picks. name is "" inside a pane.
func supervisorScope(ctx context.Context, env *Env) (stateDir, name string, err error) {
	if d := env.Getenv("PARTY_STATE_DIR"); d != "" && env.Session == "" {
		return d, env.Getenv("PARTY_SESSION"), nil
	}
	sc, err := env.OpenParty(ctx)
	if err != nil {
		if dir, name, ok := recordedScope(ctx, env, err); ok {
			return dir, name, nil
		}
		return "", "", err
	}
	return sc.Info.StateDir, sc.Session, nil
}

// recordedScope is the session whose tmux server or session is gone (err
// says so), found by its supervisor's store (supervise.RecordedSession):
// the one named (--session, $PARTY_SESSION), else the one session of this
// server that has a store and is not live.
func recordedScope(ctx context.Context, env *Env, err error) (stateDir, name string, ok bool) {
	if !errors.Is(err, mux.ErrNoServer) && !errors.Is(err, mux.ErrNoSession) && !errors.Is(err, session.ErrUnresolved) {
		return "", "", false
	}
	root, rerr := state.Root(env.Getenv)
	if rerr != nil {
		return "", "", false
	}
	name = env.Session
	if name == "" {
		name = env.Getenv("PARTY_SESSION")
	}
	return supervise.RecordedSession(root, env.Tmux.Socket.Resolve(env.Getenv), name, func(name string) bool {
		live, err := env.Tmux.HasSession(ctx, name)
		return err == nil && live
	})
}

// TriggerOptions are the inputs of Trigger.
type TriggerOptions struct {
	supervise.TriggerRequest
	// Wait waits until the trigger ends (Timeout; zero is
	// supervise.turnTimeout) and returns it then.
	Wait    bool
	Timeout time.Duration
}

// TriggerResult is a trigger as party trigger prints it: the trigger and
// whether this call recorded it (false: the id existed).
type TriggerResult struct {
	supervise.Trigger
	Created bool `json:"created"`
	// Usage is what the turn the trigger started spent, once --wait saw
	// it answered (its agent's records, as party usage reads them).
	Usage *spend.Turn `json:"usage,omitempty"`
}

// Trigger records a trigger for a runtime through the supervisor's API;
// with Wait it returns once the trigger ended, with a
// *supervise.FailedError when it failed.
func Trigger(ctx context.Context, env *Env, opts TriggerOptions) (TriggerResult, error) {
	role, host, err := remote.RoleAt(opts.Role)
	if err != nil {
		return TriggerResult{}, err
	}
	if host != "" {
		opts.Role = role
		return hostTrigger(ctx, env, host, opts)
	}
	// The submission and the wait are two calls: a wait that finds the
	// supervisor gone is never answered by submitting again.
	res, err := viaDoor(ctx, env, func(d *supervise.Door) (TriggerResult, error) {
		t, created, err := d.SubmitOnce(ctx, opts.TriggerRequest)
		return TriggerResult{Trigger: t, Created: created}, err
	})
	if err != nil {
		host, err := roleElsewhere(ctx, env, opts.Role, err)
		if host == "" {
			return res, err
		}
		return hostTrigger(ctx, env, host, opts)
	}
	if !opts.Wait {
		return res, err
	}
	timeout := opts.Timeout
	if timeout == 0 {
		cfg, err := env.Config()
		if err != nil {
			return res, err
		}
		timeout = cfg.Supervise.TurnTimeout
	}
	var stateDir string
	res.Trigger, err = viaDoor(ctx, env, func(d *supervise.Door) (supervise.Trigger, error) {
		stateDir = d.StateDir
		return d.AwaitEnd(ctx, res.Trigger, timeout)
	})
	if err == nil && res.Answer != nil {
		res.Usage = triggerUsage(ctx, env, stateDir, res.Trigger)
	}
	return res, err
}

// TriggerShow is the recorded trigger id.
func TriggerShow(ctx context.Context, env *Env, id string) (supervise.Trigger, error) {
	return viaDoorOr(ctx, env, func(d *supervise.Door) (supervise.Trigger, error) { return d.Client.Trigger(ctx, id) },
		func(o *supervise.Ops, c supervise.Caller) (supervise.Trigger, error) { return o.Trigger(ctx, c, id) })
}

// TriggerUnblock lets an auto-blocked thread go on.
func TriggerUnblock(ctx context.Context, env *Env, thread string) (supervise.Thread, error) {
	return viaDoor(ctx, env, func(d *supervise.Door) (supervise.Thread, error) { return d.Unblock(ctx, thread) })
}

// Runtimes are the session's runtimes as the supervisor last recorded
// them.
func Runtimes(ctx context.Context, env *Env) ([]supervise.Runtime, error) {
	return viaDoorOr(ctx, env, func(d *supervise.Door) ([]supervise.Runtime, error) { return d.Client.Runtimes(ctx) },
		func(o *supervise.Ops, c supervise.Caller) ([]supervise.Runtime, error) { return o.Runtimes(ctx, c) })
}

// InboxSend puts a message into a role's inbox; from inside a pane it is
// from that runtime.
func InboxSend(ctx context.Context, env *Env, req supervise.MessageRequest) (supervise.Message, error) {
	role, host, err := remote.RoleAt(req.To)
	if err != nil {
		return supervise.Message{}, err
	}
	if host != "" {
		return hostInboxSend(ctx, env, role, host, req)
	}
	return viaDoor(ctx, env, func(d *supervise.Door) (supervise.Message, error) { return d.Send(ctx, req) })
}

// InboxRead returns the calling runtime's unread messages (of thread, or
// all) and moves its read cursors past them.
func InboxRead(ctx context.Context, env *Env, thread string) ([]supervise.Message, error) {
	return viaDoor(ctx, env, func(d *supervise.Door) ([]supervise.Message, error) { return d.Read(ctx, thread) })
}

// Forward is where a message to another host goes and how its
// forwarding stands (supervise.Forward), with its states.
type Forward = supervise.Forward

// The states of a Forward.
const (
	FwdPending   = supervise.FwdPending
	FwdForwarded = supervise.FwdForwarded
	FwdFailed    = supervise.FwdFailed
)

// InboxList lists the messages of a thread, with those to other hosts
// in its outbox (each with how its forwarding stands: Message.Forward),
// in the order they were recorded.
func InboxList(ctx context.Context, env *Env, thread string) ([]supervise.Message, error) {
	if thread == "" {
		thread = supervise.DefaultThread
	}
	return viaDoorOr(ctx, env, func(d *supervise.Door) ([]supervise.Message, error) {
		msgs, err := d.Messages(ctx, thread)
		if err != nil {
			return nil, err
		}
		out, err := d.Outbox(ctx, thread)
		return remote.WithOutbox(msgs, out, err)
	}, func(o *supervise.Ops, c supervise.Caller) ([]supervise.Message, error) {
		msgs, err := o.Messages(ctx, c, thread)
		if err != nil {
			return nil, err
		}
		out, err := o.Outbox(ctx, c, thread)
		return remote.WithOutbox(msgs, out, err)
	})
}

// Heartbeat records that the calling runtime is alive.
func Heartbeat(ctx context.Context, env *Env, status string) error {
	_, err := viaDoor(ctx, env, func(d *supervise.Door) (struct{}, error) { return struct{}{}, d.Client.Heartbeat(ctx, status) })
	return err
}

// SupervisorEvents shows the audit trail with emit: once, or with follow
// until ctx ends, told of each new event by the API the moment it is
// recorded. Once, while no supervisor runs, it shows what the last one
// recorded.
func SupervisorEvents(ctx context.Context, env *Env, follow bool, emit func(supervise.AuditEvent)) error {
	d, err := openDoor(ctx, env)
	if err != nil {
		return err
	}
	return supervise.AuditTrail(ctx, d, follow, emit)
}

// SupervisorProc says whether the supervisor of a session runs, and why
// not when it failed (supervise.Status).
type SupervisorProc = supervise.Status

// The states of SupervisorProc.
const (
	SupervisorRunning    = supervise.StatusRunning
	SupervisorStarting   = supervise.StatusStarting
	SupervisorRestarting = supervise.StatusRestarting
	SupervisorFailed     = supervise.StatusFailed
	SupervisorStopped    = supervise.StatusStopped
)

func supervisorProc(env *Env, stateDir string) SupervisorProc {
	return supervise.StatusOf(env.Getenv, stateDir)
}

// SupervisorStatus says whether the session's supervisor runs; when it is
// down after a failure, it also returns why (Down).
func SupervisorStatus(ctx context.Context, env *Env) (SupervisorProc, error) {
	stateDir, _, err := supervisorScope(ctx, env)
	if err != nil {
		return SupervisorProc{}, err
	}
	p := supervisorProc(env, stateDir)
	return p, p.Down()
}

// StartSupervisor runs "party supervise keep" in a hidden window of the
// session, so that it lives and dies with the session, and waits until it
// serves or fails (startSupervisorIn); ErrRunning when it runs already.
// It returns the supervisor's state with the error.
func StartSupervisor(ctx context.Context, env *Env, opts RunOptions) (SupervisorProc, error) {
	if opts.Listen != "" {
		if _, err := supervise.CheckListen(opts.Listen); err != nil {
			return SupervisorProc{}, fmt.Errorf("%w: --listen: %w", ErrUsage, err)
		}
	}
	sc, err := env.OpenParty(ctx)
	if err != nil {
		return SupervisorProc{}, err
	}
	d, err := env.SessionDeps()
	if err != nil {
		return SupervisorProc{}, err
	}
	err = startSupervisorIn(ctx, d, sc.Session, sc.Info.StateDir, opts)
	return supervisorProc(env, sc.Info.StateDir), err
}

// startSupervisorIn starts the supervisor of the session name whose state
// dir is stateDir in its hidden window and waits until it serves or
// fails (supervise.Start).
func startSupervisorIn(ctx context.Context, d session.Deps, name, stateDir string, opts RunOptions) error {
	argv := []string{d.Exe, "--session", name, "supervise", "keep"}
	if opts.Listen != "" {
		argv = append(argv, "--listen", opts.Listen)
	}
	return supervise.Start(ctx, d.Clock, stateDir, opts.Listen, func() error {
		return session.StartHidden(ctx, d, name, stateDir, daemon.SupervisorWindow, argv)
	})
}

// StopSupervisor stops the session's supervisor (its records stay).
func StopSupervisor(ctx context.Context, env *Env) (SupervisorProc, error) {
	stateDir, _, err := supervisorScope(ctx, env)
	if err != nil {
		return SupervisorProc{}, err
	}
	if err := daemon.Stop(ctx, env.Clock, supervise.Dir(stateDir)); err != nil {
		return SupervisorProc{}, err
	}
	return supervisorProc(env, stateDir), nil
}

// KeepSupervisor runs "party supervise run" of the session until it exits
// cleanly, restarting it when it crashes (supervise.Process.Keep); the
// runs write to stdout and stderr.
func KeepSupervisor(ctx context.Context, env *Env, stdout io.Writer, opts RunOptions) error {
	stateDir, name, err := supervisorScope(ctx, env)
	if err != nil {
		return err
	}
	exe, err := env.Executable()
	if err != nil {
		return err
	}
	argv := []string{exe, "supervise", "run"}
	if name != "" {
		argv = []string{exe, "--session", name, "supervise", "run"}
	}
	if opts.Listen != "" {
		argv = append(argv, "--listen", opts.Listen)
	}
	p := &supervise.Process{Dir: supervise.Dir(stateDir), Clock: env.Clock, Stderr: env.Stderr}
	return p.Keep(ctx, daemon.Program(argv, env.Environ, stdout, env.Stderr))
}

// RunOptions are the inputs of RunSupervisor.
type RunOptions struct {
	// Listen adds a loopback TCP listener (HOST:PORT) whose callers need
	// the bearer token in the supervisor's directory (api.token).
	Listen string
}

// RunSupervisor is the supervisor process of a session
// (supervise.Process.Run): it holds the supervisor's lock, serves the API
// on its unix socket (and Listen), and runs the loop over the session's
// panes (supervisorParts) until ctx ends.
func RunSupervisor(ctx context.Context, env *Env, opts RunOptions) error {
	stateDir, _, err := supervisorScope(ctx, env)
	if err != nil {
		return err
	}
	p := &supervise.Process{Dir: supervise.Dir(stateDir), Clock: env.Clock, Stderr: env.Stderr, Listen: opts.Listen,
		Classify: codeOf}
	return p.Run(ctx, func(ctx context.Context, logf func(string, ...any)) (supervise.Parts, error) {
		return supervisorParts(ctx, env, logf)
	})
}

// supervisorParts are what the supervisor of the session runs
// (panes.Session.Parts): its store and operations, and its loop over the
// session's panes.
func supervisorParts(ctx context.Context, env *Env, logf func(string, ...any)) (supervise.Parts, error) {
	stateDir, name, err := supervisorScope(ctx, env)
	if err != nil {
		return supervise.Parts{}, err
	}
	cfg, err := env.Config()
	if err != nil {
		return supervise.Parts{}, err
	}
	root, err := env.StateRoot()
	if err != nil {
		return supervise.Parts{}, err
	}
	exe, err := env.Executable()
	if err != nil {
		return supervise.Parts{}, err
	}
	s := panes.Session{Tmux: env.Tmux, Clock: env.Clock, Getenv: env.Getenv, Exe: exe, Config: cfg, Name: name, StateDir: stateDir,
		Resolve: func(ctx context.Context, role string) error { _, err := env.Resolve(ctx, role); return err },
		Deliverer: func(info tmux.SessionInfo, roles map[string]string) *deliver.Deliverer {
			return env.Deliverer(root, info, roles)
		},
		Classify: codeOf,
		Budget: func(cwd string, logf func(string, ...any)) func(context.Context, string) string {
			return spend.Held(env.Getenv, env.Clock, name, stateDir, cwd, logf)
		},
		Usage: func(cwd string, logf func(string, ...any)) func() []supervise.UsageSample {
			return supervisedUsage(env, stateDir, cwd, logf)
		},
		Self: remote.SelfHost(), Forward: remote.Forwarder{Caller: remoteCaller(env), Config: cfg}}
	return s.Parts(ctx, logf)
}

// RuntimeStopOptions are the inputs of StopRuntime.
type RuntimeStopOptions struct {
	Role string
	// Grace is how long the agent has to exit after C-c before its pane
	// is killed; zero is 5 s.
	Grace time.Duration
}

// StopRuntime stops a runtime gracefully, through the supervisor: C-c to
// its agent, its pane killed once the agent exited or after Grace, and
// the runtime deregistered, with an event. Its open triggers fail
// TARGET_NOT_FOUND.
func StopRuntime(ctx context.Context, env *Env, opts RuntimeStopOptions) (supervise.Runtime, error) {
	return viaDoor(ctx, env, func(d *supervise.Door) (supervise.Runtime, error) { return d.Stop(ctx, opts.Role, opts.Grace) })
}
