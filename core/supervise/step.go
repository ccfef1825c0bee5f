package supervise

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Policy are the numbers the trigger policy works with (config keys
// supervise.*).
type Policy struct {
	// AckTimeout is how long an ack may take once the agent could act on
	// the trigger; Retries how many more ack windows follow the first, each
	// after a backoff of Backoff, doubled every time.
	AckTimeout time.Duration
	Retries    int
	Backoff    time.Duration
	// A trigger deferred for a busy operator is looked at every
	// DeferRecheck, delivered once the pane was quiet for QuietWindow, and
	// failed with DEFER_TIMEOUT after MaxDefer.
	QuietWindow  time.Duration
	DeferRecheck time.Duration
	MaxDefer     time.Duration
	// FallbackTries is how many times a trigger that failed with
	// ACK_TIMEOUT or DEFER_TIMEOUT is tried through the agent's resumed
	// session (0: it fails); Spawn then starts a fresh agent for it.
	FallbackTries int
	Spawn         bool
}

// DefaultPolicy is the supervisor spec's: ack in 8 s, 2 retries backing
// off 2 s then 4 s, re-check every 5 s, deliver after 20 s of quiet,
// DEFER_TIMEOUT at 60 s.
var DefaultPolicy = Policy{AckTimeout: 8 * time.Second, Retries: 2, Backoff: 2 * time.Second,
	QuietWindow: 20 * time.Second, DeferRecheck: 5 * time.Second, MaxDefer: 60 * time.Second,
	FallbackTries: 2, Spawn: true}

// backoff is the wait before ack window n+1 (n ≥ 1): Backoff, then doubled.
func (p Policy) backoff(n int) time.Duration {
	return p.Backoff << max(n-1, 0)
}

// EventKind is what happened to a trigger.
type EventKind string

// The events of a trigger.
const (
	// EvQueued: the trigger was recorded.
	EvQueued EventKind = "queued"
	// EvProbed: the loop looked at the runtime. Class is empty when the
	// trigger may go; OperatorBusy, RateLimited (until Until) or
	// BudgetExceeded when it must wait; TargetNotFound, PaneDead or FallbackRequired when it
	// cannot be delivered.
	EvProbed EventKind = "probed"
	// EvSent: the delivery ended with Outcome (submitted, queued,
	// unconfirmed); Acked says the agent's own submit event showed it
	// taken; Turn is what the answer's wait needs.
	EvSent EventKind = "sent"
	// EvSendFailed: the delivery failed with Class; Reached says the text
	// was pasted all the same (it is then never delivered again).
	EvSendFailed EventKind = "send-failed"
	// EvPaneGone: the pane died or went during the delivery, and its
	// runtime will be restarted; Reached says the agent's own events or
	// transcript show it took the envelope before. One that did not waits
	// for the restart and goes then; one that did died with its agent.
	EvPaneGone EventKind = "pane-gone"
	// EvAgentIdle: the agent is idle, so a trigger queued behind its
	// earlier turn can now be acted on: its ack clock starts.
	EvAgentIdle EventKind = "agent-idle"
	// EvAck: Source acknowledged the trigger.
	EvAck EventKind = "ack"
	// EvAnswer: the turn the trigger started ended with Answer.
	EvAnswer EventKind = "answer"
	// EvTurnError: the wait for the turn ended with Err (Class PaneDead
	// when the pane died).
	EvTurnError EventKind = "turn-error"
	// EvTick: the time is At; Busy says the agent works on a turn (its
	// screen says so) as an ack window of a delivered trigger ends.
	EvTick EventKind = "tick"
	// EvRestart: the supervisor started again, or found a trigger
	// triggering whose send's report could not be saved; for a trigger
	// caught mid-delivery Reached says whether its text reached the agent.
	EvRestart EventKind = "restart"
	// EvResumed: the agent's resumed session answered (Answer).
	EvResumed EventKind = "resumed"
	// EvResumeFailed: the resume failed with Err; Class FallbackRequired
	// when no resume can work (no session known, an agent without
	// sessions), so none is tried again. Reached says the envelope reached
	// the agent, or may have (ResumeReport): the trigger is then never
	// given to an agent again, neither resumed nor spawned for; with the
	// class of a headless turn that ran (TurnFailed) it is completed with
	// that class, as an interactive turn that ended without an answer.
	EvResumeFailed EventKind = "resume-failed"
	// EvSpawned: a fresh agent runs in the runtime's pane; Preface is the
	// summary of the thread it gets first.
	EvSpawned EventKind = "spawned"
	// EvSpawnFailed: no fresh agent could be started (Err).
	EvSpawnFailed EventKind = "spawn-failed"
	// EvStalled: the agent stalled mid-turn (Stall) while the trigger
	// waits behind that turn (WaitsBehindTurn): it takes the fallback as
	// after ACK_TIMEOUT, with class AGENT_STALLED.
	EvStalled EventKind = "stalled"
)

// Event is one input of Step.
type Event struct {
	Kind    EventKind `json:"kind"`
	At      time.Time `json:"at"`
	Class   Class     `json:"class,omitempty"`
	Until   time.Time `json:"until,omitzero"`
	Outcome string    `json:"outcome,omitempty"`
	Acked   bool      `json:"acked,omitempty"`
	Reached bool      `json:"reached,omitempty"`
	Source  string    `json:"source,omitempty"`
	Answer  string    `json:"answer,omitempty"`
	Err     string    `json:"error,omitempty"`
	Busy    bool      `json:"busy,omitempty"`
	// Held (with OperatorBusy): the operator's text, a dialog, a menu or
	// copy mode holds the pane; nothing goes in, not even a forced
	// trigger. Without it the operator only pressed a key lately.
	Held    bool        `json:"held,omitempty"`
	Turn    *TurnRecord `json:"turn,omitempty"`
	Preface string      `json:"preface,omitempty"`
}

// ActionKind is what the effect loop must do.
type ActionKind string

// The actions.
const (
	// ActProbe: look at the runtime (managed, alive, operator busy, rate
	// limits) and report EvProbed.
	ActProbe ActionKind = "probe"
	// ActSend: deliver the envelope once and report EvSent or
	// EvSendFailed.
	ActSend ActionKind = "send"
	// ActAwait: wait for the answer of the turn in Trigger.Turn and report
	// EvAnswer or EvTurnError (and acks as they come).
	ActAwait ActionKind = "await"
	// ActAudit: append Audit (with Result and Detail) to the audit trail.
	ActAudit ActionKind = "audit"
	// ActResume: run try Trigger.Fallback.Tries of the agent's headless
	// resume with the envelope and report EvResumed or EvResumeFailed.
	ActResume ActionKind = "resume"
	// ActSpawn: start a fresh agent in the runtime's pane and report
	// EvSpawned (with the thread's summary) or EvSpawnFailed.
	ActSpawn ActionKind = "spawn"
)

// Audit event kinds.
const (
	AuditQueued    = "trigger_queued"
	AuditOverride  = "override"
	AuditDeferred  = "trigger_deferred"
	AuditSent      = "trigger_sent"
	AuditRetry     = "trigger_retry"
	AuditAck       = "ack_received"
	AuditCompleted = "trigger_completed"
	AuditFailed    = "trigger_failed"
	AuditRuntime   = "runtime_registered"
	AuditMessage   = "message_sent"
	AuditCursor    = "cursor_advanced"
	AuditTalk      = "talk_ended"
	AuditBlocked   = "thread_blocked"
	AuditUnblocked = "thread_unblocked"
	// The fallbacks.
	AuditResumeStarted   = "fallback_resume_started"
	AuditResumeSucceeded = "fallback_resume_succeeded"
	AuditResumeFailed    = "fallback_resume_failed"
	AuditSpawnStarted    = "spawn_recovery_started"
	AuditSpawned         = "spawn_recovery_ready"
)

// Action is one output of Step.
type Action struct {
	Kind   ActionKind `json:"kind"`
	Audit  string     `json:"audit,omitempty"`
	Result string     `json:"result,omitempty"`
	Detail string     `json:"detail,omitempty"`
}

// ErrStale is an event that no longer applies to the trigger (an ack
// after it failed, a tick before it is due); Step leaves the trigger as
// it was.
var ErrStale = errors.New("event does not apply")

// Step applies ev to t under p. It returns the trigger as it now stands
// and the actions that follow, or ErrStale (wrapped) and t unchanged. Step
// is pure: it never reads the clock, the store or tmux; time comes with
// the event.
func Step(p Policy, t Trigger, ev Event) (Trigger, []Action, error) {
	n := t
	acts, err := n.apply(p, ev)
	if err != nil {
		return t, nil, fmt.Errorf("%s in %s: %w", ev.Kind, t.Status, err)
	}
	n.Updated = ev.At
	return n, acts, nil
}

func audit(kind, result, detail string) Action {
	return Action{Kind: ActAudit, Audit: kind, Result: result, Detail: detail}
}

func (t *Trigger) apply(p Policy, ev Event) ([]Action, error) {
	switch t.Status {
	case Completed, TFailed:
		return nil, ErrStale
	}
	switch ev.Kind {
	case EvQueued:
		if t.Status != unknownTrg && t.Status != Queued {
			return nil, ErrStale
		}
		t.Status, t.Created = Queued, ev.At
		acts := []Action{audit(AuditQueued, t.By, "")} // by a named operator
		if t.Force {
			acts = append(acts, audit(AuditOverride, t.Actor, t.Why))
		}
		return append(acts, Action{Kind: ActProbe}), nil

	case EvProbed:
		if t.Status != Queued && t.Status != TDeferred {
			return nil, ErrStale
		}
		return t.probed(p, ev)

	case EvSent, EvSendFailed:
		if t.Status != TTriggering {
			return nil, ErrStale
		}
		return t.sent(p, ev)

	case EvPaneGone:
		if t.Status != TTriggering {
			return nil, ErrStale
		}
		if ev.Reached {
			// The agent took it, then went: its turn died with it, and
			// it is never shown to an agent again.
			t.Reached = true
			return []Action{t.fail(ev.At, PaneDead, ev.Err+"; the agent had taken the trigger: it is not delivered again")}, nil
		}
		// It reached no agent: it goes to the restarted one.
		t.Status, t.Class, t.Error = Queued, "", ""
		return []Action{audit(AuditRetry, string(PaneDead), ev.Err+"; it reached no agent and waits for the restart")}, nil

	case EvAgentIdle:
		if t.Status != Delivered || !t.AckBy.IsZero() {
			return nil, ErrStale
		}
		t.AckBy = ev.At.Add(p.AckTimeout)
		return nil, nil

	case EvAck:
		switch t.Status {
		case Delivered, TRetrying:
		case TTriggering:
			// The agent's own event can come before the delivery's report.
			t.Reached = true
		default:
			return nil, ErrStale
		}
		t.ack(ev.At, ev.Source)
		return []Action{audit(AuditAck, ev.Source, "")}, nil

	case EvAnswer, EvTurnError:
		switch t.Status {
		case Delivered, TRetrying, Acked, TTriggering:
		default:
			return nil, ErrStale
		}
		var acts []Action
		if t.Status != Acked {
			t.Reached = true
			t.ack(ev.At, AckAnswer)
			acts = append(acts, audit(AuditAck, AckAnswer, ""))
		}
		if ev.Kind == EvTurnError && ev.Class == PaneDead {
			return append(acts, t.fail(ev.At, PaneDead, ev.Err)), nil
		}
		t.Status, t.CompletedAt, t.Class = Completed, ev.At, ""
		if ev.Kind == EvAnswer {
			a := ev.Answer
			t.Answer, t.Error = &a, ""
			return append(acts, audit(AuditCompleted, "answered", "")), nil
		}
		// Delivered and acked, but the turn gave no answer: its class
		// (the wait's code) says why, for --wait.
		t.Error, t.Class = ev.Err, ev.Class
		return append(acts, audit(AuditCompleted, "turn-error", ev.Err)), nil

	case EvTick:
		return t.tick(p, ev.At, ev.Busy)

	case EvStalled:
		if !WaitsBehindTurn(*t) {
			return nil, ErrStale
		}
		return t.timeout(p, ev.At, AgentStalled, ev.Err), nil

	case EvResumed, EvResumeFailed:
		if t.Status != TFallbackResume {
			return nil, ErrStale
		}
		return t.resumed(p, ev), nil

	case EvSpawned, EvSpawnFailed:
		if t.Status != TSpawnRecovery {
			return nil, ErrStale
		}
		if ev.Kind == EvSpawnFailed {
			return []Action{t.fail(ev.At, t.Fallback.From, t.fallbackWhy("spawn recovery failed: "+ev.Err))}, nil
		}
		// A new agent session: the text has reached no agent of it yet.
		t.Fallback.Spawned, t.Preface = true, ev.Preface
		t.Status, t.Class, t.Error, t.Reached, t.Turn = Queued, "", "", false, nil
		t.Waits, t.AckBy, t.Outcome, t.DeliveredAt = 0, time.Time{}, "", time.Time{}
		return []Action{audit(AuditSpawned, "", ""), {Kind: ActProbe}}, nil

	case EvRestart:
		switch t.Status {
		case Queued:
			return []Action{{Kind: ActProbe}}, nil
		case TTriggering:
			if ev.Reached {
				// Its text is there: it is never sent again.
				t.delivered(p, ev.At, "unconfirmed", t.Turn)
				return []Action{audit(AuditSent, "unconfirmed", "found after a supervisor restart"), {Kind: ActAwait}}, nil
			}
			t.Status = Queued
			return []Action{{Kind: ActProbe}}, nil
		case Delivered, TRetrying, Acked:
			if t.Turn != nil {
				return []Action{{Kind: ActAwait}}, nil
			}
			return nil, nil
		case TFallbackResume:
			// The try that ran goes on or is read back: never started twice.
			return []Action{{Kind: ActResume}}, nil
		case TSpawnRecovery:
			return []Action{{Kind: ActSpawn}}, nil
		}
		return nil, nil // deferred: the next tick looks again
	}
	return nil, fmt.Errorf("unknown event %q: %w", ev.Kind, ErrBadInput)
}

// probed applies what the loop saw of the runtime.
func (t *Trigger) probed(p Policy, ev Event) ([]Action, error) {
	switch ev.Class {
	case "":
		if t.Status == TDeferred && t.Class == OperatorBusy && !t.Force {
			if t.QuietSince.IsZero() {
				t.QuietSince = ev.At
			}
			if quiet := ev.At.Sub(t.QuietSince); quiet < p.QuietWindow {
				if ev.At.Sub(t.DeferredAt) >= p.MaxDefer {
					return t.timeout(p, ev.At, DeferTimeout, fmt.Sprintf("the operator was busy in the pane; quiet for %s of the %s needed within %s", quiet, p.QuietWindow, p.MaxDefer)), nil
				}
				t.NextAt = minTime(ev.At.Add(p.DeferRecheck), t.QuietSince.Add(p.QuietWindow))
				return nil, nil
			}
		}
		t.Status, t.Class, t.Error, t.NextAt = TTriggering, "", "", time.Time{}
		t.Attempts++
		return []Action{{Kind: ActSend}}, nil

	case OperatorBusy:
		if t.Force && !ev.Held { // a forced trigger goes by a typing person, never into their text
			t.Status, t.Class, t.NextAt = TTriggering, "", time.Time{}
			t.Attempts++
			return []Action{{Kind: ActSend}}, nil
		}
		return t.defer_(p, ev.At, OperatorBusy, ev.Err), nil

	case RateLimited:
		first := t.Status != TDeferred || t.Class != RateLimited
		t.Status, t.Class, t.Error = TDeferred, RateLimited, ev.Err
		t.NextAt = ev.Until
		if !ev.Until.After(ev.At) {
			t.NextAt = ev.At.Add(p.DeferRecheck)
		}
		if first {
			return []Action{audit(AuditDeferred, string(RateLimited), ev.Err)}, nil
		}
		return nil, nil

	case BudgetExceeded:
		if t.Force { // the operator's override: the budget is theirs
			t.Status, t.Class, t.Error, t.NextAt = TTriggering, "", "", time.Time{}
			t.Attempts++
			return []Action{audit(AuditOverride, string(BudgetExceeded), ev.Err), {Kind: ActSend}}, nil
		}
		// Held, never failed for it: no deferral timeout, a look every
		// DeferRecheck until a budget lets it go (a new day, a limit
		// raised).
		first := t.Status != TDeferred || t.Class != BudgetExceeded
		t.Status, t.Class, t.Error, t.NextAt = TDeferred, BudgetExceeded, ev.Err, ev.At.Add(p.DeferRecheck)
		if first {
			return []Action{audit(AuditDeferred, string(BudgetExceeded), ev.Err)}, nil
		}
		return nil, nil

	case TargetNotFound, PaneDead, FallbackRequired, RegistryDrift, ThreadBlocked:
		return []Action{t.fail(ev.At, ev.Class, ev.Err)}, nil
	}
	return nil, fmt.Errorf("probe class %q: %w", ev.Class, ErrBadInput)
}

// defer_ defers t for a busy operator: the deferral's clock starts at the
// first; a busy look restarts the quiet window.
func (t *Trigger) defer_(p Policy, at time.Time, class Class, why string) []Action {
	first := t.Status != TDeferred || t.Class != class
	if t.DeferredAt.IsZero() {
		t.DeferredAt = at
	}
	t.Status, t.Class, t.Error, t.QuietSince = TDeferred, class, why, time.Time{}
	if at.Sub(t.DeferredAt) >= p.MaxDefer {
		return t.timeout(p, at, DeferTimeout, fmt.Sprintf("the operator stayed busy in the pane for %s: %s", p.MaxDefer, why))
	}
	t.NextAt = at.Add(p.DeferRecheck)
	if first {
		return []Action{audit(AuditDeferred, string(class), why)}
	}
	return nil
}

// sent applies the report of a delivery.
func (t *Trigger) sent(p Policy, ev Event) ([]Action, error) {
	if ev.Kind == EvSent || ev.Reached {
		outcome := ev.Outcome
		if outcome == "" {
			outcome = "unconfirmed"
		}
		t.delivered(p, ev.At, outcome, ev.Turn)
		acts := []Action{audit(AuditSent, outcome, ev.Err), {Kind: ActAwait}}
		if ev.Acked {
			t.ack(ev.At, AckEvent)
			acts = append(acts, audit(AuditAck, AckEvent, ""))
		}
		return acts, nil
	}
	switch ev.Class {
	case OperatorBusy:
		// Someone started typing (or a dialog opened) between the look and
		// the paste: nothing was pasted, wait for them.
		return t.defer_(p, ev.At, OperatorBusy, ev.Err), nil
	case TargetNotFound, PaneDead, FallbackRequired:
		return []Action{t.fail(ev.At, ev.Class, ev.Err)}, nil
	}
	if t.Attempts > p.Retries {
		return []Action{t.fail(ev.At, SendKeysError, ev.Err)}, nil
	}
	t.Status, t.Class, t.Error = TRetrying, SendKeysError, ev.Err
	t.NextAt = ev.At.Add(p.backoff(t.Attempts))
	return []Action{audit(AuditRetry, string(SendKeysError), ev.Err)}, nil
}

// delivered records a delivery that reached the agent and opens the first
// ack window; a trigger queued behind a running turn has none yet.
func (t *Trigger) delivered(p Policy, at time.Time, outcome string, turn *TurnRecord) {
	t.Status, t.Class, t.Error, t.Reached = Delivered, "", "", true
	t.Outcome, t.DeliveredAt, t.Turn, t.Waits = outcome, at, turn, 1
	t.AckBy = time.Time{}
	if outcome != "queued" {
		t.AckBy = at.Add(p.AckTimeout)
	}
}

func (t *Trigger) ack(at time.Time, source string) {
	t.Status, t.AckedAt, t.AckSource, t.Class, t.Error, t.NextAt = Acked, at, source, "", "", time.Time{}
}

func (t *Trigger) fail(at time.Time, class Class, why string) Action {
	t.Status, t.Class, t.Error, t.CompletedAt, t.NextAt = TFailed, class, why, at, time.Time{}
	return audit(AuditFailed, string(class), why)
}

// timeout ends the delivery of t with class (ACK_TIMEOUT, DEFER_TIMEOUT):
// the fallback starts, or, when there is none or it was taken, t fails.
func (t *Trigger) timeout(p Policy, at time.Time, class Class, why string) []Action {
	if p.FallbackTries <= 0 || t.Fallback != nil {
		if t.Fallback != nil {
			why = t.fallbackWhy(why)
		}
		return []Action{t.fail(at, class, why)}
	}
	t.Fallback = &Fallback{From: class, Why: why, Tries: 1, Started: at}
	t.Status, t.Class, t.Error, t.NextAt, t.AckBy = TFallbackResume, class, why, time.Time{}, time.Time{}
	return []Action{audit(AuditResumeStarted, string(class), why), {Kind: ActResume}}
}

// resumed applies the end of a resume try.
func (t *Trigger) resumed(p Policy, ev Event) []Action {
	f := t.Fallback
	if ev.Kind == EvResumed {
		a := ev.Answer
		t.Reached = true
		t.ack(ev.At, AckResume)
		t.Status, t.CompletedAt, t.Class, t.Error, t.Answer = Completed, ev.At, "", "", &a
		return []Action{audit(AuditResumeSucceeded, strconv.Itoa(f.Tries), ""), audit(AuditAck, AckResume, ""),
			audit(AuditCompleted, "answered", "fallback resume")}
	}
	f.Errors = append(f.Errors, ev.Err)
	acts := []Action{audit(AuditResumeFailed, strconv.Itoa(f.Tries), ev.Err)}
	if ev.Reached {
		// The resume handed the agent the envelope: another resume or a
		// fresh agent would show it to the agent twice.
		t.Reached = true
		if ev.Class != "" && ev.Class != FallbackRequired {
			// Its headless turn ran and ended without an answer.
			t.ack(ev.At, AckResume)
			t.Status, t.CompletedAt, t.Class, t.Error = Completed, ev.At, ev.Class, ev.Err
			return append(acts, audit(AuditAck, AckResume, ""), audit(AuditCompleted, "turn-error", ev.Err))
		}
		return append(acts, t.fail(ev.At, f.From, t.fallbackWhy("the resume may have reached the agent: it is not tried again")))
	}
	if f.Tries < p.FallbackTries && ev.Class != FallbackRequired {
		f.Tries++
		return append(acts, Action{Kind: ActResume})
	}
	if p.Spawn && !t.took() {
		t.Status = TSpawnRecovery
		return append(acts, audit(AuditSpawnStarted, string(f.From), ""), Action{Kind: ActSpawn})
	}
	why := ""
	if p.Spawn {
		why = "its delivery was confirmed: it reached the agent, and is never pasted again"
	}
	return append(acts, t.fail(ev.At, f.From, t.fallbackWhy(why)))
}

// took says whether the delivery of t was confirmed (the agent took it
// from its box, or queued it): it provably reached the agent, and no
// fresh agent is given it again.
func (t *Trigger) took() bool {
	return t.Outcome == "submitted" || t.Outcome == "queued"
}

// fallbackWhy is why a trigger whose fallback was taken failed.
func (t *Trigger) fallbackWhy(last string) string {
	f := t.Fallback
	why := f.Why
	if len(f.Errors) > 0 {
		why += "; fallback resume failed: " + strings.Join(f.Errors, "; ")
	}
	if last != "" {
		why += "; " + last
	}
	return why
}

// tick moves a trigger whose time came.
func (t *Trigger) tick(p Policy, at time.Time, busy bool) ([]Action, error) {
	switch t.Status {
	case TDeferred:
		if at.Before(t.NextAt) {
			return nil, ErrStale
		}
		return []Action{{Kind: ActProbe}}, nil
	case Delivered:
		if t.AckBy.IsZero() || at.Before(t.AckBy) {
			return nil, ErrStale
		}
		if t.Waits > p.Retries {
			if busy && t.took() {
				// It works on the turn the trigger started (an agent
				// whose only ack is its answer, a long turn): an agent at
				// work is not wedged, and is never stopped nor replaced.
				// Its answer, or the turn's timeout, ends the wait.
				t.AckBy = at.Add(p.AckTimeout)
				return nil, nil
			}
			return t.timeout(p, at, AckTimeout, fmt.Sprintf("no ack in %d windows of %s", t.Waits, p.AckTimeout)), nil
		}
		t.Status, t.NextAt = TRetrying, at.Add(p.backoff(t.Waits))
		return []Action{audit(AuditRetry, "ack-wait", fmt.Sprintf("window %d of %d ended", t.Waits, p.Retries+1))}, nil
	case TRetrying:
		if at.Before(t.NextAt) {
			return nil, ErrStale
		}
		if !t.Reached {
			// Provably never reached the agent: deliver again.
			t.Status, t.NextAt = TTriggering, time.Time{}
			t.Attempts++
			return []Action{{Kind: ActSend}}, nil
		}
		// It reached the agent: never again; wait once more.
		t.Status, t.NextAt = Delivered, time.Time{}
		t.Waits++
		t.AckBy = at.Add(p.AckTimeout)
		return nil, nil
	}
	return nil, ErrStale
}

// Due is when t next needs a tick (zero: only an event moves it).
func (t Trigger) Due() time.Time {
	switch t.Status {
	case TDeferred, TRetrying:
		return t.NextAt
	case Delivered:
		return t.AckBy
	}
	return time.Time{}
}

// RuntimeStatusOf is the status a runtime shows while t is its open
// trigger (Ready when t is over).
func RuntimeStatusOf(t Trigger) RuntimeStatus {
	switch t.Status {
	case Queued, TTriggering:
		return Triggering
	case Delivered:
		return AwaitingAck
	case TRetrying:
		return Retrying
	case TDeferred:
		if t.Class == BudgetExceeded {
			return OverBudget
		}
		return Deferred
	case TFallbackResume:
		return FallbackResume
	case TSpawnRecovery:
		return SpawnRecovery
	}
	return Ready
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
