package supervise

import (
	"context"
	"reflect"
	"time"
)

// fullScanEvery is how often the runtimes are scanned through at the
// least, whatever the panes' mark says.
const fullScanEvery = time.Minute

// scan registers the runtimes tmux shows, and reconciles every known one
// with what tmux shows of it: offline, back, drifted, restarted, failed.
// It reads tmux and the records through only when something it reads may
// have changed since it last did: tmux told of a change (scanNow), a
// runtime's look is due (scanDue), the panes' mark (PanesMarker) or the
// store moved, or fullScanEvery passed; an idle session's scan is one
// listing of its panes.
func (l *Loop) scan(ctx context.Context) (err error) {
	l.lastScan = l.Clock.Now()
	gen := l.Store.generation()
	mark, marked := "", false
	if m, ok := l.Effects.(PanesMarker); ok {
		mark, marked = m.PanesMark(ctx)
	}
	if marked && !l.scanNow && mark == l.panesMark && gen == l.storeGen && l.lastScan.Sub(l.lastFull) < fullScanEvery &&
		(l.scanDue.IsZero() || l.now().Before(l.scanDue)) {
		return nil
	}
	l.scanNow, l.lastFull, l.panesMark = false, l.lastScan, ""
	defer func() {
		if err == nil && marked { // a scan that failed is done again
			l.panesMark, l.storeGen = mark, gen
		}
	}()
	// The records first, then tmux: a runtime stopped in between (its
	// pane killed, then its record deleted) is then known and stopping,
	// not registered again from a pane tmux showed before the kill.
	known, err := l.runtimes(ctx)
	if err != nil {
		return err
	}
	seen, err := l.Effects.Scan(ctx)
	if err != nil {
		return err
	}
	now := l.now()
	l.scanDue = time.Time{}
	// A runtime whose trigger is being resumed or spawned for is the
	// fallback's: no restart races it.
	held := map[string]bool{}
	defer func() {
		// An offline runtime is looked at again when its restart is due
		// (one the fallback holds when the fallback reports: its restart
		// time may be long past), one that runs something else than its
		// agent when its grace ends.
		for _, rt := range known { // as this scan left them
			var due time.Time
			switch {
			case rt.Status == Offline && held[rt.Role]:
				continue
			case rt.Status == Offline:
				due = rt.Recovery.OfflineSince.Add(l.Recovery.RestartAfter)
			case rt.Status != Failed && rt.Status != Stopping && !rt.Recovery.NotAgentSince.IsZero():
				due = rt.Recovery.NotAgentSince.Add(l.Recovery.NotAgentGrace)
			default:
				continue
			}
			if l.scanDue.IsZero() || due.Before(l.scanDue) {
				l.scanDue = due
			}
		}
	}()
	if open, err := l.Store.Triggers(ctx, TriggerFilter{Open: true}); err == nil {
		for _, t := range open {
			if t.Status == TFallbackResume || t.Status == TSpawnRecovery {
				held[t.Role] = true
			}
		}
	}
	byRole := map[string]Seen{}
	for _, s := range seen {
		byRole[s.Role] = s
		if _, ok := known[s.Role]; ok {
			continue
		}
		rt := s.Runtime
		rt.Updated, rt.Recovery.LastSign = now, now // its agent just started
		if err := l.Store.PutRuntime(ctx, rt); err != nil {
			return err
		}
		if err := l.Store.Audit(ctx, AuditEvent{At: now, Kind: AuditRuntime, Role: rt.Role, Result: rt.Pane, Detail: rt.Target}); err != nil {
			return err
		}
		l.Metrics.RuntimeStatus(rt.Role, rt.Workspace, string(rt.Status))
		known[rt.Role] = rt
	}
	for role, rt := range known {
		s, found := byRole[role]
		sight := Sight{Found: found, Dead: s.Status == Offline, Pane: s.Pane, PID: s.PID, Target: s.Target, RunsAgent: s.RunsAgent, Held: held[role]}
		next, acts := Reconcile(l.Recovery, rt, sight, now)
		if found {
			if s.AgentSession != "" {
				next.AgentSession = s.AgentSession
			}
			next.Agent, next.Workspace, next.Window, next.Tools = s.Agent, s.Workspace, s.Window, s.Tools
			if s.TokenHash != "" {
				next.TokenHash = s.TokenHash
			}
		}
		for _, a := range acts {
			if a.Kind != ActRestart {
				continue
			}
			l.Metrics.Restart(role, rt.Workspace)
			hash, err := l.Effects.Restart(ctx, next, a.Result == RestartResume)
			if err != nil {
				l.logf("restart %s: %v", role, err)
				acts = append(acts, audit(AuditRestartFailed, "", l.Redact.Clean(err.Error())))
				continue
			}
			// Its new process is not drift; a fresh one is a new session,
			// whose first trigger carries its thread's summary.
			next.TokenHash, next.PID = hash, 0
			if a.Result != RestartResume {
				next.AgentSession, next.Recovery.Summarize = "", true
			}
			l.turnsEnded(ctx, role, now)
		}
		if reflect.DeepEqual(next, rt) {
			continue
		}
		next.Updated = now
		if err := l.Store.PutRuntime(ctx, next); err != nil {
			return err
		}
		known[role] = next
		for _, a := range acts {
			if a.Kind != ActAudit {
				continue
			}
			if a.Audit == AuditDrift {
				l.Metrics.Drift(role, rt.Workspace)
			}
			l.logf("runtime %s: %s %s %s", role, a.Audit, a.Result, a.Detail)
			if err := l.Store.Audit(ctx, AuditEvent{At: now, Kind: a.Audit, Role: role, Result: a.Result, Detail: a.Detail}); err != nil {
				return err
			}
		}
		if next.Status != rt.Status {
			l.Metrics.RuntimeStatus(role, next.Workspace, string(next.Status))
		}
	}
	return nil
}

// turnsEnded ends the waits for the turns of role's agent, which was
// restarted: the turns died with it. A wait that saw the pane dead says
// so itself; one that did not (the pane was respawned between two of its
// looks) would wait for an answer that never comes, and the runtime's
// later triggers behind it. Such a trigger fails PANE_DEAD, as when the
// wait saw it.
func (l *Loop) turnsEnded(ctx context.Context, role string, at time.Time) {
	open, err := l.Store.Triggers(ctx, TriggerFilter{Open: true, Role: role})
	if err != nil {
		l.logf("runtime %s: %v", role, err)
		return
	}
	for _, t := range open {
		if t.Status != Delivered && t.Status != TRetrying && t.Status != Acked {
			continue
		}
		l.mu.Lock()
		w := l.workers[t.ID]
		l.mu.Unlock()
		if w != nil {
			if w.cancel == nil {
				continue // not a wait
			}
			w.cancel()
			select {
			case <-w.done:
			case <-ctx.Done():
				return
			}
			l.finish(t.ID, w)
		}
		l.apply(ctx, t, Event{Kind: EvTurnError, At: at, Class: PaneDead, Err: "its agent was restarted during the turn"})
	}
}

// learnSession keeps the agent's own session id that s names in rt's
// record as it stands now.
func (l *Loop) learnSession(ctx context.Context, rt Runtime, s Sighting) {
	if s.Session == "" || s.Session == rt.AgentSession {
		return
	}
	if fresh, err := l.Store.Runtime(ctx, rt.Role); err == nil {
		rt = fresh
	}
	if s.Session != rt.AgentSession {
		now := l.now()
		rt.AgentSession, rt.Updated, rt.Recovery.LastSign = s.Session, now, now
		_ = l.Store.PutRuntime(ctx, rt)
	}
}

// signEvery is how much later than the last recorded sign of life a new
// one is written: staleness is counted in hours.
const signEvery = time.Minute

// isSign says whether ev shows rt's agent session at work: an
// acknowledgement of its own, its answer, its resumed session's answer.
// A heartbeat is kept apart (Runtime.LastHeartbeat).
func isSign(ev Event) bool {
	switch ev.Kind {
	case EvAck:
		return ev.Source != AckHeartbeat
	case EvSent:
		return ev.Acked
	case EvAnswer, EvResumed:
		return true
	}
	return false
}

// sign records a sign of life of role's agent session at at
// (Recovery.LastSign), onto the record as it stands now.
func (l *Loop) sign(ctx context.Context, role string, at time.Time) {
	rt, err := l.Store.Runtime(ctx, role)
	if err != nil || at.Sub(rt.Recovery.LastSign) < signEvery {
		return
	}
	rt.Recovery.LastSign = at
	if err := l.Store.PutRuntime(ctx, rt); err != nil {
		l.logf("runtime %s: %v", role, err)
	}
}

// paneGone says whether rt's pane is dead or gone and rt will be
// restarted (restarting).
func (l *Loop) paneGone(ctx context.Context, rt Runtime) bool {
	class := l.Effects.Probe(ctx, rt).Class
	return (class == PaneDead || class == TargetNotFound) && l.restarting(rt)
}

// restarting says whether rt, whose pane died or went, will be restarted
// (or failed, and its triggers then) by reconciliation, and has it looked
// at soon; false for a runtime failed or being stopped.
func (l *Loop) restarting(rt Runtime) bool {
	if rt.Status == Failed || rt.Status == Stopping {
		return false
	}
	if soon := l.now().Add(200 * time.Millisecond); l.scanDue.IsZero() || soon.Before(l.scanDue) {
		l.scanDue = soon
	}
	return true
}
