package supervise

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/partyhq/party/core/clock"
)

// Effects are what the loop does to the world; core/party wires them over
// tmux, the delivery path, the agents' events and the waits.
type Effects interface {
	// Scan lists the session's runtimes as tmux shows them now (status
	// Ready, or Offline for a dead pane; TokenHash from the launch
	// record), and whether each pane runs its agent.
	Scan(ctx context.Context) ([]Seen, error)
	// Restart starts rt again from its launch spec with a new token, in
	// its pane (respawned) or, when the pane is gone, in a new window;
	// with resume, the agent resumes its session rt.AgentSession (its
	// history on screen). It returns the new token's hash.
	Restart(ctx context.Context, rt Runtime, resume bool) (tokenHash string, err error)
	// Resume answers t through rt's agent session without its TUI: try
	// t.Fallback.Tries of the agent's headless resume with Envelope(t),
	// or the one a supervisor that stopped left running or done (a try is
	// never started twice). Its report says whether the envelope reached
	// the agent.
	Resume(ctx context.Context, rt Runtime, t Trigger) ResumeReport
	// Spawn starts a fresh agent (a new session) in rt's pane, unless
	// someone types there; it returns the new token's hash.
	Spawn(ctx context.Context, rt Runtime) (tokenHash string, err error)
	// Probe looks at rt before a delivery: no class when it may go;
	// OperatorBusy while someone types there (held while their text, a
	// dialog, a menu or copy mode holds the pane); PaneDead or
	// TargetNotFound.
	Probe(ctx context.Context, rt Runtime) Probed
	// Prepare makes text ready for rt's agent: the text to paste and its
	// turn, which starts now (saved before the send).
	Prepare(ctx context.Context, rt Runtime, text string) (string, *TurnRecord, error)
	// Send delivers text once through the delivery path.
	Send(ctx context.Context, rt Runtime, text string) SendReport
	// Await waits for the answer of turn; Class is PaneDead when the pane
	// died.
	Await(ctx context.Context, rt Runtime, turn TurnRecord) (answer string, class Class, err error)
	// Look says what rt's pane and events show of t.
	Look(ctx context.Context, rt Runtime, t Trigger) Sighting
	// Reclaim looks at rt for t, whose delivery a supervisor that stopped
	// left unfinished (t.Turn, saved before the paste, says what it pasted
	// where): its text in the input box is party's own, not someone's
	// draft, and is taken back (InBox; the error says it could not be);
	// else Reached says whether the envelope reached the agent.
	Reclaim(ctx context.Context, rt Runtime, t Trigger) (Sighting, error)
}

// Seen is a runtime as a scan found it.
type Seen struct {
	Runtime
	RunsAgent bool
}

// SendReport is how a delivery ended.
type SendReport struct {
	Outcome string // submitted, queued, unconfirmed; "" when it failed
	Acked   bool   // the agent's own submit event showed it taken
	Class   Class  // the failure's class
	Reached bool   // failed, but pasted all the same
	// Pasted says the text was in the pane before the failure: a pane
	// that went after it may have let the agent take it.
	Pasted bool
	Err    error
}

// ResumeReport is how a headless resume ended: with Answer, or with Err.
type ResumeReport struct {
	Answer string
	// Class is why it failed: FallbackRequired when no resume can work (no
	// session known, an agent without sessions, a program that does not
	// start); the turn's class (TurnFailed) when the headless turn ran on
	// the envelope and ended without an answer.
	Class Class
	// Reached says the envelope reached the agent, or may have: the
	// headless turn ran on it (its output records the turn), or the
	// process ended without saying whether it read it (killed). A resume
	// that failed before the agent could read the envelope (the program
	// did not start, the session is unknown, Codex's session has another
	// writer) did not reach it.
	Reached bool
	Err     error
}

// Probed is what a look at a runtime before a delivery found (Probe).
type Probed struct {
	Class Class  // "" when a delivery may go
	Why   string // what was seen
	// Held: the operator's text, a dialog, a menu or copy mode holds the
	// pane (OperatorBusy): not even a forced trigger goes in.
	Held bool
}

// Sighting is what a look at a runtime found of a trigger.
type Sighting struct {
	Reached bool   // the envelope is in the pane or the agent's events
	InBox   bool   // Reclaim: the text was in the input box, not submitted
	Ack     string // AckEvent, AckLine or AckAnswer when the agent acknowledged it
	Idle    bool   // the agent waits for input
	Busy    bool   // the agent works on a turn (its screen says so)
	Session string // the agent's own session id, when its events name it
}

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
	// Redact cleans the diagnostics kept with a trigger (errors carrying
	// a pane's last screen).
	Redact Redactor
	Logf   func(format string, args ...any)

	results  chan result
	mu       sync.Mutex
	workers  map[string]*worker // trigger id -> its running send, wait, resume or spawn
	wg       sync.WaitGroup
	lastScan time.Time
	// scanDue is when a runtime next needs a look of its own (its restart
	// is due); zero when none does.
	scanDue time.Time
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
			l.lastScan = time.Time{} // look at the runtimes now
		case r := <-l.results:
			l.done(ctx, r)
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

func (l *Loop) runtimes(ctx context.Context) (map[string]Runtime, error) {
	list, err := l.Store.Runtimes(ctx)
	if err != nil {
		return nil, err
	}
	m := make(map[string]Runtime, len(list))
	for _, rt := range list {
		m[rt.Role] = rt
	}
	return m, nil
}

// scan registers the runtimes tmux shows, and reconciles every known one
// with what tmux shows of it: offline, back, drifted, restarted, failed.
func (l *Loop) scan(ctx context.Context) error {
	l.lastScan = l.Clock.Now()
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
	defer func() {
		// An offline runtime is looked at again when its restart is due.
		if rts, err := l.runtimes(ctx); err == nil {
			for _, rt := range rts {
				if rt.Status != Offline {
					continue
				}
				due := rt.Recovery.OfflineSince.Add(l.Recovery.RestartAfter)
				if l.scanDue.IsZero() || due.Before(l.scanDue) {
					l.scanDue = due
				}
			}
		}
	}()
	// A runtime whose trigger is being resumed or spawned for is the
	// fallback's: no restart races it.
	held := map[string]bool{}
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
			next.Agent, next.Workspace, next.Window = s.Agent, s.Workspace, s.Window
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
	l.watchStalls(ctx, now)
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

// pass looks at every open trigger once: the oldest of each runtime
// moves, the others wait their turn.
func (l *Loop) pass(ctx context.Context) error {
	if l.Clock.Now().Sub(l.lastScan) >= l.ScanEvery || (!l.scanDue.IsZero() && !l.now().Before(l.scanDue)) {
		if err := l.scan(ctx); err != nil {
			l.logf("scan: %v", err)
		}
	}
	if err := l.inbox(ctx); err != nil {
		l.logf("inbox: %v", err)
	}
	l.stallsOver(ctx)
	open, err := l.Store.Triggers(ctx, TriggerFilter{Open: true})
	if err != nil {
		return err
	}
	rts, err := l.runtimes(ctx)
	if err != nil {
		return err
	}
	active := map[string]Trigger{}
	for _, t := range open {
		if _, ok := active[t.Role]; ok {
			continue
		}
		active[t.Role] = t
		rt, ok := rts[t.Role]
		if !ok {
			l.apply(ctx, t, Event{Kind: EvProbed, At: l.now(), Class: TargetNotFound, Err: "its runtime is gone"})
			continue
		}
		if waitsForRestart(rt, t) {
			continue
		}
		l.move(ctx, rt, t)
	}
	for role, rt := range rts {
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
			if err := l.Store.PutRuntime(ctx, rt); err != nil {
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

// probe looks at rt for t: its thread, the rate limits, the operator.
func (l *Loop) probe(ctx context.Context, rt Runtime, t Trigger) Trigger {
	ev := l.probeEvent(ctx, rt, t)
	if (ev.Class == TargetNotFound || ev.Class == PaneDead) && l.restarting(rt) {
		return t // it reached no agent: it waits
	}
	return l.apply(ctx, t, ev)
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
		l.logf("trigger %s: save %s -> %s: %v", t.ID, t.Status, next.Status, err)
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

// probeEvent is the EvProbed of a look at rt for t.
func (l *Loop) probeEvent(ctx context.Context, rt Runtime, t Trigger) Event {
	now := l.now()
	if th, err := l.Store.Thread(ctx, t.Thread); err == nil && th.Blocked {
		return Event{Kind: EvProbed, At: now, Class: ThreadBlocked, Err: th.BlockedWhy}
	}
	if until, why, err := rateLimit(ctx, l.Store, l.Limits, now, rt.Role, t.Thread); err == nil && !until.IsZero() {
		return Event{Kind: EvProbed, At: now, Class: RateLimited, Until: until, Err: why}
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

// send starts the delivery of t's text in a worker of its own.
func (l *Loop) send(ctx context.Context, rt Runtime, t Trigger, text string) {
	w, ok := l.start(t.ID, nil)
	if !ok {
		return
	}
	turn := t.Turn
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer close(w.done)
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
		}
		l.post(ctx, result{id: t.ID, w: w, ev: ev, pasted: r.Pasted})
	}()
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
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer close(w.done)
		defer cancel()
		answer, class, err := l.Effects.Await(actx, rt, turn)
		if actx.Err() != nil {
			l.finish(t.ID, w)
			return
		}
		ev := Event{Kind: EvAnswer, At: l.now(), Answer: answer}
		if err != nil {
			ev = Event{Kind: EvTurnError, At: l.now(), Class: class, Err: err.Error()}
		}
		l.post(ctx, result{id: t.ID, w: w, ev: ev})
	}()
}

// resume runs t's fallback resume in a worker of its own; the wait for
// the interactive turn ends.
func (l *Loop) resume(ctx context.Context, rt Runtime, t Trigger) {
	w, ok := l.takeOver(ctx, t.ID)
	if !ok {
		return
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer close(w.done)
		r := l.Effects.Resume(ctx, rt, t)
		if ctx.Err() != nil {
			l.finish(t.ID, w)
			return
		}
		ev := Event{Kind: EvResumed, At: l.now(), Answer: r.Answer}
		if r.Err != nil {
			ev = Event{Kind: EvResumeFailed, At: l.now(), Class: r.Class, Reached: r.Reached, Err: r.Err.Error()}
		}
		l.post(ctx, result{id: t.ID, w: w, ev: ev})
	}()
}

// spawn starts a fresh agent for t in a worker of its own, with the
// summary of t's thread for it.
func (l *Loop) spawn(ctx context.Context, rt Runtime, t Trigger) {
	w, ok := l.takeOver(ctx, t.ID)
	if !ok {
		return
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer close(w.done)
		ev := Event{Kind: EvSpawned, At: l.now()}
		hash, err := l.Effects.Spawn(ctx, rt)
		if ctx.Err() != nil {
			l.finish(t.ID, w)
			return
		}
		if err != nil {
			ev = Event{Kind: EvSpawnFailed, At: l.now(), Err: err.Error()}
		} else {
			l.respawned(ctx, rt.Role, hash, false)
			ev.Preface = l.summary(ctx, t.Thread, t.ID)
		}
		l.post(ctx, result{id: t.ID, w: w, ev: ev})
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
	if err != nil {
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

// inbox triggers each runtime with unread messages, one trigger per
// thread at a time: messages that come while it is open are coalesced.
func (l *Loop) inbox(ctx context.Context) error {
	rts, err := l.Store.Runtimes(ctx)
	if err != nil {
		return err
	}
	for _, rt := range rts {
		unread, err := l.Store.Unread(ctx, rt.Role, "")
		if err != nil {
			return err
		}
		byThread := map[string][]Message{}
		var order []string
		for _, m := range unread {
			if _, ok := byThread[m.Thread]; !ok {
				order = append(order, m.Thread)
			}
			byThread[m.Thread] = append(byThread[m.Thread], m)
		}
		for _, th := range order {
			open, err := l.Store.Triggers(ctx, TriggerFilter{Open: true, Role: rt.Role, Thread: th})
			if err != nil {
				return err
			}
			if hasInbox(open) {
				continue
			}
			msgs := byThread[th]
			last := msgs[len(msgs)-1]
			text := fmt.Sprintf("%d unread message%s in thread %s: run `party inbox read --thread %s` and act on %s.",
				len(msgs), plural(len(msgs)), th, th, them(len(msgs)))
			t := Trigger{ID: "inbox-" + th + "-" + strconv.FormatInt(last.Seq, 10), Role: rt.Role, Thread: th, Reason: "inbox", Text: text}
			if _, err := l.Store.Trigger(ctx, t.ID); err == nil {
				continue // already triggered for these messages
			}
			t, acts, err := Step(l.Policy, t, Event{Kind: EvQueued, At: l.now()})
			if err != nil {
				return err
			}
			if _, _, err := l.Store.AddTrigger(ctx, t, audits(t, acts)...); err != nil {
				return err
			}
		}
	}
	return nil
}

func hasInbox(ts []Trigger) bool {
	for _, t := range ts {
		if t.Reason == "inbox" {
			return true
		}
	}
	return false
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
