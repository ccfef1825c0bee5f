package supervise

import (
	"context"
	"time"
)

// forwardResult is a forward's report on outbox entry o.
type forwardResult struct {
	o Outbound
	r ForwardReport
}

// forwardPolicy is the outbox's retry policy: l.ForwardPolicy, else the
// default.
func (l *Loop) forwardPolicy() ForwardPolicy {
	if l.ForwardPolicy == (ForwardPolicy{}) {
		return DefaultForwardPolicy
	}
	return l.ForwardPolicy
}

// forward starts the forward of each host's oldest pending outbox entry
// that is due, one per host at a time, so that a host gets its messages
// in the order they were sent, and notes when the first of the others is
// due (outboxNext). The try is saved (StepForward) before the
// forward's worker starts; the worker's goroutine returns when the
// forward returns (bounded by ssh's timeouts and the API client's) or
// ctx ends, and its report is applied by forwarded.
func (l *Loop) forward(ctx context.Context) {
	l.outboxNext = time.Time{}
	if l.Forward == nil {
		return
	}
	heads, err := l.outboxHeads(ctx)
	if err != nil {
		if ctx.Err() == nil {
			l.logf("outbox: %v", err)
		}
		return
	}
	now := l.now()
	for _, o := range heads {
		n, acts, err := StepForward(l.forwardPolicy(), o, ForwardEvent{Kind: FwTry, At: now})
		if err != nil || len(acts) == 0 || acts[0].Kind != ActForward {
			if l.outboxNext.IsZero() || o.NextAt.Before(l.outboxNext) {
				l.outboxNext = o.NextAt // not due yet
			}
			continue
		}
		if err := l.Store.SaveOutbound(ctx, n); err != nil {
			l.logf("outbox entry %s: %v", o.ID, err)
			continue
		}
		l.mu.Lock()
		l.sending[n.Host] = true
		l.mu.Unlock()
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			r := l.Forward.Forward(ctx, n)
			select {
			case l.forwards <- forwardResult{o: n, r: r}:
			case <-ctx.Done():
			}
		}()
	}
}

// outboxHeads are the oldest pending outbox entry of each host that has
// no forward under way.
func (l *Loop) outboxHeads(ctx context.Context) ([]Outbound, error) {
	pending, err := l.Store.Pending(ctx)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[string]bool{}
	var heads []Outbound
	for _, o := range pending {
		if seen[o.Host] {
			continue
		}
		seen[o.Host] = true
		if !l.sending[o.Host] {
			heads = append(heads, o)
		}
	}
	return heads, nil
}

// forwarded applies a forward's report to its entry, with its audit
// events, and lets the host's next entry go.
func (l *Loop) forwarded(ctx context.Context, fr forwardResult) {
	l.mu.Lock()
	delete(l.sending, fr.o.Host)
	l.mu.Unlock()
	o, err := l.Store.Outbound(ctx, fr.o.ID)
	if err != nil {
		l.logf("outbox entry %s: %v", fr.o.ID, err)
		return
	}
	ev := ForwardEvent{Kind: FwSent, At: l.now(), Seq: fr.r.Seq}
	if fr.r.Err != nil {
		ev = ForwardEvent{Kind: FwError, At: l.now(), Code: fr.r.Code, Err: l.Redact.Clean(fr.r.Err.Error()), Refused: fr.r.Refused}
	}
	n, acts, err := StepForward(l.forwardPolicy(), o, ev)
	if err != nil {
		l.logf("outbox entry %s: %v", o.ID, err)
		return
	}
	var evs []AuditEvent
	for _, a := range acts {
		if a.Kind == ActAudit {
			evs = append(evs, AuditEvent{At: ev.At, Kind: a.Audit, Role: n.To(), Thread: n.Thread, Result: a.Result, Detail: n.ID + " " + a.Detail})
		}
	}
	if err := l.Store.SaveOutbound(ctx, n, evs...); err != nil {
		l.logf("outbox entry %s: %v", o.ID, err)
	}
}
