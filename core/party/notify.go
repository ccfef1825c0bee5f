package party

import (
	"context"
	"fmt"
	"io"

	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/notify"
	"github.com/partyhq/party/core/roles"
	"github.com/partyhq/party/core/session"
)

// NotifyTest tells a test notification through every sink switched on,
// to the session the Env picks when there is one, and says what each
// sink did. It passes no gate: it is told however often it is asked.
func NotifyTest(ctx context.Context, env *Env) ([]notify.Result, error) {
	cfg, err := env.Config()
	if err != nil {
		return nil, err
	}
	name := ""
	if sc, err := env.Open(ctx); err == nil {
		name = sc.Session
	}
	ev := notify.Event{Kind: notify.Test, Session: name, At: env.Clock.Now().UTC(),
		Title: "a test notification", Body: "party notify test: this is how party tells you an agent needs you"}
	return notify.NewSinks(cfg.Notify, name, env.Tmux).Tell(ctx, ev), nil
}

// StartNotifier starts the notifier of the session the Env picks in its
// hidden window, unless it runs, and returns once it runs.
func StartNotifier(ctx context.Context, env *Env) (NotifyStatus, error) {
	sc, err := session.OpenParty(ctx, env.Tmux, env.Pick())
	if err != nil {
		return NotifyStatus{}, err
	}
	d, err := env.SessionDeps()
	if err != nil {
		return NotifyStatus{}, err
	}
	if err := startNotifierIn(ctx, d, sc.Session, sc.Info.StateDir); err != nil {
		return NotifyStatus{}, err
	}
	return notify.Running(sc.Session, sc.Info.StateDir), nil
}

// startNotifierIn runs party notify keep (KeepNotifier) in the session's
// hidden window daemon.NotifierWindow and waits, up to 5 s, until the
// notifier holds its lock (notify.Start).
func startNotifierIn(ctx context.Context, d session.Deps, name, stateDir string) error {
	running, err := notify.Start(ctx, d.Clock, name, stateDir, func() error {
		return session.StartHidden(ctx, d, name, stateDir, daemon.NotifierWindow, []string{d.Exe, "--session", name, "notify", "keep"})
	})
	if err == nil && !running {
		d.Warn(fmt.Sprintf("the notifier of %s has not started after 5s; see its window %s", name, daemon.NotifierWindow))
	}
	return err
}

// KeepNotifier runs "party notify watch" of the session the Env picks
// until it exits cleanly, restarting it when it crashes (daemon.Keeper),
// and gives up after daemon.CrashLimit crashes within daemon.CrashWindow; the runs write
// to stdout and stderr.
func KeepNotifier(ctx context.Context, env *Env, stdout io.Writer) error {
	sc, err := session.OpenParty(ctx, env.Tmux, env.Pick())
	if err != nil {
		return err
	}
	exe, err := env.Executable()
	if err != nil {
		return err
	}
	return notify.Keep(ctx, env.Clock, sc.Session, sc.Info.StateDir, env.Stderr,
		daemon.Program([]string{exe, "--session", sc.Session, "notify", "watch"}, env.Environ, stdout, env.Stderr))
}

// NotifyWatch is the notifier of the session the Env picks
// (notify.Notifier.Serve): it holds the session's notifier lock
// (notify.ErrRunning when another process does), resumes from its saved
// state and, until ctx ends, reads the session's sources whenever a hook
// wakes it and at least once a second, and tells what passes the gate.
// Each decision is written to log as a line.
func NotifyWatch(ctx context.Context, env *Env, log io.Writer) error {
	sc, err := session.OpenParty(ctx, env.Tmux, env.Pick())
	if err != nil {
		return err
	}
	cfg, err := env.Config()
	if err != nil {
		return err
	}
	n, err := notify.New(cfg.Notify, sc.Session, sc.Info.StateDir, env.Tmux)
	if err != nil {
		return err
	}
	n.Roles = func(ctx context.Context) map[string]string {
		sc, err := session.Open(ctx, env.Tmux, session.Pick{Name: sc.Session, Getenv: env.Getenv})
		if err != nil {
			return map[string]string{}
		}
		return roles.ByPane(sc.Panes)
	}
	warn := func(err error) { env.Warnf("notify: %v", err) }
	if rec, err := session.ReadRecord(sc.Info.StateDir); err == nil {
		n.Budgets = notifiedBudgets(env, sc.Session, sc.Info.StateDir, rec.Cwd, warn)
	}
	return n.Serve(ctx, env.Clock, env.Getenv, env.Stderr, log, warn)
}
