package dash

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/supervise"
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

// Tmux is what the feed asks the tmux server: a session's panes, a pane's
// screen, and a control-mode client that tells the session's changes as
// they happen (*tmux.Client is one).
type Tmux interface {
	ListPanes(ctx context.Context, session string) ([]mux.Pane, error)
	Capture(ctx context.Context, id string, history int) (string, error)
	Control(ctx context.Context, session string, output bool) (*tmux.Control, error)
}

// Feed reads what the dashboard shows of the party sessions, as Events:
// once (Snapshot) or as they change (Watch). Its fields are what it reads
// with; core/party fills them in.
type Feed struct {
	Tmux  Tmux
	Clock clock.Clock
	// Getenv is the process's environment: party's state root (the
	// request queues) and the sessions' wake-ups.
	Getenv func(string) string
	// Sessions are the sessions to show, listed again as the server's
	// sessions change.
	Sessions func(ctx context.Context) ([]tmux.SessionInfo, error)
	// Profile is the profile a pane's screen is read with.
	Profile func(p mux.Pane) agent.Profile
	// SupervisorDir is the supervisor's directory in a session's state
	// dir, and SupervisorClient a client of the API of the supervisor
	// that runs for stateDir.
	SupervisorDir    func(stateDir string) string
	SupervisorClient func(stateDir string) (*supervise.Client, error)
	// Tasks opens the store of the team linked from directory cwd.
	Tasks func(ctx context.Context, cwd string) (task.Store, error)
	// Hosts are the other hosts to show, by name (none: this host only),
	// and Host looks at one of them once; it returns within seconds,
	// with the host offline (its Error) when it does not answer.
	// Dests are their SSH destinations, by name. WatchHost follows one
	// of them as it changes, calling seen with each look (offline when
	// it stops answering), until ctx ends.
	Hosts     []string
	Dests     map[string]string
	Host      func(ctx context.Context, name string) Host
	WatchHost func(ctx context.Context, name string, seen func(Host))
}

// Snapshot is the model of sessions read once. A session that went
// meanwhile is left out.
// The other hosts (Hosts) are looked at meanwhile, each on its own.
func (f Feed) Snapshot(ctx context.Context, sessions []tmux.SessionInfo) (Model, error) {
	hosts := make([]Host, len(f.Hosts))
	var wg sync.WaitGroup
	for i, name := range f.Hosts {
		wg.Go(func() { hosts[i] = f.Host(ctx, name) })
	}
	m, err := f.local(ctx, sessions)
	wg.Wait()
	for _, h := range hosts {
		m = Update(m, HostSeen{Host: h})
	}
	return m, err
}

// local is the model of this host's sessions read once.
func (f Feed) local(ctx context.Context, sessions []tmux.SessionInfo) (Model, error) {
	m := Model{Now: f.Clock.Now(), Sessions: []Session{}}
	for _, info := range sessions {
		sf := f.session(info)
		panes, err := f.Tmux.ListPanes(ctx, info.Name)
		if err != nil {
			if errors.Is(err, mux.ErrNoSession) {
				continue
			}
			return m, err
		}
		evs := sf.read(ctx, panes)
		for _, p := range agentPanes(panes) {
			if screen, err := f.Tmux.Capture(ctx, p.ID, 0); err == nil {
				evs = append(evs, sf.screen(p, screen))
			}
		}
		evs = append(evs, TasksSeen{Session: info.Name, Tasks: sf.tasks(ctx)})
		if u, changed := sf.usage(); changed {
			evs = append(evs, u)
		}
		m = Apply(m, f.Clock.Now(), evs...)
	}
	return m, nil
}

// Watch sends events the changes of the sessions, one watcher per
// session (sessionFeed.watch), until ctx ends; it returns once every
// watcher has.
func (f Feed) Watch(ctx context.Context, events chan<- Event) {
	relist := make(chan struct{}, 1)
	// A session's watcher is waited for before its SessionGone is sent:
	// nothing it read last can bring the session back after.
	type watcher struct {
		cancel context.CancelFunc
		done   chan struct{}
	}
	running := map[string]watcher{}
	poll := f.Clock.NewTimer(sessionsPoll)
	defer poll.Stop()
	// soon is the channel of soonTimer once a relist armed it.
	soonTimer := f.Clock.NewTimer(time.Second)
	soonTimer.Stop()
	defer soonTimer.Stop()
	var soon <-chan time.Time
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, name := range f.Hosts {
		wg.Go(func() { // ends with ctx
			f.WatchHost(ctx, name, func(h Host) { send(ctx, events, HostSeen{Host: h}) })
		})
	}
	for {
		infos, err := f.Sessions(ctx)
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
				sf := f.session(info)
				wg.Add(1)
				go func() { // ends with sctx or the session
					defer wg.Done()
					defer close(w.done)
					sf.watch(sctx, events, relist)
				}()
			}
			for name, w := range running {
				if !seen[name] {
					w.cancel()
					<-w.done
					delete(running, name)
					send(ctx, events, SessionGone{Session: name})
				}
			}
		}
		poll.Reset(sessionsPoll)
		select {
		case <-ctx.Done():
			return
		case <-relist:
			// Now, and once more in a second: a new session gets its
			// party options just after tmux announced it.
			soonTimer.Reset(time.Second)
			soon = soonTimer.C()
		case <-soon:
			soon = nil
		case <-poll.C():
		}
	}
}

// send sends evs in turn, until ctx ends.
func send(ctx context.Context, events chan<- Event, evs ...Event) {
	for _, ev := range evs {
		select {
		case events <- ev:
		case <-ctx.Done():
			return
		}
	}
}
