package dash

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/observe"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/spend"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/task"
	"github.com/partyhq/party/core/tmux"
)

// sessionFeed reads what the dashboard shows of one session.
type sessionFeed struct {
	feed Feed
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
	// branches are the worktree branches of the panes that run in one,
	// by pane id, read from the team's record for the panes of paneIDs.
	branches map[string]string
	paneIDs  string
	// tokens are what each role spent, as last read; usageRead when, and
	// usageUntil how long after an agent's hook woke the session its
	// spending is read at every look (usageDue).
	tokens                map[string]int64
	usageRead, usageUntil time.Time
	// queued is what waits on each pane's delivery lock, as last sent.
	queued map[string]int
}

func (f Feed) session(info tmux.SessionInfo) *sessionFeed {
	return &sessionFeed{feed: f, info: info, stamps: map[string]string{}, roles: map[string]mux.Pane{}}
}

// agentPanes are the panes with a role that run.
func agentPanes(panes []mux.Pane) []mux.Pane {
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
func (sf *sessionFeed) read(ctx context.Context, panes []mux.Pane) []Event {
	evs := []Event{sf.panes(panes)}
	evs = append(evs, sf.hooks()...)
	evs = append(evs, sf.queues())
	if sv, changed := sf.supervisor(ctx); changed {
		evs = append(evs, SupervisorSeen{Session: sf.info.Name, Supervisor: sv})
	}
	if r, changed := sf.review(); changed {
		evs = append(evs, ReviewSeen{Session: sf.info.Name, Review: r})
	}
	return evs
}

// panes is the session's panes with a role, which it keeps as its roles.
func (sf *sessionFeed) panes(panes []mux.Pane) PanesSeen {
	ev := PanesSeen{Session: sf.info.Name, StateDir: sf.info.StateDir, At: sf.feed.Clock.Now()}
	sf.roles = map[string]mux.Pane{}
	for _, p := range panes {
		if p.Role == "" {
			continue
		}
		sf.roles[p.ID] = p
		kind := p.Agent
		if kind == "" {
			kind = "shell"
		}
		ev.Panes = append(ev.Panes, Pane{ID: p.ID, Role: p.Role, Kind: kind, Dead: p.Dead, DeadStatus: p.DeadStatus})
	}
	sf.readBranches(ev.Panes)
	for i, p := range ev.Panes {
		ev.Panes[i].Branch = sf.branches[p.ID]
	}
	return ev
}

// readBranches reads the worktree branches of the team's panes from its
// record when the panes are not those it was read for.
func (sf *sessionFeed) readBranches(panes []Pane) {
	var ids strings.Builder
	for _, p := range panes {
		ids.WriteString(p.ID + " ")
	}
	if ids.String() == sf.paneIDs {
		return
	}
	sf.paneIDs, sf.branches = ids.String(), map[string]string{}
	rec, err := session.ReadRecord(sf.info.StateDir)
	if err != nil {
		return
	}
	for _, p := range rec.Panes {
		if p.Branch != "" {
			sf.branches[p.ID] = p.Branch
		}
	}
}

// hooks are the events logged since the last read.
func (sf *sessionFeed) hooks() []Event {
	path := filepath.Join(sf.info.StateDir, state.EventLog)
	end := state.Size(path)
	if end == sf.logRead {
		return nil
	}
	if end < sf.logRead {
		sf.logRead = 0 // a new log
	}
	var out []Event
	observe.Events{Path: path}.Each("", sf.logRead, func(ev hook.Event) bool {
		if ev.Pane != "" {
			out = append(out, HookSeen{Session: sf.info.Name, Event: ev})
		}
		return true
	})
	sf.logRead = end
	return out
}

// screen reads a screen of pane p with its agent's profile.
func (sf *sessionFeed) screen(p mux.Pane, screen string) ScreenSeen {
	st := observe.Read(sf.feed.Profile(p), p, screen)
	sc := ScreenSeen{Session: sf.info.Name, Pane: p.ID, At: sf.feed.Clock.Now(), Busy: st.Busy, Dialog: st.Dialog,
		Ready: st.HasInput && st.Dialog == "" && !st.Menu}
	if st.Dialog != "" {
		sc.Permission = agent.PermissionAsked(screen)
	}
	return sc
}

// queues counts the sends and talks that wait for each agent's pane: a
// talk holds its pane's request lock until the answer, a send its pane's
// delivery lock while it types; every other ticket of either waits.
func (sf *sessionFeed) queues() QueueSeen {
	root, err := state.Root(sf.feed.Getenv)
	ev := QueueSeen{Session: sf.info.Name, Queued: map[string]int{}}
	if err != nil {
		return ev
	}
	var keys []string
	for id := range sf.roles {
		keys = append(keys, id, "request-"+id)
	}
	n := state.Locker{Dir: deliver.LockDir(root, sf.info.SocketPath)}.Queued(keys...)
	for id := range sf.roles {
		ev.Queued[id] = max(n[id]-1, 0) + max(n["request-"+id]-1, 0)
	}
	sf.queued = ev.Queued
	return ev
}

// queuesChanged is queues when they differ from the last ones sent: an
// event the model takes redraws the dashboard, so an idle one is redrawn
// only by its own clock (program.tick).
func (sf *sessionFeed) queuesChanged() (QueueSeen, bool) {
	last := sf.queued
	ev := sf.queues()
	return ev, !maps.Equal(ev.Queued, last)
}

// changed says whether the files at paths changed since the last call
// with key (their size and time).
func (sf *sessionFeed) changed(key string, paths ...string) bool {
	var b strings.Builder
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil {
			fmt.Fprintf(&b, "%d.%d;", st.Size(), st.ModTime().UnixNano())
		} else {
			b.WriteString("-;")
		}
	}
	if sf.stamps[key] == b.String() {
		return false
	}
	sf.stamps[key] = b.String()
	return true
}

// supervisor reads the supervisor's store when it changed.
func (sf *sessionFeed) supervisor(ctx context.Context) (*Supervisor, bool) {
	dir := sf.feed.SupervisorDir(sf.info.StateDir)
	path := filepath.Join(dir, supervise.StoreFile)
	if !sf.changed("supervisor", append([]string{path, path + "-wal"}, daemon.LockPaths(dir)...)...) {
		return nil, false
	}
	running := daemon.Running(dir).Running
	// Through the supervisor's API while it runs; else its records as the
	// last one left them, read-only.
	var src interface {
		Runtimes(context.Context) ([]supervise.Runtime, error)
		Triggers(context.Context, supervise.TriggerFilter) ([]supervise.Trigger, error)
	}
	if running {
		c, err := sf.feed.SupervisorClient(sf.info.StateDir)
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
	sv := &Supervisor{Running: running, Runtimes: []Runtime{}, Triggers: []Trigger{}}
	rts, err := src.Runtimes(ctx)
	if err != nil {
		return nil, true
	}
	for _, r := range rts {
		sv.Runtimes = append(sv.Runtimes, Runtime{Role: r.Role, Status: string(r.Status), OperatorBusy: r.OperatorBusy, LastTrigger: r.LastTrigger,
			StalledSince: r.Recovery.Live.StalledAt})
	}
	open, _ := src.Triggers(ctx, supervise.TriggerFilter{Open: true})
	failed, _ := src.Triggers(ctx, supervise.TriggerFilter{Status: supervise.TFailed})
	if len(failed) > 3 {
		failed = failed[len(failed)-3:] // the last ones
	}
	for _, t := range append(open, failed...) {
		sv.Triggers = append(sv.Triggers, Trigger{ID: t.ID, Role: t.Role, Status: string(t.Status), Class: string(t.Class),
			Error: Head(t.Error), Since: t.Updated})
	}
	return sv, true
}

// usageAfterWake is how long after an agent's hook woke the session its
// spending is read at every look: an agent writes its usage as its turn
// ends, Claude its transcript a moment after its Stop hook. usageEvery is
// the backstop for an agent with no hook (Codex's notify comes at a
// turn's end too).
const (
	usageAfterWake = 5 * time.Second
	usageEvery     = 30 * time.Second
)

// woke says an agent's hook woke the session: its spending is read for
// usageAfterWake.
func (sf *sessionFeed) woke() { sf.usageUntil = sf.feed.Clock.Now().Add(usageAfterWake) }

// usageDue says whether the spending is read at this look: opening the
// ledger and scanning the agents' records was most of an idle
// dashboard's CPU when done every slowPoll.
func (sf *sessionFeed) usageDue() bool {
	now := sf.feed.Clock.Now()
	if now.Before(sf.usageUntil) || now.Sub(sf.usageRead) >= usageEvery {
		sf.usageRead = now
		return true
	}
	return false
}

// usage reads what each role spent from the session's spend ledger
// (core/spend), which reads only what the agents' records gained since;
// changed says it differs from the last reading.
func (sf *sessionFeed) usage() (UsageSeen, bool) {
	ev := UsageSeen{Session: sf.info.Name, Tokens: map[string]int64{}}
	rec, err := session.ReadRecord(sf.info.StateDir)
	if err != nil {
		return ev, false
	}
	l := spend.TeamLedger(sf.info.StateDir, hook.CodexHome(sf.feed.Getenv), rec.PaneRoles())
	rs, err := l.ScanSums(time.Time{})
	if err != nil {
		return ev, false
	}
	for _, r := range rs {
		ev.Tokens[r.Role] += r.Total()
	}
	if maps.Equal(ev.Tokens, sf.tokens) {
		return ev, false
	}
	sf.tokens = ev.Tokens
	return ev, true
}

// review reads the coordinator's state when it changed.
func (sf *sessionFeed) review() (*Review, bool) {
	dir := review.Dir(sf.info.StateDir)
	if !sf.changed("review", append([]string{filepath.Join(dir, review.StateFile)}, daemon.LockPaths(dir)...)...) {
		return nil, false
	}
	s, err := review.Load(dir)
	if err != nil {
		return nil, true
	}
	r := &Review{State: s.State.String(), Phase: string(s.Phase), Since: s.Since, Iteration: s.Iteration,
		MaxIterations: s.MaxIterations, Reviews: s.Reviews, Note: s.Note, Running: daemon.Running(dir).Running}
	for _, k := range review.Kinds {
		_, present := s.Evidence[k]
		r.Evidence = append(r.Evidence, Evidence{Kind: string(k), Present: present, Fresh: s.Fresh(k)})
	}
	return r, true
}

// tasks reads the tasks of the team linked to the session's directory;
// nil when none is linked or its store cannot be read.
func (sf *sessionFeed) tasks(ctx context.Context) *Tasks {
	rec, err := session.ReadRecord(sf.info.StateDir)
	if err != nil || rec.Cwd == "" {
		return nil
	}
	st, err := sf.feed.Tasks(ctx, rec.Cwd)
	if err != nil {
		return nil
	}
	if l, ok := st.(interface{ EventsPath() string }); ok {
		sf.taskLog = l.EventsPath()
		sf.changed("tasks", sf.taskLog)
	}
	team, _ := st.Team(ctx)
	list, err := st.Tasks(ctx, task.Filter{})
	if err != nil {
		return nil
	}
	out := &Tasks{Team: team.Name, Items: []Task{}}
	for _, t := range list {
		out.Items = append(out.Items, Task{ID: t.ID, Title: Head(t.Title), Status: string(t.Status), Assignee: t.Assignee})
	}
	return out
}

// records sends the supervisor's and the coordinator's records when they
// changed, and what the agents spent when it may have (usageDue).
func (sf *sessionFeed) records(ctx context.Context, events chan<- Event) {
	if sv, changed := sf.supervisor(ctx); changed {
		send(ctx, events, SupervisorSeen{Session: sf.info.Name, Supervisor: sv})
	}
	if sf.usageDue() {
		if u, changed := sf.usage(); changed {
			send(ctx, events, u)
		}
	}
	if r, changed := sf.review(); changed {
		send(ctx, events, ReviewSeen{Session: sf.info.Name, Review: r})
	}
}
