package party

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/notify"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
)

// NotifyWindow is the hidden window of a session where its notifier (party
// notify watch) runs.
const NotifyWindow = "party-notify"

// ErrNotifierRunning is a notifier started for a session that has one.
var ErrNotifierRunning = errors.New("the notifier runs already")

// The notifier's files in its directory (NotifyDir).
const (
	notifyLock  = "notify.lock"
	notifyState = "state.json"
	// NotifyLog lists, a JSON line each, every event the notifier
	// decided on: the verdict and what each sink did.
	NotifyLog = "told.jsonl"
)

// NotifyDir is the notifier's directory in a session's state dir.
func NotifyDir(stateDir string) string { return filepath.Join(stateDir, "notify") }

// notifyPolicy is the gate's policy of cfg.
func notifyPolicy(cfg config.Notify) (notify.Policy, error) {
	on, err := notify.ParseKinds(cfg.Events)
	if err != nil {
		return notify.Policy{}, fmt.Errorf("notify.events: %w: %w", err, config.ErrInvalid)
	}
	return notify.Policy{On: on, Dedupe: cfg.Dedupe, Burst: cfg.PerMinute, Window: time.Minute}, nil
}

// notifySinks are the sinks of cfg for session ("" when there is none:
// no tmux or terminal sink).
func notifySinks(env *Env, cfg config.Notify, session string) notify.Sinks {
	on := map[string]bool{}
	for _, w := range strings.FieldsFunc(cfg.Sinks, func(r rune) bool { return r == ',' || r == ' ' }) {
		switch w {
		case "all":
			for _, s := range notify.SinkNames {
				on[s] = true
			}
		default:
			on[w] = true
		}
	}
	s := notify.Sinks{On: on, Session: session, Webhook: cfg.Webhook, Topic: cfg.Topic,
		HTTP: &http.Client{Timeout: 5 * time.Second}, LookPath: exec.LookPath, GOOS: runtime.GOOS,
		Display: 8 * time.Second,
		Exec: func(ctx context.Context, argv []string) error {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			return exec.CommandContext(ctx, argv[0], argv[1:]...).Run()
		}}
	if session != "" {
		s.Tmux = env.Tmux
	}
	return s
}

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
	return notifySinks(env, cfg.Notify, name).Tell(ctx, ev), nil
}

// NotifyStatus says whether the notifier of a session runs.
type NotifyStatus struct {
	Session string `json:"session"`
	Running bool   `json:"running"`
	PID     int    `json:"pid,omitempty"`
	Dir     string `json:"dir"`
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
	return notifierStatus(sc.Session, sc.Info.StateDir), nil
}

func notifierStatus(name, stateDir string) NotifyStatus {
	dir := NotifyDir(stateDir)
	pid, held := state.Holder(filepath.Join(dir, notifyLock))
	return NotifyStatus{Session: name, Running: held, PID: pid, Dir: dir}
}

// startNotifierIn runs party notify watch in the session's hidden window
// NotifyWindow and waits, up to 5 s, until it holds its lock.
func startNotifierIn(ctx context.Context, d session.Deps, name, stateDir string) error {
	dir := NotifyDir(stateDir)
	if err := state.MkdirPrivate(dir); err != nil {
		return err
	}
	lock := filepath.Join(dir, notifyLock)
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

// notifier reads a session's sources, decides and tells; Watch is its
// state, saved in Dir before anything is told.
type notifier struct {
	Session, StateDir, Dir string
	Policy                 notify.Policy
	LongTurn               time.Duration
	Tell                   func(context.Context, notify.Event) []notify.Result
	Roles                  func(context.Context) map[string]string
	// Since: a notifier with no saved state tells nothing older (what
	// happened before it ran is history), but reads it for the turns.
	Since time.Time

	w   notify.Watch
	api *supervise.Client
}

// load reads the saved state; with none, it starts at the beginning of
// the sources and tells what is newer than Since.
func (n *notifier) load() error {
	b, err := os.ReadFile(filepath.Join(n.Dir, notifyState))
	if errors.Is(err, os.ErrNotExist) {
		n.w = notify.Watch{}
		return nil
	}
	if err != nil {
		return err
	}
	n.Since = time.Time{}
	if err := json.Unmarshal(b, &n.w); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(n.Dir, notifyState), err)
	}
	return nil
}

func (n *notifier) save() error {
	b, err := json.Marshal(n.w)
	if err != nil {
		return err
	}
	return state.WriteFile(filepath.Join(n.Dir, notifyState), b, 0o600)
}

// told is one line of NotifyLog.
type told struct {
	Event   notify.Event    `json:"event"`
	Verdict string          `json:"verdict"`
	Results []notify.Result `json:"results,omitempty"`
}

// pass reads what the sources have new, decides on each event, saves the
// state and then tells what passed the gate. It returns what it decided.
func (n *notifier) pass(ctx context.Context) ([]told, error) {
	var evs []notify.Event
	if err := n.readEvents(func(ev hook.Event) {
		var out []notify.Event
		n.w, out = n.w.Hook(n.Session, ev, n.LongTurn)
		evs = append(evs, out...)
	}); err != nil {
		return nil, err
	}
	if st, err := review.Load(review.Dir(n.StateDir)); err == nil {
		var out []notify.Event
		n.w, out = n.w.ReviewState(n.Session, st)
		evs = append(evs, out...)
	}
	if err := n.readAudit(ctx, func(a supervise.AuditEvent) {
		var out []notify.Event
		n.w, out = n.w.Audit(n.Session, a)
		evs = append(evs, out...)
	}); err != nil {
		return nil, err
	}
	var roles map[string]string
	var decided []told
	for _, ev := range evs {
		if ev.At.Before(n.Since) {
			continue
		}
		if ev.Role == "" && ev.Pane != "" {
			if roles == nil && n.Roles != nil {
				roles = n.Roles(ctx)
			}
			ev.Role = roles[ev.Pane]
		}
		var v notify.Verdict
		n.w.Gate, v = notify.Step(n.Policy, n.w.Gate, ev)
		decided = append(decided, told{Event: ev, Verdict: v.String()})
	}
	// Saved before telling: killed in between, the notifier loses what
	// it was telling rather than tell it twice.
	if err := n.save(); err != nil {
		return nil, err
	}
	for i := range decided {
		if decided[i].Verdict == notify.Tell.String() {
			decided[i].Results = n.Tell(ctx, decided[i].Event)
		}
		if err := state.AppendEvent(filepath.Join(n.Dir, NotifyLog), decided[i]); err != nil {
			return decided, err
		}
	}
	return decided, nil
}

// readEvents gives each whole line of the event log after the saved
// offset to f; a log shorter than the offset was replaced: read it anew.
func (n *notifier) readEvents(f func(hook.Event)) error {
	file, err := os.Open(filepath.Join(n.StateDir, state.EventLog))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer file.Close()
	if fi, err := file.Stat(); err == nil && fi.Size() < n.w.Offset {
		n.w.Offset = 0
	}
	if _, err := file.Seek(n.w.Offset, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReader(file)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return nil // EOF, or a line still being written
		}
		n.w.Offset += int64(len(line))
		var ev hook.Event
		if json.Unmarshal(line, &ev) == nil && ev.Pane != "" {
			f(ev)
		}
	}
}

// readAudit gives each supervisor audit event after the saved one to f,
// asked of the supervisor's API; while none runs there is nothing new.
func (n *notifier) readAudit(ctx context.Context, f func(supervise.AuditEvent)) error {
	evs, err := n.api.Events(ctx, n.w.AuditSeq, 1000, 0)
	if errors.Is(err, supervise.ErrNotRunning) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, a := range evs {
		f(a)
	}
	return nil
}

func (n *notifier) close() { n.api.HTTP.CloseIdleConnections() }

// NotifyWatch is the notifier of the session the Env picks: it holds the
// session's notifier lock (ErrNotifierRunning when another process does),
// resumes from its saved state and, until ctx ends, reads the session's
// sources whenever a hook wakes it and at least once a second, and tells
// what passes the gate. Each decision is written to log as a line.
func NotifyWatch(ctx context.Context, env *Env, log io.Writer) error {
	sc, err := session.OpenParty(ctx, env.Tmux, env.Pick())
	if err != nil {
		return err
	}
	cfg, err := env.Config()
	if err != nil {
		return err
	}
	pol, err := notifyPolicy(cfg.Notify)
	if err != nil {
		return err
	}
	dir := NotifyDir(sc.Info.StateDir)
	if err := state.MkdirPrivate(dir); err != nil {
		return err
	}
	release, err := state.Hold(ctx, env.Clock, filepath.Join(dir, notifyLock))
	if errors.Is(err, state.ErrHeld) {
		return fmt.Errorf("session %s: %w", sc.Session, ErrNotifierRunning)
	}
	if err != nil {
		return err
	}
	defer release()
	sinks := notifySinks(env, cfg.Notify, sc.Session)
	n := &notifier{Session: sc.Session, StateDir: sc.Info.StateDir, Dir: dir, Policy: pol, LongTurn: cfg.Notify.LongTurn,
		Tell: sinks.Tell, Since: env.Clock.Now().Add(-time.Minute),
		Roles: func(ctx context.Context) map[string]string {
			m := map[string]string{}
			if sc, err := session.Open(ctx, env.Tmux, session.Pick{Name: sc.Session, Getenv: env.Getenv}); err == nil {
				for _, p := range sc.Panes {
					m[p.ID] = p.Role
				}
			}
			return m
		}}
	if n.api, err = operatorClient(env, sc.Info.StateDir); err != nil {
		return err
	}
	defer n.close()
	if err := n.load(); err != nil {
		return err
	}
	waiter, err := state.ListenSession(env.Getenv, sc.Info.StateDir)
	if err != nil {
		return err
	}
	defer waiter.Close()
	wake := waiter.C
	for {
		decided, err := n.pass(ctx)
		for _, d := range decided {
			b, _ := json.Marshal(d)
			fmt.Fprintf(log, "%s\n", b)
		}
		if err != nil {
			env.Warnf("notify: %v", err)
		}
		wctx, cancel := context.WithCancel(ctx)
		var closed atomic.Bool
		// It ends on a wake-up or when the wait ends (wctx), whichever
		// comes first: one at a time.
		go func(wake <-chan struct{}) {
			select {
			case _, ok := <-wake:
				closed.Store(!ok)
				cancel()
			case <-wctx.Done():
			}
		}(wake)
		_ = env.Clock.Sleep(wctx, time.Second)
		cancel()
		if closed.Load() {
			wake = nil // the clock alone from now on
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}
