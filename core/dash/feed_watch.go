package dash

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/state"
)

// watch sends the session's changes until ctx ends or the session does:
// the panes when tmux says they changed (a window or layout changed, a
// pane died), a screen after its pane printed, the events the agents'
// hooks log when a hook wakes the session, and what has no wake-up of its
// own on a slow look (the team's tasks when their log changed, else every
// tasksPoll). Without a control client, panes and screens are
// read on the slow look too.
func (sf *sessionFeed) watch(ctx context.Context, events chan<- Event, relist chan<- struct{}) {
	name := sf.info.Name
	tm := sf.feed.Tmux
	cc, err := tm.Control(ctx, name, true)
	if err == nil {
		defer cc.Close()
		// Pane deaths come as %subscription-changed (tmux looks each
		// second); windows and layouts as notifications of their own.
		_, _ = cc.Command(ctx, "refresh-client", "-B", "party-dash:%*:#{pane_dead}-#{pane_pid}")
	}
	var wake <-chan struct{}
	if w, err := state.ListenSession(sf.feed.Getenv, sf.info.StateDir); err == nil {
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
		return tm.Capture(ctx, id, 0)
	}
	listPanes := func() bool {
		panes, err := tm.ListPanes(ctx, name)
		if errors.Is(err, mux.ErrNoSession) {
			send(ctx, events, SessionGone{Session: name})
			return false
		}
		if err == nil {
			send(ctx, events, sf.panes(panes), sf.queues())
		}
		return true
	}
	panes, err := tm.ListPanes(ctx, name)
	if err != nil {
		return
	}
	send(ctx, events, sf.read(ctx, panes)...)
	for _, p := range agentPanes(panes) {
		if s, err := capture(p.ID); err == nil {
			send(ctx, events, sf.screen(p, s))
		}
	}
	send(ctx, events, TasksSeen{Session: name, Tasks: sf.tasks(ctx)})

	clk := sf.feed.Clock
	debounceTimer := clk.NewTimer(screenDebounce)
	debounceTimer.Stop()
	defer debounceTimer.Stop()
	var debounce <-chan time.Time
	arm := func() {
		if debounce == nil {
			debounceTimer.Reset(screenDebounce)
			debounce = debounceTimer.C()
		}
	}
	relistPanes := false
	slow := clk.NewTicker(slowPoll)
	defer slow.Stop()
	tasks := clk.NewTicker(tasksPoll)
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
			arm()
		case n := <-notes:
			if strings.HasPrefix(n, "%sessions-changed") {
				select {
				case relist <- struct{}{}:
				default:
				}
				continue
			}
			relistPanes = true
			arm()
		case <-wake:
			sf.woke()
			send(ctx, events, sf.hooks()...)
			sf.records(ctx, events)
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
				p, ok := sf.roles[id]
				if !ok || p.Dead {
					continue
				}
				if s, err := capture(id); err == nil {
					send(ctx, events, sf.screen(p, s))
				}
			}
		case <-slow.C():
			send(ctx, events, sf.hooks()...)
			sf.records(ctx, events)
			if q, changed := sf.queuesChanged(); changed {
				send(ctx, events, q)
			}
			if sf.taskLog != "" && sf.changed("tasks", sf.taskLog) {
				send(ctx, events, TasksSeen{Session: name, Tasks: sf.tasks(ctx)})
			}
			if cc == nil {
				if !listPanes() {
					return
				}
				for _, p := range sf.roles {
					if s, err := capture(p.ID); err == nil && !p.Dead {
						send(ctx, events, sf.screen(p, s))
					}
				}
			}
		case <-tasks.C():
			send(ctx, events, TasksSeen{Session: name, Tasks: sf.tasks(ctx)})
		}
	}
}
