package party

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/dash"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/observe"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/talk"
	"github.com/partyhq/party/core/task"
	"github.com/partyhq/party/core/tmux"
)

// The dashboard's rhythm. Screens are read only after a pane printed
// something (tmux control mode's %output), at most every screenDebounce;
// files with no wake-up of their own (the supervisor's store, the review
// state, the request queues) are looked at every slowPoll by their size
// and time; the team's tasks (possibly on GitHub) every tasksPoll; the
// server's sessions every sessionsPoll, and when tmux says they changed.
const (
	screenDebounce = 250 * time.Millisecond
	slowPoll       = 2 * time.Second
	tasksPoll      = 30 * time.Second
	sessionsPoll   = 10 * time.Second
)

// DashSnapshot is the dashboard's model read once: the session --session
// names, else every party session of the server.
func DashSnapshot(ctx context.Context, env *Env) (dash.Model, error) {
	infos, err := dashSessions(ctx, env)
	if err != nil {
		return dash.Model{}, err
	}
	cfg, err := env.Config()
	if err != nil {
		return dash.Model{}, err
	}
	m := dash.Model{Now: env.Clock.Now(), Sessions: []dash.Session{}}
	for _, info := range infos {
		ds := newDashSession(env, cfg, info)
		panes, err := env.Tmux.ListPanes(ctx, info.Name)
		if err != nil {
			if errors.Is(err, mux.ErrNoSession) {
				continue
			}
			return m, err
		}
		evs := ds.read(ctx, panes)
		for _, p := range ds.agentPanes(panes) {
			if screen, err := env.Tmux.Capture(ctx, p.ID, 0); err == nil {
				evs = append(evs, ds.screen(p, screen))
			}
		}
		evs = append(evs, dash.TasksSeen{Session: info.Name, Tasks: ds.tasks(ctx)})
		m = dash.Apply(m, env.Clock.Now(), evs...)
	}
	return m, nil
}

// Dash runs the live dashboard on the terminal in/out until the user
// quits or ctx ends. What the agents' commands would print on stderr
// (warnings of a talk) is dropped while it runs: the screen is the
// dashboard's.
func Dash(ctx context.Context, env *Env, in io.Reader, out io.Writer) error {
	first, err := DashSnapshot(ctx, env)
	if err != nil {
		return err
	}
	quiet := *env
	quiet.Stderr = io.Discard
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := make(chan dash.Event, 64)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // ends with ctx
		defer wg.Done()
		watchDash(ctx, &quiet, events)
	}()
	defer wg.Wait()
	defer cancel()
	return dash.Run(ctx, dash.Options{Model: first, Events: events, Now: env.Clock.Now, In: in, Out: out,
		Act: dash.Actions{
			Jump: func(ctx context.Context, r dash.Ref) error { return env.Tmux.Jump(ctx, r.Pane) },
			Talk: func(ctx context.Context, r dash.Ref, text string) (string, error) {
				e := quiet
				e.Session = r.Session
				res, err := Talk(ctx, &e, TalkOptions{Role: r.Role, Text: text})
				if err != nil {
					return "", err
				}
				var outs []string
				for _, o := range res {
					if o.Err != nil {
						return "", o.Err
					}
					outs = append(outs, string(o.Outcome))
				}
				return strings.Join(outs, ", "), nil
			},
		}})
}

// dashSessions are the party sessions the dashboard shows.
func dashSessions(ctx context.Context, env *Env) ([]tmux.SessionInfo, error) {
	if env.Session != "" {
		info, err := env.Tmux.SessionInfo(ctx, env.Session)
		if err != nil {
			return nil, err
		}
		if info.StateDir == "" {
			return nil, fmt.Errorf("session %s was not started by party (it has no state dir): %w", info.Name, session.ErrUnresolved)
		}
		return []tmux.SessionInfo{info}, nil
	}
	list, err := env.Tmux.ListSessions(ctx)
	if err != nil {
		return nil, err
	}
	sock := env.Tmux.Socket.Resolve(env.Getenv)
	var out []tmux.SessionInfo
	for _, s := range list {
		if s.StateDir != "" {
			out = append(out, tmux.SessionInfo{Name: s.Name, StateDir: s.StateDir, SocketPath: sock})
		}
	}
	return out, nil
}

// watchDash feeds events with the changes of the sessions the dashboard
// shows, one watcher per session, until ctx ends.
func watchDash(ctx context.Context, env *Env, events chan<- dash.Event) {
	cfg, err := env.Config()
	if err != nil {
		return
	}
	relist := make(chan struct{}, 1)
	// A session's watcher is waited for before its SessionGone is sent:
	// nothing it read last can bring the session back after.
	type watcher struct {
		cancel context.CancelFunc
		done   chan struct{}
	}
	running := map[string]watcher{}
	var soon <-chan time.Time
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		infos, err := dashSessions(ctx, env)
		if err == nil || errors.Is(err, mux.ErrNoSession) {
			seen := map[string]bool{}
			for _, info := range infos {
				seen[info.Name] = true
				if w, ok := running[info.Name]; ok {
					select {
					case <-w.done:
						// It ended on its own (its control client
						// went, its first look failed) and the
						// session is there: watch it again.
					default:
						continue
					}
				}
				sctx, cancel := context.WithCancel(ctx)
				w := watcher{cancel: cancel, done: make(chan struct{})}
				running[info.Name] = w
				ds := newDashSession(env, cfg, info)
				wg.Add(1)
				go func() { // ends with sctx or the session
					defer wg.Done()
					defer close(w.done)
					ds.watch(sctx, events, relist)
				}()
			}
			for name, w := range running {
				if !seen[name] {
					w.cancel()
					<-w.done
					delete(running, name)
					send(ctx, events, dash.SessionGone{Session: name})
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-relist:
			// Now, and once more in a second: a new session gets its
			// party options just after tmux announced it.
			soon = time.After(time.Second)
		case <-soon:
			soon = nil
		case <-time.After(sessionsPoll):
		}
	}
}

func send(ctx context.Context, events chan<- dash.Event, evs ...dash.Event) {
	for _, ev := range evs {
		select {
		case events <- ev:
		case <-ctx.Done():
			return
		}
	}
}

// dashSession reads what the dashboard shows of one session.
type dashSession struct {
	env  *Env
	cfg  config.Config
	info tmux.SessionInfo
	// logRead is how far the event log was read.
	logRead int64
	// stamps are the size and time of the files last read.
	stamps map[string]string
	// roles are the agent panes, by id, as last listed.
	roles map[string]mux.Pane
	// taskLog is the audit log of the team's file store: a change there
	// is read on the next slow look; a GitHub store every tasksPoll.
	taskLog string
}

func newDashSession(env *Env, cfg config.Config, info tmux.SessionInfo) *dashSession {
	return &dashSession{env: env, cfg: cfg, info: info, stamps: map[string]string{}, roles: map[string]mux.Pane{}}
}

// agentPanes are the panes with a role that run.
func (ds *dashSession) agentPanes(panes []mux.Pane) []mux.Pane {
	var out []mux.Pane
	for _, p := range panes {
		if p.Role != "" && !p.Dead {
			out = append(out, p)
		}
	}
	return out
}

// read is the session's panes, the events logged since the last read,
// the queues, the supervisor's and the coordinator's records.
func (ds *dashSession) read(ctx context.Context, panes []mux.Pane) []dash.Event {
	evs := []dash.Event{ds.panes(panes)}
	evs = append(evs, ds.hooks()...)
	evs = append(evs, ds.queues())
	if sv, changed := ds.supervisor(ctx); changed {
		evs = append(evs, dash.SupervisorSeen{Session: ds.info.Name, Supervisor: sv})
	}
	if r, changed := ds.review(); changed {
		evs = append(evs, dash.ReviewSeen{Session: ds.info.Name, Review: r})
	}
	return evs
}

func (ds *dashSession) panes(panes []mux.Pane) dash.PanesSeen {
	ev := dash.PanesSeen{Session: ds.info.Name, StateDir: ds.info.StateDir, At: ds.env.Clock.Now()}
	ds.roles = map[string]mux.Pane{}
	for _, p := range panes {
		if p.Role == "" {
			continue
		}
		ds.roles[p.ID] = p
		kind := p.Agent
		if kind == "" {
			kind = "shell"
		}
		ev.Panes = append(ev.Panes, dash.Pane{ID: p.ID, Role: p.Role, Kind: kind, Dead: p.Dead, DeadStatus: p.DeadStatus})
	}
	return ev
}

// hooks are the events logged since the last read.
func (ds *dashSession) hooks() []dash.Event {
	path := filepath.Join(ds.info.StateDir, state.EventLog)
	end := state.Size(path)
	if end == ds.logRead {
		return nil
	}
	if end < ds.logRead {
		ds.logRead = 0 // a new log
	}
	var out []dash.Event
	observe.Events{Path: path}.Each("", ds.logRead, func(ev hook.Event) bool {
		if ev.Pane != "" {
			out = append(out, dash.HookSeen{Session: ds.info.Name, Event: ev})
		}
		return true
	})
	ds.logRead = end
	return out
}

// screen reads a screen of pane p with its agent's profile.
func (ds *dashSession) screen(p mux.Pane, screen string) dash.ScreenSeen {
	profile := talk.Profile(ds.cfg, p)
	st := observe.Read(profile, p, screen)
	sc := dash.ScreenSeen{Session: ds.info.Name, Pane: p.ID, At: ds.env.Clock.Now(), Busy: st.Busy, Dialog: st.Dialog,
		Ready: st.HasInput && st.Dialog == "" && !st.Menu}
	if st.Dialog != "" {
		sc.Permission = permissionAsked(screen)
	}
	return sc
}

// permissionQuestions are how the agents' approval dialogs ask (AGENTS-
// REFERENCE.md): a dialog under one of them asks a permission, which
// agents without a permission event (Codex) tell only on screen.
var permissionQuestions = []string{
	"Do you want to proceed?", "Do you want to make this edit", "Do you want to create", // claude
	"Would you like to run the following command?", "Would you like to make the following edits?", // codex
	"Allow execution of", // gemini
}

// permissionAsked is the question of the approval dialog on screen, with
// the command it shows when it shows one ("$ cmd"); "" when none is.
func permissionAsked(screen string) string {
	q := ""
	cmd := ""
	for _, line := range strings.Split(screen, "\n") {
		line = strings.Trim(strings.TrimSpace(line), "│ ")
		for _, p := range permissionQuestions {
			if strings.HasPrefix(line, p) {
				q = line
			}
		}
		if c, ok := strings.CutPrefix(line, "$ "); ok && q != "" && cmd == "" {
			cmd = c
		}
	}
	if q != "" && cmd != "" {
		q += " " + cmd
	}
	return q
}

// queues counts the sends and talks that wait for each agent's pane: a
// talk holds its pane's request lock until the answer, a send its pane's
// delivery lock while it types; every other ticket of either waits.
func (ds *dashSession) queues() dash.QueueSeen {
	root, err := ds.env.StateRoot()
	ev := dash.QueueSeen{Session: ds.info.Name, Queued: map[string]int{}}
	if err != nil {
		return ev
	}
	var keys []string
	for id := range ds.roles {
		keys = append(keys, id, "request-"+id)
	}
	n := state.Locker{Dir: deliver.LockDir(root, ds.info.SocketPath)}.Queued(keys...)
	for id := range ds.roles {
		ev.Queued[id] = max(n[id]-1, 0) + max(n["request-"+id]-1, 0)
	}
	return ev
}

// changed says whether the files at paths changed since the last call
// with key (their size and time).
func (ds *dashSession) changed(key string, paths ...string) bool {
	var b strings.Builder
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil {
			fmt.Fprintf(&b, "%d.%d;", st.Size(), st.ModTime().UnixNano())
		} else {
			b.WriteString("-;")
		}
	}
	if ds.stamps[key] == b.String() {
		return false
	}
	ds.stamps[key] = b.String()
	return true
}

// supervisor reads the supervisor's store when it changed.
func (ds *dashSession) supervisor(ctx context.Context) (*dash.Supervisor, bool) {
	dir := SupervisorDir(ds.info.StateDir)
	path := filepath.Join(dir, supervise.StoreFile)
	running := review.Running(dir).Running
	if !ds.changed("supervisor", path, path+"-wal", filepath.Join(dir, review.CoordinatorLock)) {
		return nil, false
	}
	// Through the supervisor's API while it runs; else its records as the
	// last one left them, read-only.
	var src interface {
		Runtimes(context.Context) ([]supervise.Runtime, error)
		Triggers(context.Context, supervise.TriggerFilter) ([]supervise.Trigger, error)
	}
	if running {
		c, err := operatorClient(ds.env, ds.info.StateDir)
		if err != nil {
			return nil, true
		}
		defer c.HTTP.CloseIdleConnections()
		src = c
	} else {
		st, err := supervise.OpenRecords(path)
		if err != nil {
			return nil, true
		}
		defer st.Close()
		src = st
	}
	sv := &dash.Supervisor{Running: running, Runtimes: []dash.Runtime{}, Triggers: []dash.Trigger{}}
	rts, err := src.Runtimes(ctx)
	if err != nil {
		return nil, true
	}
	for _, r := range rts {
		sv.Runtimes = append(sv.Runtimes, dash.Runtime{Role: r.Role, Status: string(r.Status), OperatorBusy: r.OperatorBusy, LastTrigger: r.LastTrigger,
			StalledSince: r.Recovery.Live.StalledAt})
	}
	open, _ := src.Triggers(ctx, supervise.TriggerFilter{Open: true})
	failed, _ := src.Triggers(ctx, supervise.TriggerFilter{Status: supervise.TFailed})
	if len(failed) > 3 {
		failed = failed[len(failed)-3:] // the last ones
	}
	for _, t := range append(open, failed...) {
		sv.Triggers = append(sv.Triggers, dash.Trigger{ID: t.ID, Role: t.Role, Status: string(t.Status), Class: string(t.Class),
			Error: dash.Head(t.Error), Since: t.Updated})
	}
	return sv, true
}

// review reads the coordinator's state when it changed.
func (ds *dashSession) review() (*dash.Review, bool) {
	dir := review.Dir(ds.info.StateDir)
	if !ds.changed("review", filepath.Join(dir, review.StateFile), filepath.Join(dir, review.CoordinatorLock)) {
		return nil, false
	}
	s, err := review.Load(dir)
	if err != nil {
		return nil, true
	}
	r := &dash.Review{State: s.State.String(), Phase: string(s.Phase), Since: s.Since, Iteration: s.Iteration,
		MaxIterations: s.MaxIterations, Reviews: s.Reviews, Note: s.Note, Running: review.Running(dir).Running}
	for _, k := range review.Kinds {
		_, present := s.Evidence[k]
		r.Evidence = append(r.Evidence, dash.Evidence{Kind: string(k), Present: present, Fresh: s.Fresh(k)})
	}
	return r, true
}

// tasks reads the tasks of the team linked to the session's directory;
// nil when none is linked or its store cannot be read.
func (ds *dashSession) tasks(ctx context.Context) *dash.Tasks {
	rec, err := session.ReadRecord(ds.info.StateDir)
	if err != nil || rec.Cwd == "" {
		return nil
	}
	link, err := task.FindLink(rec.Cwd)
	if err != nil {
		return nil
	}
	cfg, _, err := config.Load(ds.env.Getenv, link.Dir)
	if err != nil {
		return nil
	}
	root, err := ds.env.StateRoot()
	if err != nil {
		return nil
	}
	st, err := openTaskStore(ctx, taskStoreOptions{Root: root, Cwd: rec.Cwd, Storage: cfg.PM.Storage,
		StorageSet: cfg.Sources["pm.storage"] != "default", ConfigRepo: cfg.PM.Repo, Env: ds.env.Environ, Clock: ds.env.Clock,
		Warn: func(string) {}})
	if err != nil {
		return nil
	}
	if l, ok := st.(interface{ EventsPath() string }); ok {
		ds.taskLog = l.EventsPath()
		ds.changed("tasks", ds.taskLog)
	}
	team, _ := st.Team(ctx)
	list, err := st.Tasks(ctx, task.Filter{})
	if err != nil {
		return nil
	}
	out := &dash.Tasks{Team: team.Name, Items: []dash.Task{}}
	for _, t := range list {
		out.Items = append(out.Items, dash.Task{ID: t.ID, Title: dash.Head(t.Title), Status: string(t.Status), Assignee: t.Assignee})
	}
	return out
}

// watch sends the session's changes until ctx ends or the session does:
// the panes when tmux says they changed (a window or layout changed, a
// pane died), a screen after its pane printed, the events the agents'
// hooks log when a hook wakes the session, and what has no wake-up of its
// own on a slow look (the team's tasks when their log changed, else every
// tasksPoll). Without a control client, panes and screens are
// read on the slow look too.
func (ds *dashSession) watch(ctx context.Context, events chan<- dash.Event, relist chan<- struct{}) {
	name := ds.info.Name
	env := ds.env
	cc, err := env.Tmux.Control(ctx, name, true)
	if err == nil {
		defer cc.Close()
		// Pane deaths come as %subscription-changed (tmux looks each
		// second); windows and layouts as notifications of their own.
		_, _ = cc.Command(ctx, "refresh-client", "-B", "party-dash:%*:#{pane_dead}-#{pane_pid}")
	}
	var wake <-chan struct{}
	if w, err := state.ListenSession(env.Getenv, ds.info.StateDir); err == nil {
		defer w.Close()
		wake = w.C
	}
	// The pane output is drained apart, so that it never holds up a
	// command's reply on the same connection.
	var (
		mu      sync.Mutex
		printed = map[string]bool{}
	)
	dirty := make(chan struct{}, 1)
	var notes <-chan string
	var done <-chan struct{}
	if cc != nil {
		notes, done = cc.Notifications(), cc.Done()
		go func() { // ends when the control client exits
			for o := range cc.Output() {
				mu.Lock()
				printed[o.Pane] = true
				mu.Unlock()
				select {
				case dirty <- struct{}{}:
				default:
				}
			}
		}()
	}
	capture := func(id string) (string, error) {
		if cc != nil {
			return cc.Capture(ctx, id)
		}
		return env.Tmux.Capture(ctx, id, 0)
	}
	listPanes := func() bool {
		panes, err := env.Tmux.ListPanes(ctx, name)
		if errors.Is(err, mux.ErrNoSession) {
			send(ctx, events, dash.SessionGone{Session: name})
			return false
		}
		if err == nil {
			send(ctx, events, ds.panes(panes), ds.queues())
		}
		return true
	}
	panes, err := env.Tmux.ListPanes(ctx, name)
	if err != nil {
		return
	}
	send(ctx, events, ds.read(ctx, panes)...)
	for _, p := range ds.agentPanes(panes) {
		if s, err := capture(p.ID); err == nil {
			send(ctx, events, ds.screen(p, s))
		}
	}
	send(ctx, events, dash.TasksSeen{Session: name, Tasks: ds.tasks(ctx)})

	var debounce <-chan time.Time
	relistPanes := false
	slow := time.NewTicker(slowPoll)
	defer slow.Stop()
	tasks := time.NewTicker(tasksPoll)
	defer tasks.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-done:
			// The control client went: with its session, or alone
			// (detached, killed). A session still there is watched
			// again from the listing asked for here.
			if listPanes() {
				select {
				case relist <- struct{}{}:
				default:
				}
			}
			return
		case <-dirty:
			if debounce == nil {
				debounce = time.After(screenDebounce)
			}
		case n := <-notes:
			if strings.HasPrefix(n, "%sessions-changed") {
				select {
				case relist <- struct{}{}:
				default:
				}
				continue
			}
			relistPanes = true
			if debounce == nil {
				debounce = time.After(screenDebounce)
			}
		case <-wake:
			send(ctx, events, ds.hooks()...)
			ds.records(ctx, events)
		case <-debounce:
			debounce = nil
			if relistPanes {
				relistPanes = false
				if !listPanes() {
					return
				}
			}
			mu.Lock()
			ids := make([]string, 0, len(printed))
			for id := range printed {
				ids = append(ids, id)
			}
			clear(printed)
			mu.Unlock()
			slices.Sort(ids)
			for _, id := range ids {
				p, ok := ds.roles[id]
				if !ok || p.Dead {
					continue
				}
				if s, err := capture(id); err == nil {
					send(ctx, events, ds.screen(p, s))
				}
			}
		case <-slow.C:
			send(ctx, events, ds.hooks()...)
			ds.records(ctx, events)
			send(ctx, events, ds.queues())
			if ds.taskLog != "" && ds.changed("tasks", ds.taskLog) {
				send(ctx, events, dash.TasksSeen{Session: name, Tasks: ds.tasks(ctx)})
			}
			if cc == nil {
				if !listPanes() {
					return
				}
				for _, p := range ds.roles {
					if s, err := capture(p.ID); err == nil && !p.Dead {
						send(ctx, events, ds.screen(p, s))
					}
				}
			}
		case <-tasks.C:
			send(ctx, events, dash.TasksSeen{Session: name, Tasks: ds.tasks(ctx)})
		}
	}
}

// records sends the supervisor's and the coordinator's records when they
// changed.
func (ds *dashSession) records(ctx context.Context, events chan<- dash.Event) {
	if sv, changed := ds.supervisor(ctx); changed {
		send(ctx, events, dash.SupervisorSeen{Session: ds.info.Name, Supervisor: sv})
	}
	if r, changed := ds.review(); changed {
		send(ctx, events, dash.ReviewSeen{Session: ds.info.Name, Review: r})
	}
}
