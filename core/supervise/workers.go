package supervise

import (
	"context"
	"slices"
)

// send starts the delivery of t's text in a worker of its own.
func (l *Loop) send(ctx context.Context, rt Runtime, t Trigger, text string) {
	w, ok := l.start(t.ID, nil)
	if !ok {
		return
	}
	turn := t.Turn
	l.work(ctx, t.ID, w, func() (result, bool) {
		r := l.Effects.Send(ctx, rt, text)
		ev := Event{Kind: EvSent, At: l.now(), Outcome: r.Outcome, Acked: r.Acked, Turn: turn}
		if r.Err != nil || r.Outcome == "" {
			ev.Kind, ev.Class, ev.Reached = EvSendFailed, r.Class, r.Reached
			if ev.Class == "" {
				ev.Class = SendKeysError
			}
		}
		if r.Err != nil {
			ev.Err = r.Err.Error()
		} else {
			ev.Err = r.Note // the audit line's detail
		}
		return result{ev: ev, pasted: r.Pasted}, true
	})
}

// await starts the wait for t's answer in a worker of its own, unless one
// runs.
func (l *Loop) await(ctx context.Context, rt Runtime, t Trigger) {
	if t.Turn == nil {
		return
	}
	actx, cancel := context.WithCancel(ctx)
	w, ok := l.start(t.ID, cancel)
	if !ok {
		cancel()
		return
	}
	turn := *t.Turn
	l.work(ctx, t.ID, w, func() (result, bool) {
		defer cancel()
		answer, class, err := l.Effects.Await(actx, rt, turn)
		if actx.Err() != nil {
			return result{}, false
		}
		if err != nil {
			return result{ev: Event{Kind: EvTurnError, At: l.now(), Class: class, Err: err.Error()}}, true
		}
		return result{ev: Event{Kind: EvAnswer, At: l.now(), Answer: answer}}, true
	})
}

// resume runs t's fallback resume in a worker of its own; the wait for
// the interactive turn ends.
func (l *Loop) resume(ctx context.Context, rt Runtime, t Trigger) {
	w, ok := l.takeOver(ctx, t.ID)
	if !ok {
		return
	}
	l.work(ctx, t.ID, w, func() (result, bool) {
		r := l.Effects.Resume(ctx, rt, t)
		if ctx.Err() != nil {
			return result{}, false
		}
		if r.Err != nil {
			return result{ev: Event{Kind: EvResumeFailed, At: l.now(), Class: r.Class, Reached: r.Reached, Err: r.Err.Error()}}, true
		}
		return result{ev: Event{Kind: EvResumed, At: l.now(), Answer: r.Answer}}, true
	})
}

// spawn starts a fresh agent for t in a worker of its own, with the
// summary of t's thread for it.
func (l *Loop) spawn(ctx context.Context, rt Runtime, t Trigger) {
	w, ok := l.takeOver(ctx, t.ID)
	if !ok {
		return
	}
	l.work(ctx, t.ID, w, func() (result, bool) {
		at := l.now() // a spawn is when it began
		hash, err := l.Effects.Spawn(ctx, rt)
		if ctx.Err() != nil {
			return result{}, false
		}
		if err != nil {
			return result{ev: Event{Kind: EvSpawnFailed, At: l.now(), Err: err.Error()}}, true
		}
		l.respawned(ctx, rt.Role, hash, false)
		return result{ev: Event{Kind: EvSpawned, At: at, Preface: l.summary(ctx, t.Thread, t.ID)}}, true
	})
}

// work runs job in the goroutine of worker w of trigger id and posts the
// report it makes; a job that makes none (its context ended) removes the
// worker instead.
func (l *Loop) work(ctx context.Context, id string, w *worker, job func() (result, bool)) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer close(w.done)
		r, ok := job()
		if !ok {
			l.finish(id, w)
			return
		}
		r.id, r.w = id, w
		l.post(ctx, r)
	}()
}

// respawned records that role's agent started anew (a new token, a new
// process, a new agent session unless resumed) and counts the restart.
func (l *Loop) respawned(ctx context.Context, role, hash string, resumed bool) {
	rt, err := l.Store.Runtime(ctx, role)
	if err != nil {
		return
	}
	rt.TokenHash, rt.PID, rt.Updated = hash, 0, l.now()
	if !resumed {
		rt.AgentSession = ""
	}
	if err := l.Store.PutRuntime(ctx, rt); err != nil {
		l.logf("runtime %s: %v", role, err)
	}
	l.Metrics.Restart(role, rt.Workspace)
}

// summary is the summary of thread for a fresh agent, without trigger
// skip (the one it is for).
func (l *Loop) summary(ctx context.Context, thread, skip string) string {
	msgs, err := l.Store.Messages(ctx, thread, 0)
	if err != nil {
		l.logf("thread %s: %v", thread, err)
	}
	ts, err := l.Store.Triggers(ctx, TriggerFilter{Thread: thread})
	if err != nil {
		l.logf("thread %s: %v", thread, err)
	}
	ts = slices.DeleteFunc(ts, func(t Trigger) bool { return t.ID == skip })
	return Summary(thread, msgs, ts, SummaryLimit)
}

// takeOver registers a fallback worker for trigger id. A wait for its
// interactive turn is ended first, and its goroutine waited for (its
// report would be stale): a report it posted before it saw the end is
// dropped with it, the trigger's worker being the fallback's from then on.
// It fails when another worker runs (a send), or ctx ends first.
func (l *Loop) takeOver(ctx context.Context, id string) (*worker, bool) {
	l.mu.Lock()
	old := l.workers[id]
	l.mu.Unlock()
	if old != nil && old.cancel != nil {
		old.cancel()
		select {
		case <-old.done:
		case <-ctx.Done():
			return nil, false
		}
		l.finish(id, old)
	}
	return l.start(id, nil)
}

// start registers a worker for trigger id, unless one runs; cancel ends
// it early (a wait's), nil when it cannot be.
func (l *Loop) start(id string, cancel context.CancelFunc) (*worker, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.workers[id] != nil {
		return nil, false
	}
	w := &worker{cancel: cancel, done: make(chan struct{})}
	l.workers[id] = w
	return w, true
}

// finish removes worker w of trigger id, unless another took its place.
func (l *Loop) finish(id string, w *worker) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.workers[id] == w {
		delete(l.workers, id)
	}
}

func (l *Loop) post(ctx context.Context, r result) {
	select {
	case l.results <- r:
	case <-ctx.Done():
		l.finish(r.id, r.w)
	}
}
