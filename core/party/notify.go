package party

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/notify"
	"github.com/partyhq/party/core/roles"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
)

// NotifyWindow is the hidden window of a session where its notifier (party
// notify watch) runs.
const NotifyWindow = "party-notify"

// ErrNotifierRunning is a notifier started for a session that has one.
var ErrNotifierRunning = errors.New("the notifier runs already")

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

// startNotifierIn runs party notify watch in the session's hidden window
// NotifyWindow and waits, up to 5 s, until it holds its lock.
func startNotifierIn(ctx context.Context, d session.Deps, name, stateDir string) error {
	dir := notify.Dir(stateDir)
	if err := state.MkdirPrivate(dir); err != nil {
		return err
	}
	lock := filepath.Join(dir, notify.LockFile)
	if _, held := state.Holder(lock); held {
		return fmt.Errorf("session %s: %w", name, ErrNotifierRunning)
	}
	if err := session.StartHidden(ctx, d, name, stateDir, NotifyWindow, []string{d.Exe, "--session", name, "notify", "watch"}); err != nil {
		return err
	}
	for i := 0; i < 250; i++ {
		if _, held := state.Holder(lock); held {
			return nil
		}
		if err := d.Clock.Sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
	d.Warn(fmt.Sprintf("the notifier of %s has not started after 5s; see its window %s", name, NotifyWindow))
	return nil
}

// NotifyWatch is the notifier of the session the Env picks: it holds the
// session's notifier lock (ErrNotifierRunning when another process does),
// resumes from its saved state and, until ctx ends, reads the session's
// sources whenever a hook wakes it and at least once a second, and tells
// what passes the gate (notify.Notifier). Each decision is written to log
// as a line.
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
	if err := state.MkdirPrivate(n.Dir); err != nil {
		return err
	}
	release, err := state.Hold(ctx, env.Clock, filepath.Join(n.Dir, notify.LockFile))
	if errors.Is(err, state.ErrHeld) {
		return fmt.Errorf("session %s: %w", sc.Session, ErrNotifierRunning)
	}
	if err != nil {
		return err
	}
	defer release()
	n.Since = env.Clock.Now().Add(-time.Minute) // what happened before it ran is history
	n.Roles = func(ctx context.Context) map[string]string {
		sc, err := session.Open(ctx, env.Tmux, session.Pick{Name: sc.Session, Getenv: env.Getenv})
		if err != nil {
			return map[string]string{}
		}
		return roles.ByPane(sc.Panes)
	}
	api, err := operatorClient(env, sc.Info.StateDir)
	if err != nil {
		return err
	}
	defer api.HTTP.CloseIdleConnections()
	n.Audit = api
	waiter, err := state.ListenSession(env.Getenv, sc.Info.StateDir)
	if err != nil {
		return err
	}
	defer waiter.Close()
	return n.Run(ctx, env.Clock, waiter.C, log, func(err error) { env.Warnf("notify: %v", err) })
}
