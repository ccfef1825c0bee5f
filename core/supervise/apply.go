package supervise

import (
	"context"
	"errors"
)

// One step of a trigger: the look before its delivery, Step's answer
// saved with its audit events, the actions done, and what a step counts
// (metrics, the thread's safeguards).

// probe looks at rt for t: its thread, the rate limits, the operator.
func (l *Loop) probe(ctx context.Context, rt Runtime, t Trigger) Trigger {
	ev := l.probeEvent(ctx, rt, t)
	if (ev.Class == TargetNotFound || ev.Class == PaneDead) && l.restarting(rt) {
		return t // it reached no agent: it waits
	}
	return l.apply(ctx, t, ev)
}

// apply steps t with ev, saves the result with its audit events, and does
// its actions; it returns t as it now stands.
func (l *Loop) apply(ctx context.Context, t Trigger, ev Event) Trigger {
	ev.Err = l.Redact.Clean(ev.Err)
	next, acts, err := Step(l.Policy, t, ev)
	if errors.Is(err, ErrStale) {
		return t
	}
	if err != nil {
		l.logf("trigger %s: %v", t.ID, err)
		return t
	}
	var text string
	prefaced := false
	rts, rerr := l.runtimes(ctx)
	rt, hasRT := rts[t.Role]
	for _, a := range acts {
		if a.Kind != ActSend {
			continue
		}
		if rerr != nil || !hasRT {
			next, acts, _ = Step(l.Policy, t, Event{Kind: EvProbed, At: ev.At, Class: TargetNotFound, Err: "its runtime is gone"})
			break
		}
		if PrefaceDue(rt, next) {
			// The first trigger of an agent restarted fresh: its thread's
			// summary first; the runtime's flag goes once it is saved.
			next.Preface, prefaced = l.summary(ctx, next.Thread, next.ID), true
		}
		// The turn starts before the send, and is saved with it: after a
		// crash the wait finds it again.
		var turn *TurnRecord
		if text, turn, err = l.Effects.Prepare(ctx, rt, Envelope(next)); err != nil {
			if (t.Status == Queued || t.Status == TDeferred) && l.paneGone(ctx, rt) {
				// Its pane died or went since the look: nothing was
				// pasted; the trigger waits for the runtime's restart
				// where it stood, as after a look that found it so.
				l.logf("trigger %s: not sent, its pane is gone (%v); it waits for the restart", t.ID, err)
				return t
			}
			next, acts, _ = Step(l.Policy, next, Event{Kind: EvSendFailed, At: ev.At, Class: SendKeysError, Err: err.Error()})
			break
		}
		next.Turn = turn
	}
	var msg *Message
	if next.Status == Completed && next.AckSource == AckResume && next.Answer != nil {
		// No pane shows a fallback's answer: it is a message of the thread.
		msg = &Message{Thread: next.Thread, From: next.Role, Text: *next.Answer, At: ev.At}
	}
	if err := l.Store.SaveTriggerWith(ctx, next, t.Status, string(ev.Kind), msg, audits(next, acts)...); err != nil {
		// Nothing of the step is done: a send's report is reconciled with
		// what the agent shows by the next pass (move), as after a crash.
		l.logf("trigger %s: save %s -> %s: %v", t.ID, t.Status, next.Status, err)
		l.Metrics.StoreError()
		return t
	}
	if t.Status != next.Status {
		l.logf("trigger %s: %s -> %s (%s)", t.ID, t.Status, next.Status, ev.Kind)
	}
	if prefaced {
		l.summarized(ctx, t.Role)
	}
	if isSign(ev) {
		l.sign(ctx, t.Role, ev.At)
	}
	l.count(rt, next, acts)
	for _, a := range acts {
		switch a.Kind {
		case ActProbe:
			if hasRT {
				return l.probe(ctx, rt, next)
			}
		case ActSend:
			l.send(ctx, rt, next, text)
		case ActAwait:
			l.await(ctx, rt, next)
		case ActResume:
			l.resume(ctx, rt, next)
		case ActSpawn:
			l.spawn(ctx, rt, next)
		}
	}
	if next.Status == Completed {
		l.completed(ctx, next)
		if hasRT && rt.AgentSession == "" && next.AckSource != AckResume {
			// A turn too quick for a look while acked: the agent's session
			// (Codex's is only in its rollout) is learnt now.
			l.learnSession(ctx, rt, l.Effects.Look(ctx, rt, next))
		}
	}
	return next
}

// ahead is open, oldest first, with the forced triggers of a runtime that
// has one held for a spent budget moved before the others (until they are
// done): the operator's override does not wait for a budget.
func ahead(open []Trigger) []Trigger {
	held := map[string]bool{}
	for _, t := range open {
		if t.Status == TDeferred && t.Class == BudgetExceeded {
			held[t.Role] = true
		}
	}
	if len(held) == 0 {
		return open
	}
	out := make([]Trigger, 0, len(open))
	for _, t := range open {
		if held[t.Role] && t.Force {
			out = append(out, t)
		}
	}
	for _, t := range open {
		if !held[t.Role] || !t.Force {
			out = append(out, t)
		}
	}
	return out
}

// probeEvent is the EvProbed of a look at rt for t.
func (l *Loop) probeEvent(ctx context.Context, rt Runtime, t Trigger) Event {
	now := l.now()
	if th, err := l.Store.Thread(ctx, t.Thread); err == nil && th.Blocked {
		return Event{Kind: EvProbed, At: now, Class: ThreadBlocked, Err: th.BlockedWhy}
	}
	if until, why, err := rateLimit(ctx, l.Store, l.Limits, now, rt.Role, t.Thread); err == nil && !until.IsZero() {
		return Event{Kind: EvProbed, At: now, Class: RateLimited, Until: until, Err: why}
	}
	if b, ok := l.Effects.(Budgeter); ok {
		if why := b.OverBudget(ctx, rt); why != "" {
			return Event{Kind: EvProbed, At: now, Class: BudgetExceeded, Err: why}
		}
	}
	p := l.Effects.Probe(ctx, rt)
	return Event{Kind: EvProbed, At: now, Class: p.Class, Err: p.Why, Held: p.Held}
}

// count feeds the metrics with what a step did.
func (l *Loop) count(rt Runtime, t Trigger, acts []Action) {
	m := l.Metrics
	if m == nil {
		return
	}
	ws := rt.Workspace
	for _, a := range acts {
		switch a.Kind {
		case ActSend:
			m.Attempt(t.Role, ws)
		case ActAudit:
			switch a.Audit {
			case AuditSent:
				m.Delivered(t.Role, ws, t.DeliveredAt.Sub(t.Created))
			case AuditDeferred:
				m.Deferred(t.Role, ws)
			case AuditRetry:
				m.Retry(t.Role, ws)
			case AuditAck:
				m.Acked(t.Role, ws, t.AckedAt.Sub(t.DeliveredAt))
			case AuditFailed:
				if t.Class == AckTimeout {
					m.Timeout(t.Role, ws)
				}
				m.Failed(t.Role, ws, string(t.Class))
			}
		}
	}
}

// completed counts the turn against its thread's safeguards.
func (l *Loop) completed(ctx context.Context, t Trigger) {
	th, err := l.Store.Thread(ctx, t.Thread)
	if errors.Is(err, ErrNotFound) {
		th, err = Thread{ID: t.Thread, Created: t.Created}, nil
	}
	if err != nil {
		l.logf("thread %s: %v", t.Thread, err)
		return
	}
	was := th.Blocked
	th = ThreadAfter(l.Limits, th, t)
	if err := l.Store.PutThread(ctx, th); err != nil {
		l.logf("thread %s: %v", t.Thread, err)
		return
	}
	if th.Blocked && !was {
		_ = l.Store.Audit(ctx, AuditEvent{At: l.now(), Kind: AuditBlocked, Trigger: t.ID, Role: t.Role, Thread: th.ID, Result: string(ThreadBlocked), Detail: th.BlockedWhy})
	}
}
