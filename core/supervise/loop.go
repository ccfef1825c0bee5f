package supervise

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/partyhq/party/core/clock"
)

// Loop is the supervisor's effect loop: it reads the store, feeds Step the
// events it observes, saves what Step returns before doing it, and does
// the actions through Effects. One open trigger per runtime at a time,
// oldest first.
type Loop struct {
	Store   *Store
	Clock   clock.Clock
	Policy  Policy
	Limits  Limits
	Metrics *Metrics
	Effects Effects
	// Wake fires when the store or the session's event log changed;
	// Changed when tmux reports a change of the session's panes (a pane
	// died, a window closed): the runtimes are looked at again at once.
	Wake    <-chan struct{}
	Changed <-chan struct{}
	// Recovery is the reconciliation's policy.
	Recovery RecoveryPolicy
	// ScanEvery is how often tmux is looked at without a wake-up.
	ScanEvery time.Duration
	// StallAfter is how long a busy agent may show no sign of life before
	// it is stalled (stall.go); zero: never.
	StallAfter time.Duration
	// Keep is how long closed triggers and audit rows are kept (Prune);
	// zero: for ever.
	Keep time.Duration
	// Redact cleans the diagnostics kept with a trigger (errors carrying
	// a pane's last screen).
	Redact Redactor
	Logf   func(format string, args ...any)
	// Forward takes the outbox's messages to their hosts (forward.go)
	// under ForwardPolicy (zero: DefaultForwardPolicy); nil leaves them
	// pending.
	Forward       Forwarder
	ForwardPolicy ForwardPolicy

	results chan result
	mu      sync.Mutex
	workers map[string]*worker // trigger id -> its running send, wait, resume or spawn
	// forwards carries the reports of the outbox's forwards; sending
	// (under mu) are the hosts a forward is under way to.
	forwards chan forwardResult
	sending  map[string]bool
	// outboxNext is when the first outbox entry not yet due is, as the
	// last pass found it (forward); zero: none waits.
	outboxNext time.Time
	wg         sync.WaitGroup
	lastScan   time.Time
	// scanDue is when a runtime next needs a look of its own (its restart
	// is due, its grace for not running its agent ends); zero when none
	// does.
	scanDue time.Time
	// scanNow says tmux told of a change of the panes: the next scan
	// reads them through. lastFull is when one last did, panesMark the
	// panes' mark before it (PanesMarker; "" when none was told or that
	// scan failed) and storeGen the store's generation before it (scan).
	scanNow   bool
	lastFull  time.Time
	panesMark string
	storeGen  uint64
	// inboxMark is the inbox's mark when it was last read through.
	inboxMark string
	// pruneDue is when the records are next pruned (prune.go).
	pruneDue time.Time
	// lastPulse is when the runtimes were last looked at for signs of
	// life (stall.go).
	lastPulse time.Time
}

type result struct {
	id     string
	w      *worker // the worker that reports
	ev     Event
	pasted bool // a send's: its text was in the pane (SendReport.Pasted)
}

// worker is one running send, wait, resume or spawn of a trigger. Its
// goroutine returns when its effect returns or ctx ends; done is closed
// then, after the worker has left l.workers unless it posted a report
// (the loop's done removes it with the report).
type worker struct {
	cancel context.CancelFunc // ends a wait early; nil for the others
	done   chan struct{}
}

func (l *Loop) logf(format string, args ...any) {
	if l.Logf != nil {
		l.Logf(format, args...)
	}
}

// Run runs the loop until ctx ends. It first registers the runtimes and
// takes every open trigger up where its record says it stands. The
// workers it starts (one send or wait per trigger) end with ctx; Run
// returns once they have.
func (l *Loop) Run(ctx context.Context) error {
	l.results = make(chan result, 64)
	l.workers = map[string]*worker{}
	l.forwards = make(chan forwardResult, 16)
	l.sending = map[string]bool{}
	l.Store.keepReads() // the daemon's Store: nothing else writes its database
	if l.ScanEvery == 0 {
		l.ScanEvery = 5 * time.Second
	}
	defer l.wg.Wait()
	if err := l.scan(ctx); err != nil {
		l.logf("scan: %v", err)
	}
	if err := l.restart(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	for {
		if err := l.pass(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			l.logf("pass: %v", err)
		}
		wait := l.ScanEvery
		if next, ok := l.nextDue(ctx); ok {
			wait = min(wait, max(next.Sub(l.Clock.Now()), time.Millisecond))
		}
		if !l.scanDue.IsZero() {
			wait = min(wait, max(l.scanDue.Sub(l.now()), time.Millisecond))
		}
		if !l.outboxNext.IsZero() {
			wait = min(wait, max(l.outboxNext.Sub(l.Clock.Now()), time.Millisecond))
		}
		tctx, cancel := context.WithCancel(ctx)
		tick := make(chan struct{})
		go func() {
			if l.Clock.Sleep(tctx, wait) == nil {
				close(tick)
			}
		}()
		select {
		case <-ctx.Done():
			cancel()
			return nil
		case <-l.Wake:
		case <-l.Changed:
			l.lastScan, l.scanNow = time.Time{}, true // look at the runtimes now
		case r := <-l.results:
			l.done(ctx, r)
		case r := <-l.forwards:
			l.forwarded(ctx, r)
		case <-tick:
		}
		cancel()
	}
}

// restart takes every open trigger up after a start.
func (l *Loop) restart(ctx context.Context) error {
	open, err := l.Store.Triggers(ctx, TriggerFilter{Open: true})
	if err != nil {
		return err
	}
	rts, err := l.runtimes(ctx)
	if err != nil {
		return err
	}
	for _, t := range open {
		if t.Status == Queued {
			continue // the passes take it when its turn comes, one per runtime
		}
		if rt, ok := rts[t.Role]; ok && t.Status == TTriggering {
			l.reclaim(ctx, rt, t)
			continue
		}
		l.apply(ctx, t, Event{Kind: EvRestart, At: l.now()})
	}
	return nil
}

// reclaim takes up t, caught between the record of its delivery and the
// saved report (a supervisor killed, a save that failed): what it pasted
// is either taken back from the box (it goes again) or reached the agent
// (it never goes again).
func (l *Loop) reclaim(ctx context.Context, rt Runtime, t Trigger) {
	s, err := l.Effects.Reclaim(ctx, rt, t)
	if err != nil {
		l.logf("trigger %s: %v", t.ID, err)
	}
	if s.InBox {
		l.logf("trigger %s: its text was in the input box, not submitted; taken back, it is delivered again", t.ID)
	}
	l.apply(ctx, t, Event{Kind: EvRestart, At: l.now(), Reached: s.Reached && !s.InBox})
}

func (l *Loop) now() time.Time { return l.Clock.Now().UTC() }

// runtimes are the recorded runtimes by role, each the caller's.
func (l *Loop) runtimes(ctx context.Context) (map[string]Runtime, error) {
	list, err := l.Store.sharedRuntimes(ctx)
	if err != nil {
		return nil, err
	}
	m := make(map[string]Runtime, len(list))
	for _, rt := range list {
		rt.Recovery.Restarts = slices.Clone(rt.Recovery.Restarts)
		m[rt.Role] = rt
	}
	return m, nil
}

// pass looks at every open trigger once: the oldest of each runtime
// moves, the others wait their turn (an operator's forced trigger goes
// before those held for a spent budget: ahead).
func (l *Loop) pass(ctx context.Context) error {
	if l.Clock.Now().Sub(l.lastScan) >= l.ScanEvery || (!l.scanDue.IsZero() && !l.now().Before(l.scanDue)) {
		if err := l.scan(ctx); err != nil {
			l.logf("scan: %v", err)
		}
	}
	if l.Clock.Now().Sub(l.lastPulse) >= l.StallAfter/pulsesPerStall {
		l.lastPulse = l.Clock.Now()
		l.watchStalls(ctx, l.now())
	}
	if err := l.inbox(ctx); err != nil {
		l.logf("inbox: %v", err)
	}
	l.forward(ctx)
	l.stallsOver(ctx)
	l.prune(ctx)
	open, err := l.Store.Triggers(ctx, TriggerFilter{Open: true})
	if err != nil {
		return err
	}
	all, err := l.Store.sharedRuntimes(ctx) // read only: an idle pass copies none
	if err != nil {
		return err
	}
	active := map[string]Trigger{}
	for _, t := range ahead(open) {
		if _, ok := active[t.Role]; ok {
			continue
		}
		active[t.Role] = t
		i := slices.IndexFunc(all, func(rt Runtime) bool { return rt.Role == t.Role })
		if i < 0 {
			l.apply(ctx, t, Event{Kind: EvProbed, At: l.now(), Class: TargetNotFound, Err: "its runtime is gone"})
			continue
		}
		rt := all[i]
		rt.Recovery.Restarts = slices.Clone(rt.Recovery.Restarts)
		if waitsForRestart(rt, t) {
			continue
		}
		l.move(ctx, rt, t)
	}
	for _, rt := range all {
		role := rt.Role
		status, busy, last := rt.Status, false, rt.LastTrigger
		switch {
		case rt.Status == Offline || rt.Status == Starting || rt.Status == Failed || rt.Status == Stopping:
		case active[role].ID != "":
			if cur, err := l.Store.Trigger(ctx, active[role].ID); err == nil {
				status = RuntimeStatusOf(cur)
				busy = cur.Status == TDeferred && cur.Class == OperatorBusy
				last = cur.ID
			}
		default:
			status = Ready
		}
		if IsStalled(rt) && status != Offline && status != Starting && status != Failed && status != Stopping {
			status = Stalled
		}
		if status != rt.Status || busy != rt.OperatorBusy || last != rt.LastTrigger {
			// Onto the record as it stands now: this pass's copy predates
			// what was written since (the agent's session learnt by ack, a
			// heartbeat from the pane), which it would undo.
			if fresh, err := l.Store.Runtime(ctx, role); err == nil {
				rt = fresh
			}
			rt.LastTrigger = last
			rt.Status, rt.OperatorBusy, rt.Updated = status, busy, l.now()
			if err := l.Store.putStatus(ctx, rt); err != nil {
				return err
			}
			if l.Metrics != nil {
				l.Metrics.RuntimeStatus(rt.Role, rt.Workspace, string(rt.Status))
			}
		}
	}
	return nil
}

// waitsForRestart says whether t, not yet delivered, waits for its
// runtime rt, offline or starting, to be back.
func waitsForRestart(rt Runtime, t Trigger) bool {
	return (rt.Status == Offline || rt.Status == Starting) && (t.Status == Queued || t.Status == TDeferred)
}

// move gives the active trigger t of rt what it waits for.
func (l *Loop) move(ctx context.Context, rt Runtime, t Trigger) {
	now := l.now()
	switch t.Status {
	case Queued:
		l.probe(ctx, rt, t)
		return
	case TTriggering:
		l.mu.Lock()
		sending := l.workers[t.ID] != nil
		l.mu.Unlock()
		if !sending {
			// Its send reported, but the report could not be saved (a
			// full disk): it is reconciled with what the pane and the
			// agent's events show, as after a restart.
			l.reclaim(ctx, rt, t)
		}
		return // its send reports
	case TDeferred:
		if !now.Before(t.NextAt) {
			l.apply(ctx, t, Event{Kind: EvTick, At: now})
		}
		return
	}
	// Delivered, retrying or acked: acks, the agent's session, the ack
	// clock, the wait for the answer. The pane and its events are looked
	// at once, and only when needed.
	var seen *Sighting
	look := func() Sighting {
		if seen == nil {
			s := l.Effects.Look(ctx, rt, t)
			l.learnSession(ctx, rt, s)
			seen = &s
		}
		return *seen
	}
	if t.Status != Acked {
		if src := l.ack(ctx, rt, t, look); src != "" {
			t = l.apply(ctx, t, Event{Kind: EvAck, At: now, Source: src})
		}
	} else if rt.AgentSession == "" {
		look() // acked by the delivery's own report: learn the session
	}
	if t.Status == Delivered && t.AckBy.IsZero() && look().Idle {
		t = l.apply(ctx, t, Event{Kind: EvAgentIdle, At: now})
	}
	if due := t.Due(); !due.IsZero() && !now.Before(due) {
		// An ack window ends: whether the agent works says whether it is
		// wedged.
		t = l.apply(ctx, t, Event{Kind: EvTick, At: now, Busy: t.Status == Delivered && look().Busy})
	}
	if t.Status.Open() && t.Status != TTriggering && t.Reached && t.Turn != nil {
		// (A send to retry started no turn: its wait would hold it up.)
		l.await(ctx, rt, t)
	}
}

// ack is the most trusted acknowledgement of t there is, or "".
func (l *Loop) ack(ctx context.Context, rt Runtime, t Trigger, look func() Sighting) string {
	if cursors, err := l.Store.Cursors(ctx, rt.Role); err == nil {
		for _, c := range cursors {
			if c.Thread == t.Thread && !c.At.Before(t.DeliveredAt) {
				return AckCursor
			}
		}
	}
	if !rt.LastHeartbeat.IsZero() && !rt.LastHeartbeat.Before(t.DeliveredAt) {
		return AckHeartbeat
	}
	return look().Ack
}

// done applies a worker's report.
func (l *Loop) done(ctx context.Context, r result) {
	l.mu.Lock()
	current := l.workers[r.id] == r.w
	if current {
		delete(l.workers, r.id)
	}
	l.mu.Unlock()
	if !current {
		return // a wait's report posted as a fallback took the trigger over: stale
	}
	t, err := l.Store.Trigger(ctx, r.id)
	if err != nil {
		l.logf("trigger %s: %v", r.id, err)
		return
	}
	if r.ev.Kind == EvSendFailed {
		r.ev = l.sendGone(ctx, t, r.ev, r.pasted)
	}
	t = l.apply(ctx, t, r.ev)
	if (r.ev.Kind == EvSent || r.ev.Kind == EvSendFailed) && t.Reached {
		// A send's worker is done; the wait for the answer is the next,
		// for a text that reached the agent. One that did not (deferred,
		// or a send to retry) started no turn: a wait would hold the
		// trigger's next send up, its worker being the trigger's.
		if rts, err := l.runtimes(ctx); err == nil && t.Status.Open() {
			if rt, ok := rts[t.Role]; ok {
				l.await(ctx, rt, t)
			}
		}
	}
}

// sendGone turns the failed send ev of t into EvPaneGone when its pane
// died or went during the delivery and its runtime will be restarted: the
// trigger waits for the restart, unless the agent's own events or
// transcript show that it took the envelope before it went (pasted: only
// then could it have).
func (l *Loop) sendGone(ctx context.Context, t Trigger, ev Event, pasted bool) Event {
	if ev.Reached || (ev.Class != PaneDead && ev.Class != TargetNotFound) {
		return ev
	}
	rt, err := l.Store.Runtime(ctx, t.Role)
	if err != nil || !l.restarting(rt) {
		return ev
	}
	ev.Kind = EvPaneGone
	if pasted {
		ev.Reached = l.Effects.Look(ctx, rt, t).Reached
	}
	return ev
}

// ackPoll is how often a delivered trigger that waits for its ack is
// looked at: some acks wake nobody. The real Codex's only sign at a turn's
// start is the user message in its rollout (its notify comes at the turn's
// end), and an ACK_TRIGGER line is only on the screen; without a look they
// were seen at the next scan (5 s) or when the ack window ran out.
const ackPoll = time.Second

// nextDue is the earliest time an open trigger needs a tick, or a look
// for its ack.
func (l *Loop) nextDue(ctx context.Context) (time.Time, bool) {
	open, err := l.Store.Triggers(ctx, TriggerFilter{Open: true})
	if err != nil || len(open) == 0 {
		return time.Time{}, false
	}
	rts, err := l.runtimes(ctx)
	if err != nil {
		return time.Time{}, false
	}
	var next time.Time
	for _, t := range open {
		if rt, ok := rts[t.Role]; ok && waitsForRestart(rt, t) {
			// Not moved until its runtime is back (the scan's due time
			// wakes the loop): a due time already past would spin it.
			continue
		}
		d := t.Due()
		if t.Status == Delivered {
			if look := l.Clock.Now().Add(ackPoll); d.IsZero() || look.Before(d) {
				d = look
			}
		}
		if !d.IsZero() && (next.IsZero() || d.Before(next)) {
			next = d
		}
	}
	return next, !next.IsZero()
}
