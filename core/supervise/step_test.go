package supervise

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

func after(d time.Duration) time.Time { return t0.Add(d) }

// kinds lists the kinds of acts, audits as "audit:KIND".
func kinds(acts []Action) []string {
	var out []string
	for _, a := range acts {
		if a.Kind == ActAudit {
			out = append(out, "audit:"+a.Audit)
			continue
		}
		out = append(out, string(a.Kind))
	}
	return out
}

func trig(status TriggerStatus, mod ...func(*Trigger)) Trigger {
	t := Trigger{ID: "t1", Role: "claude", Thread: "default", Text: "x", Status: status, Created: t0}
	for _, m := range mod {
		m(&t)
	}
	return t
}

// TestPhaseTable is every edge of the trigger policy: from a status, on
// an event, to a status with its actions.
func TestPhaseTable(t *testing.T) {
	p := DefaultPolicy
	noFallback, noSpawn := p, p
	noFallback.FallbackTries, noSpawn.Spawn = 0, false
	reached := func(t *Trigger) { t.Reached, t.Waits, t.DeliveredAt, t.AckBy = true, 1, t0, t0.Add(p.AckTimeout) }
	busy := func(t *Trigger) { t.Class, t.DeferredAt, t.NextAt = OperatorBusy, t0, t0.Add(p.DeferRecheck) }
	tests := []struct {
		name string
		from Trigger
		ev   Event
		want TriggerStatus
		acts []string
		err  error
		then func(t *testing.T, got Trigger)
		// policy, when set, is used instead of p.
		policy *Policy
	}{
		{name: "recorded trigger is probed", from: trig(""), ev: Event{Kind: EvQueued, At: t0},
			want: Queued, acts: []string{"audit:trigger_queued", "probe"}},
		{name: "a forced trigger is audited as an override", from: trig("", func(t *Trigger) { t.Force, t.Actor, t.Why = true, "ops", "outage" }),
			ev: Event{Kind: EvQueued, At: t0}, want: Queued, acts: []string{"audit:trigger_queued", "audit:override", "probe"}},
		{name: "a free runtime gets it at once", from: trig(Queued), ev: Event{Kind: EvProbed, At: t0},
			want: TTriggering, acts: []string{"send"}, then: func(t *testing.T, got Trigger) { assert.Equal(t, 1, got.Attempts) }},
		{name: "a busy operator defers it", from: trig(Queued), ev: Event{Kind: EvProbed, At: t0, Class: OperatorBusy, Err: "draft"},
			want: TDeferred, acts: []string{"audit:trigger_deferred"},
			then: func(t *testing.T, got Trigger) {
				assert.Equal(t, after(5*time.Second), got.NextAt)
				assert.Equal(t, t0, got.DeferredAt)
			}},
		{name: "force goes by an operator who pressed a key", from: trig(Queued, func(t *Trigger) { t.Force = true }),
			ev: Event{Kind: EvProbed, At: t0, Class: OperatorBusy}, want: TTriggering, acts: []string{"send"}},
		{name: "force never goes into the operator's text", from: trig(Queued, func(t *Trigger) { t.Force = true }),
			ev: Event{Kind: EvProbed, At: t0, Class: OperatorBusy, Err: "draft", Held: true}, want: TDeferred,
			acts: []string{"audit:trigger_deferred"}, then: func(t *testing.T, got Trigger) { assert.Equal(t, 0, got.Attempts) }},
		{name: "a rate limit defers until the window allows", from: trig(Queued),
			ev:   Event{Kind: EvProbed, At: t0, Class: RateLimited, Until: after(30 * time.Second)},
			want: TDeferred, acts: []string{"audit:trigger_deferred"},
			then: func(t *testing.T, got Trigger) { assert.Equal(t, after(30*time.Second), got.NextAt) }},
		{name: "an unmanaged pane fails FALLBACK_REQUIRED", from: trig(Queued), ev: Event{Kind: EvProbed, At: t0, Class: FallbackRequired},
			want: TFailed, acts: []string{"audit:trigger_failed"}},
		{name: "a missing target fails", from: trig(Queued), ev: Event{Kind: EvProbed, At: t0, Class: TargetNotFound},
			want: TFailed, acts: []string{"audit:trigger_failed"}},
		{name: "a dead pane fails", from: trig(TDeferred, busy), ev: Event{Kind: EvProbed, At: after(5 * time.Second), Class: PaneDead},
			want: TFailed, acts: []string{"audit:trigger_failed"}},
		{name: "a deferred trigger is looked at when due", from: trig(TDeferred, busy), ev: Event{Kind: EvTick, At: after(5 * time.Second)},
			want: TDeferred, acts: []string{"probe"}},
		{name: "not before", from: trig(TDeferred, busy), ev: Event{Kind: EvTick, At: after(4 * time.Second)}, err: ErrStale},
		{name: "quiet starts the window", from: trig(TDeferred, busy), ev: Event{Kind: EvProbed, At: after(5 * time.Second)},
			want: TDeferred, then: func(t *testing.T, got Trigger) {
				assert.Equal(t, after(5*time.Second), got.QuietSince)
				assert.Equal(t, after(10*time.Second), got.NextAt)
			}},
		{name: "quiet for the window delivers", from: trig(TDeferred, busy, func(t *Trigger) { t.QuietSince = after(5 * time.Second) }),
			ev: Event{Kind: EvProbed, At: after(25 * time.Second)}, want: TTriggering, acts: []string{"send"}},
		{name: "busy again restarts the quiet window", from: trig(TDeferred, busy, func(t *Trigger) { t.QuietSince = after(5 * time.Second) }),
			ev: Event{Kind: EvProbed, At: after(15 * time.Second), Class: OperatorBusy}, want: TDeferred,
			then: func(t *testing.T, got Trigger) { assert.True(t, got.QuietSince.IsZero()) }},
		{name: "busy past the limit is DEFER_TIMEOUT: the session is resumed", from: trig(TDeferred, busy),
			ev: Event{Kind: EvProbed, At: after(60 * time.Second), Class: OperatorBusy}, want: TFallbackResume,
			acts: []string{"audit:fallback_resume_started", "resume"},
			then: func(t *testing.T, got Trigger) {
				assert.Equal(t, DeferTimeout, got.Class)
				require.NotNil(t, got.Fallback)
				assert.Equal(t, 1, got.Fallback.Tries)
				assert.Equal(t, DeferTimeout, got.Fallback.From)
			}},
		{name: "quiet too late is DEFER_TIMEOUT", from: trig(TDeferred, busy, func(t *Trigger) { t.QuietSince = after(50 * time.Second) }),
			ev: Event{Kind: EvProbed, At: after(60 * time.Second)}, want: TFallbackResume, acts: []string{"audit:fallback_resume_started", "resume"}},
		{name: "without a fallback DEFER_TIMEOUT fails", from: trig(TDeferred, busy, func(t *Trigger) { t.Fallback = &Fallback{From: AckTimeout, Spawned: true} }),
			ev: Event{Kind: EvProbed, At: after(60 * time.Second), Class: OperatorBusy}, want: TFailed, acts: []string{"audit:trigger_failed"},
			then: func(t *testing.T, got Trigger) { assert.Equal(t, DeferTimeout, got.Class) }},
		{name: "still rate limited: deferred again, audited once", from: trig(TDeferred, func(t *Trigger) { t.Class, t.NextAt = RateLimited, after(30*time.Second) }),
			ev: Event{Kind: EvProbed, At: after(30 * time.Second), Class: RateLimited, Until: after(45 * time.Second)}, want: TDeferred,
			then: func(t *testing.T, got Trigger) { assert.Equal(t, after(45*time.Second), got.NextAt) }},
		{name: "a rate limit without a future time rechecks", from: trig(Queued),
			ev: Event{Kind: EvProbed, At: t0, Class: RateLimited, Until: t0}, want: TDeferred, acts: []string{"audit:trigger_deferred"},
			then: func(t *testing.T, got Trigger) { assert.Equal(t, after(p.DeferRecheck), got.NextAt) }},
		{name: "a rate-limited trigger ticks into a look when due", from: trig(TDeferred, func(t *Trigger) { t.Class, t.NextAt = RateLimited, after(30*time.Second) }),
			ev: Event{Kind: EvTick, At: after(30 * time.Second)}, want: TDeferred, acts: []string{"probe"}},
		{name: "a blocked thread fails THREAD_AUTO_BLOCKED", from: trig(TDeferred, func(t *Trigger) { t.Class, t.NextAt = RateLimited, after(30*time.Second) }),
			ev: Event{Kind: EvProbed, At: after(30 * time.Second), Class: ThreadBlocked, Err: "the same answer"}, want: TFailed, acts: []string{"audit:trigger_failed"},
			then: func(t *testing.T, got Trigger) { assert.Equal(t, ThreadBlocked, got.Class) }},
		{name: "the rate limit lifted", from: trig(TDeferred, func(t *Trigger) { t.Class, t.NextAt = RateLimited, after(30*time.Second) }),
			ev: Event{Kind: EvProbed, At: after(30 * time.Second)}, want: TTriggering, acts: []string{"send"}},
		{name: "a spent budget holds it, audited once", from: trig(Queued),
			ev: Event{Kind: EvProbed, At: t0, Class: BudgetExceeded, Err: "s/a spent 120 of its 100 tokens"}, want: TDeferred,
			acts: []string{"audit:trigger_deferred"}, then: func(t *testing.T, got Trigger) {
				assert.Equal(t, BudgetExceeded, got.Class)
				assert.Equal(t, after(p.DeferRecheck), got.NextAt)
			}},
		{name: "still spent: held on, past any deferral limit, not audited again",
			from: trig(TDeferred, func(t *Trigger) { t.Class, t.NextAt = BudgetExceeded, after(time.Hour) }),
			ev:   Event{Kind: EvProbed, At: after(time.Hour), Class: BudgetExceeded}, want: TDeferred,
			then: func(t *testing.T, got Trigger) { assert.Equal(t, after(time.Hour+p.DeferRecheck), got.NextAt) }},
		{name: "a held trigger ticks into a look when due", from: trig(TDeferred, func(t *Trigger) { t.Class, t.NextAt = BudgetExceeded, after(30*time.Second) }),
			ev: Event{Kind: EvTick, At: after(30 * time.Second)}, want: TDeferred, acts: []string{"probe"}},
		{name: "a budget that lets it go (a new day, a limit raised): sent", from: trig(TDeferred, func(t *Trigger) { t.Class, t.NextAt = BudgetExceeded, after(30*time.Second) }),
			ev: Event{Kind: EvProbed, At: after(30 * time.Second)}, want: TTriggering, acts: []string{"send"}},
		{name: "the operator's forced trigger goes past a spent budget, audited", from: trig(Queued, func(t *Trigger) { t.Force = true }),
			ev: Event{Kind: EvProbed, At: t0, Class: BudgetExceeded, Err: "spent"}, want: TTriggering, acts: []string{"audit:override", "send"}},
		{name: "submitted opens the ack window and awaits the answer", from: trig(TTriggering),
			ev:   Event{Kind: EvSent, At: t0, Outcome: "submitted", Turn: &TurnRecord{Pane: "%1"}},
			want: Delivered, acts: []string{"audit:trigger_sent", "await"},
			then: func(t *testing.T, got Trigger) {
				assert.Equal(t, after(8*time.Second), got.AckBy)
				assert.True(t, got.Reached)
			}},
		{name: "the agent's own submit event acks at once", from: trig(TTriggering),
			ev: Event{Kind: EvSent, At: t0, Outcome: "submitted", Acked: true}, want: Acked,
			acts: []string{"audit:trigger_sent", "await", "audit:ack_received"},
			then: func(t *testing.T, got Trigger) { assert.Equal(t, AckEvent, got.AckSource) }},
		{name: "queued behind a turn has no ack clock yet", from: trig(TTriggering),
			ev: Event{Kind: EvSent, At: t0, Outcome: "queued"}, want: Delivered, acts: []string{"audit:trigger_sent", "await"},
			then: func(t *testing.T, got Trigger) { assert.True(t, got.AckBy.IsZero()) }},
		{name: "the agent turning idle starts it", from: trig(Delivered, func(t *Trigger) { t.Reached, t.Waits = true, 1 }),
			ev: Event{Kind: EvAgentIdle, At: after(40 * time.Second)}, want: Delivered,
			then: func(t *testing.T, got Trigger) { assert.Equal(t, after(48*time.Second), got.AckBy) }},
		{name: "an unconfirmed failure that pasted is delivered, never again", from: trig(TTriggering),
			ev: Event{Kind: EvSendFailed, At: t0, Class: SendKeysError, Reached: true}, want: Delivered, acts: []string{"audit:trigger_sent", "await"}},
		{name: "typing began before the paste: deferred", from: trig(TTriggering),
			ev: Event{Kind: EvSendFailed, At: t0, Class: OperatorBusy}, want: TDeferred, acts: []string{"audit:trigger_deferred"}},
		{name: "a send error that pasted nothing is retried after a backoff", from: trig(TTriggering, func(t *Trigger) { t.Attempts = 1 }),
			ev: Event{Kind: EvSendFailed, At: t0, Class: SendKeysError}, want: TRetrying, acts: []string{"audit:trigger_retry"},
			then: func(t *testing.T, got Trigger) { assert.Equal(t, after(2*time.Second), got.NextAt) }},
		{name: "and sent again when due", from: trig(TRetrying, func(t *Trigger) { t.Attempts, t.NextAt = 1, after(2*time.Second) }),
			ev: Event{Kind: EvTick, At: after(2 * time.Second)}, want: TTriggering, acts: []string{"send"},
			then: func(t *testing.T, got Trigger) { assert.Equal(t, 2, got.Attempts) }},
		{name: "send errors past the retries fail", from: trig(TTriggering, func(t *Trigger) { t.Attempts = 3 }),
			ev: Event{Kind: EvSendFailed, At: t0, Class: SendKeysError}, want: TFailed, acts: []string{"audit:trigger_failed"}},
		{name: "a pane dead at the send fails", from: trig(TTriggering), ev: Event{Kind: EvSendFailed, At: t0, Class: PaneDead},
			want: TFailed, acts: []string{"audit:trigger_failed"}},
		{name: "a pane that went during the delivery before the agent took it: the trigger waits for the restart",
			from: trig(TTriggering, func(t *Trigger) { t.Attempts = 1 }),
			ev:   Event{Kind: EvPaneGone, At: t0, Class: TargetNotFound, Err: "pane %1: no such pane"},
			want: Queued, acts: []string{"audit:trigger_retry"},
			then: func(t *testing.T, got Trigger) {
				assert.False(t, got.Reached)
				assert.Empty(t, got.Class)
			}},
		{name: "a pane that went after the agent took it: PANE_DEAD, never delivered again",
			from: trig(TTriggering, func(t *Trigger) { t.Attempts = 1 }),
			ev:   Event{Kind: EvPaneGone, At: t0, Class: TargetNotFound, Reached: true, Err: "pane %1: no such pane"},
			want: TFailed, acts: []string{"audit:trigger_failed"},
			then: func(t *testing.T, got Trigger) {
				assert.True(t, got.Reached)
				assert.Equal(t, PaneDead, got.Class)
			}},
		{name: "a pane gone is stale once the send reported", from: trig(Delivered, reached),
			ev: Event{Kind: EvPaneGone, At: t0}, err: ErrStale},
		{name: "no ack in the window: back off", from: trig(Delivered, reached), ev: Event{Kind: EvTick, At: after(8 * time.Second)},
			want: TRetrying, acts: []string{"audit:trigger_retry"},
			then: func(t *testing.T, got Trigger) { assert.Equal(t, after(10*time.Second), got.NextAt) }},
		{name: "the backoff over, a reached trigger is waited for again, not resent", from: trig(TRetrying, reached, func(t *Trigger) { t.NextAt = after(10 * time.Second) }),
			ev: Event{Kind: EvTick, At: after(10 * time.Second)}, want: Delivered,
			then: func(t *testing.T, got Trigger) {
				assert.Equal(t, 2, got.Waits)
				assert.Equal(t, after(18*time.Second), got.AckBy)
			}},
		{name: "the second backoff doubles", from: trig(Delivered, reached, func(t *Trigger) { t.Waits, t.AckBy = 2, after(18*time.Second) }),
			ev: Event{Kind: EvTick, At: after(18 * time.Second)}, want: TRetrying, acts: []string{"audit:trigger_retry"},
			then: func(t *testing.T, got Trigger) { assert.Equal(t, after(22*time.Second), got.NextAt) }},
		{name: "the last window over is ACK_TIMEOUT: the session is resumed", from: trig(Delivered, reached, func(t *Trigger) { t.Waits, t.AckBy = 3, after(30*time.Second) }),
			ev: Event{Kind: EvTick, At: after(30 * time.Second)}, want: TFallbackResume, acts: []string{"audit:fallback_resume_started", "resume"},
			then: func(t *testing.T, got Trigger) {
				assert.Equal(t, AckTimeout, got.Class)
				assert.Equal(t, AckTimeout, got.Fallback.From)
				assert.Zero(t, got.Due(), "a resume reports; no tick moves it")
			}},
		{name: "an agent at work on a confirmed delivery is not timed out", from: trig(Delivered, reached, func(t *Trigger) { t.Waits, t.AckBy, t.Outcome = 3, after(30*time.Second), "submitted" }),
			ev: Event{Kind: EvTick, At: after(30 * time.Second), Busy: true}, want: Delivered,
			then: func(t *testing.T, got Trigger) {
				assert.Equal(t, after(38*time.Second), got.AckBy, "another window")
				assert.Nil(t, got.Fallback)
			}},
		{name: "a busy agent whose delivery was never confirmed is timed out", from: trig(Delivered, reached, func(t *Trigger) { t.Waits, t.AckBy, t.Outcome = 3, after(30*time.Second), "unconfirmed" }),
			ev: Event{Kind: EvTick, At: after(30 * time.Second), Busy: true}, want: TFallbackResume, acts: []string{"audit:fallback_resume_started", "resume"}},
		{name: "a confirmed delivery whose resumes failed is never pasted again", from: trig(TFallbackResume, reached, func(t *Trigger) {
			t.Outcome, t.Fallback = "submitted", &Fallback{From: AckTimeout, Why: "no ack", Tries: 2, Started: t0}
		}), ev: Event{Kind: EvResumeFailed, At: after(50 * time.Second), Err: "no session"}, want: TFailed,
			acts: []string{"audit:fallback_resume_failed", "audit:trigger_failed"},
			then: func(t *testing.T, got Trigger) {
				assert.Equal(t, AckTimeout, got.Class)
				assert.Contains(t, got.Error, "never pasted again")
			}},
		{name: "ACK_TIMEOUT again after a spawn fails", from: trig(Delivered, reached, func(t *Trigger) {
			t.Waits, t.AckBy, t.Fallback = 3, after(30*time.Second), &Fallback{From: AckTimeout, Why: "no ack", Tries: 2, Spawned: true}
		}), ev: Event{Kind: EvTick, At: after(30 * time.Second)}, want: TFailed, acts: []string{"audit:trigger_failed"},
			then: func(t *testing.T, got Trigger) { assert.Equal(t, AckTimeout, got.Class) }},
		{name: "without fallback tries ACK_TIMEOUT fails", from: trig(Delivered, reached, func(t *Trigger) { t.Waits, t.AckBy = 3, after(30*time.Second) }),
			ev: Event{Kind: EvTick, At: after(30 * time.Second)}, want: TFailed, acts: []string{"audit:trigger_failed"}, policy: &noFallback},
		{name: "the resumed session answers: completed", from: trig(TFallbackResume, reached, func(t *Trigger) { t.Fallback = &Fallback{From: AckTimeout, Why: "no ack", Tries: 1, Started: t0} }),
			ev: Event{Kind: EvResumed, At: after(40 * time.Second), Answer: "fixed"}, want: Completed,
			acts: []string{"audit:fallback_resume_succeeded", "audit:ack_received", "audit:trigger_completed"},
			then: func(t *testing.T, got Trigger) {
				require.NotNil(t, got.Answer)
				assert.Equal(t, "fixed", *got.Answer)
				assert.Equal(t, AckResume, got.AckSource)
				assert.Empty(t, got.Class)
			}},
		{name: "a resume that failed before the agent read the envelope is tried once more", from: trig(TFallbackResume, reached, func(t *Trigger) { t.Fallback = &Fallback{From: AckTimeout, Why: "no ack", Tries: 1, Started: t0} }),
			ev: Event{Kind: EvResumeFailed, At: after(40 * time.Second), Err: "thread has an active writer"}, want: TFallbackResume,
			acts: []string{"audit:fallback_resume_failed", "resume"},
			then: func(t *testing.T, got Trigger) { assert.Equal(t, 2, got.Fallback.Tries) }},
		{name: "the second failed resume spawns a fresh agent", from: trig(TFallbackResume, reached, func(t *Trigger) { t.Fallback = &Fallback{From: AckTimeout, Why: "no ack", Tries: 1, Started: t0} }, func(t *Trigger) { t.Fallback.Tries = 2 }),
			ev: Event{Kind: EvResumeFailed, At: after(50 * time.Second), Err: "thread has an active writer"}, want: TSpawnRecovery,
			acts: []string{"audit:fallback_resume_failed", "audit:spawn_recovery_started", "spawn"}},
		{name: "a resume whose headless turn ran and failed completes it with the turn's class, never tried again",
			from: trig(TFallbackResume, func(t *Trigger) {
				t.Class, t.Fallback = DeferTimeout, &Fallback{From: DeferTimeout, Why: "operator busy", Tries: 1, Started: t0}
			}),
			ev:   Event{Kind: EvResumeFailed, At: after(40 * time.Second), Class: TurnFailed, Reached: true, Err: "gemini: API error 500"},
			want: Completed, acts: []string{"audit:fallback_resume_failed", "audit:ack_received", "audit:trigger_completed"},
			then: func(t *testing.T, got Trigger) {
				assert.True(t, got.Reached)
				assert.Equal(t, TurnFailed, got.Class)
				assert.Equal(t, AckResume, got.AckSource)
				assert.Nil(t, got.Answer)
				assert.Equal(t, "gemini: API error 500", got.Error)
				assert.Equal(t, 1, got.Fallback.Tries)
			}},
		{name: "a resume that may have reached the agent fails with the first class, never tried again nor spawned",
			from: trig(TFallbackResume, func(t *Trigger) {
				t.Class, t.Fallback = DeferTimeout, &Fallback{From: DeferTimeout, Why: "operator busy", Tries: 1, Started: t0}
			}),
			ev:   Event{Kind: EvResumeFailed, At: after(40 * time.Second), Reached: true, Err: "killed"},
			want: TFailed, acts: []string{"audit:fallback_resume_failed", "audit:trigger_failed"},
			then: func(t *testing.T, got Trigger) {
				assert.True(t, got.Reached)
				assert.Equal(t, DeferTimeout, got.Class)
				assert.Contains(t, got.Error, "may have reached the agent")
			}},
		{name: "the last resume that ran and failed spawns no fresh agent", from: trig(TFallbackResume, reached, func(t *Trigger) {
			t.Fallback = &Fallback{From: AckTimeout, Why: "no ack", Tries: 2, Started: t0}
		}), ev: Event{Kind: EvResumeFailed, At: after(50 * time.Second), Class: TurnFailed, Reached: true, Err: "claude: API Error: 500"},
			want: Completed, acts: []string{"audit:fallback_resume_failed", "audit:ack_received", "audit:trigger_completed"}},
		{name: "a resume that cannot work spawns at once", from: trig(TFallbackResume, reached, func(t *Trigger) { t.Fallback = &Fallback{From: AckTimeout, Why: "no ack", Tries: 1, Started: t0} }),
			ev: Event{Kind: EvResumeFailed, At: after(40 * time.Second), Class: FallbackRequired, Err: "no session known"}, want: TSpawnRecovery,
			acts: []string{"audit:fallback_resume_failed", "audit:spawn_recovery_started", "spawn"}},
		{name: "without spawn the failed resumes fail it with the first class", from: trig(TFallbackResume, reached, func(t *Trigger) { t.Fallback = &Fallback{From: AckTimeout, Why: "no ack", Tries: 1, Started: t0} }, func(t *Trigger) { t.Fallback.Tries = 2 }),
			ev: Event{Kind: EvResumeFailed, At: after(50 * time.Second), Err: "thread has an active writer"}, want: TFailed, policy: &noSpawn,
			acts: []string{"audit:fallback_resume_failed", "audit:trigger_failed"},
			then: func(t *testing.T, got Trigger) {
				assert.Equal(t, AckTimeout, got.Class)
				assert.Contains(t, got.Error, "fallback resume failed: thread has an active writer")
			}},
		{name: "a fresh agent takes the trigger with the thread's summary", from: trig(TSpawnRecovery, reached, func(t *Trigger) { t.Fallback = &Fallback{From: AckTimeout, Why: "no ack", Tries: 1, Started: t0} }, func(t *Trigger) { t.Turn = &TurnRecord{Pane: "%1"} }),
			ev: Event{Kind: EvSpawned, At: after(60 * time.Second), Preface: "[summary]"}, want: Queued,
			acts: []string{"audit:spawn_recovery_ready", "probe"},
			then: func(t *testing.T, got Trigger) {
				assert.False(t, got.Reached, "no agent of the new session has it")
				assert.True(t, got.Fallback.Spawned)
				assert.Nil(t, got.Turn)
				assert.Equal(t, "[summary]\n[BRIDGE_TRIGGER id=t1 thread=default]\nx\n[/BRIDGE_TRIGGER]", Envelope(got))
			}},
		{name: "no fresh agent: failed", from: trig(TSpawnRecovery, reached, func(t *Trigger) { t.Fallback = &Fallback{From: AckTimeout, Why: "no ack", Tries: 1, Started: t0} }),
			ev: Event{Kind: EvSpawnFailed, At: after(60 * time.Second), Err: "the operator is typing"}, want: TFailed,
			acts: []string{"audit:trigger_failed"},
			then: func(t *testing.T, got Trigger) {
				assert.Equal(t, AckTimeout, got.Class)
				assert.Contains(t, got.Error, "spawn recovery failed: the operator is typing")
			}},
		{name: "restart while resuming: the try is taken up, not started twice", from: trig(TFallbackResume, reached, func(t *Trigger) { t.Fallback = &Fallback{From: AckTimeout, Why: "no ack", Tries: 1, Started: t0} }),
			ev: Event{Kind: EvRestart, At: t0}, want: TFallbackResume, acts: []string{"resume"},
			then: func(t *testing.T, got Trigger) { assert.Equal(t, 1, got.Fallback.Tries) }},
		{name: "restart while spawning spawns", from: trig(TSpawnRecovery, reached, func(t *Trigger) { t.Fallback = &Fallback{From: AckTimeout, Why: "no ack", Tries: 1, Started: t0} }),
			ev: Event{Kind: EvRestart, At: t0}, want: TSpawnRecovery, acts: []string{"spawn"}},
		{name: "an answer of the interactive turn while resuming is stale", from: trig(TFallbackResume, reached, func(t *Trigger) { t.Fallback = &Fallback{From: AckTimeout, Why: "no ack", Tries: 1, Started: t0} }),
			ev: Event{Kind: EvAnswer, At: t0, Answer: "late"}, err: ErrStale},
		{name: "a resume report after the spawn is stale", from: trig(TSpawnRecovery, reached, func(t *Trigger) { t.Fallback = &Fallback{From: AckTimeout, Why: "no ack", Tries: 1, Started: t0} }),
			ev: Event{Kind: EvResumed, At: t0, Answer: "late"}, err: ErrStale},
		{name: "a cursor ack", from: trig(Delivered, reached), ev: Event{Kind: EvAck, At: after(time.Second), Source: AckCursor},
			want: Acked, acts: []string{"audit:ack_received"}},
		{name: "an ack while backing off", from: trig(TRetrying, reached), ev: Event{Kind: EvAck, At: after(9 * time.Second), Source: AckHeartbeat},
			want: Acked, acts: []string{"audit:ack_received"}},
		{name: "an ack before the delivery's report", from: trig(TTriggering), ev: Event{Kind: EvAck, At: t0, Source: AckEvent},
			want: Acked, acts: []string{"audit:ack_received"}, then: func(t *testing.T, got Trigger) { assert.True(t, got.Reached) }},
		{name: "an ack of a queued trigger is stale", from: trig(Queued), ev: Event{Kind: EvAck, At: t0}, err: ErrStale},
		{name: "the answer completes it", from: trig(Acked, reached), ev: Event{Kind: EvAnswer, At: after(3 * time.Second), Answer: "done"},
			want: Completed, acts: []string{"audit:trigger_completed"},
			then: func(t *testing.T, got Trigger) { require.NotNil(t, got.Answer); assert.Equal(t, "done", *got.Answer) }},
		{name: "an answer without an earlier ack acks too", from: trig(Delivered, reached), ev: Event{Kind: EvAnswer, At: after(3 * time.Second), Answer: "done"},
			want: Completed, acts: []string{"audit:ack_received", "audit:trigger_completed"},
			then: func(t *testing.T, got Trigger) { assert.Equal(t, AckAnswer, got.AckSource) }},
		{name: "a failed turn completes with its error", from: trig(Acked, reached), ev: Event{Kind: EvTurnError, At: after(3 * time.Second), Err: "API error"},
			want: Completed, acts: []string{"audit:trigger_completed"},
			then: func(t *testing.T, got Trigger) { assert.Equal(t, "API error", got.Error); assert.Nil(t, got.Answer) }},
		{name: "a pane that died in the turn fails", from: trig(Acked, reached), ev: Event{Kind: EvTurnError, At: after(3 * time.Second), Class: PaneDead},
			want: TFailed, acts: []string{"audit:trigger_failed"}},
		{name: "restart mid-delivery, text found: delivered, never resent", from: trig(TTriggering, func(t *Trigger) { t.Turn = &TurnRecord{Pane: "%1"} }),
			ev: Event{Kind: EvRestart, At: t0, Reached: true}, want: Delivered, acts: []string{"audit:trigger_sent", "await"},
			then: func(t *testing.T, got Trigger) {
				assert.NotNil(t, got.Turn, "the turn saved before the send is waited for")
			}},
		{name: "restart mid-delivery, nothing found: queued again", from: trig(TTriggering), ev: Event{Kind: EvRestart, At: t0},
			want: Queued, acts: []string{"probe"}},
		{name: "restart while awaiting the answer: await again", from: trig(Acked, reached, func(t *Trigger) { t.Turn = &TurnRecord{Pane: "%1"} }),
			ev: Event{Kind: EvRestart, At: t0}, want: Acked, acts: []string{"await"}},
		{name: "restart of a queued trigger probes", from: trig(Queued), ev: Event{Kind: EvRestart, At: t0}, want: Queued, acts: []string{"probe"}},
		{name: "restart of a deferred one waits for its tick", from: trig(TDeferred, busy), ev: Event{Kind: EvRestart, At: t0}, want: TDeferred},
		{name: "a completed trigger takes nothing more", from: trig(Completed), ev: Event{Kind: EvAck, At: t0}, err: ErrStale},
		{name: "a failed trigger takes no answer", from: trig(TFailed), ev: Event{Kind: EvAnswer, At: t0}, err: ErrStale},
		{name: "an unknown event", from: trig(Queued), ev: Event{Kind: "bogus", At: t0}, err: ErrBadInput},
		{name: "stalled agent: a queued trigger takes the fallback", from: trig(Queued), ev: Event{Kind: EvStalled, At: t0, Err: "hung"},
			want: TFallbackResume, acts: []string{"audit:fallback_resume_started", "resume"},
			then: func(t *testing.T, got Trigger) {
				assert.Equal(t, AgentStalled, got.Fallback.From)
				assert.Equal(t, AgentStalled, got.Class)
			}},
		{name: "stalled agent: a deferred trigger takes the fallback", from: trig(TDeferred, busy), ev: Event{Kind: EvStalled, At: t0},
			want: TFallbackResume, acts: []string{"audit:fallback_resume_started", "resume"}},
		{name: "stalled agent: one delivered into its queue takes the fallback",
			from: trig(Delivered, func(t *Trigger) { t.Reached, t.Waits, t.DeliveredAt, t.Outcome = true, 1, t0, "queued" }),
			ev:   Event{Kind: EvStalled, At: after(time.Minute)}, want: TFallbackResume, acts: []string{"audit:fallback_resume_started", "resume"}},
		{name: "stalled agent: one whose ack window runs waits it out", from: trig(Delivered, reached), ev: Event{Kind: EvStalled, At: t0}, err: ErrStale},
		{name: "stalled agent: the trigger of the hung turn waits for it", from: trig(Acked, reached), ev: Event{Kind: EvStalled, At: t0}, err: ErrStale},
		{name: "stalled agent without fallbacks: the trigger fails AGENT_STALLED", from: trig(Queued), ev: Event{Kind: EvStalled, At: t0, Err: "hung"},
			policy: &noFallback, want: TFailed, acts: []string{"audit:trigger_failed"},
			then: func(t *testing.T, got Trigger) { assert.Equal(t, AgentStalled, got.Class) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pol := p
			if tc.policy != nil {
				pol = *tc.policy
			}
			got, acts, err := Step(pol, tc.from, tc.ev)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				assert.Equal(t, tc.from, got, "a refused event leaves the trigger as it was")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got.Status)
			assert.Equal(t, tc.acts, kinds(acts))
			assert.Equal(t, tc.ev.At, got.Updated)
			if tc.then != nil {
				tc.then(t, got)
			}
		})
	}
}

// TestDeferredAroundAnOperator runs a deferral in virtual time: the
// operator types for 30 s, then the pane is quiet; the trigger is looked
// at every 5 s and goes once it was quiet for 20 s.
func TestDeferredAroundAnOperator(t *testing.T) {
	p := DefaultPolicy
	tr, _, err := Step(p, trig(""), Event{Kind: EvQueued, At: t0})
	require.NoError(t, err)
	typingUntil := after(30 * time.Second)
	now := t0
	var sentAt time.Time
	for i := 0; i < 100 && sentAt.IsZero(); i++ {
		class := Class("")
		if now.Before(typingUntil) {
			class = OperatorBusy
		}
		var acts []Action
		tr, acts, err = Step(p, tr, Event{Kind: EvProbed, At: now, Class: class})
		require.NoError(t, err)
		if tr.Status == TTriggering {
			sentAt = now
			break
		}
		require.Equal(t, TDeferred, tr.Status, "%v", acts)
		now = tr.NextAt
		_, acts, err = Step(p, tr, Event{Kind: EvTick, At: now})
		require.NoError(t, err)
		require.Equal(t, []string{"probe"}, kinds(acts))
	}
	assert.Equal(t, after(50*time.Second), sentAt, "quiet from 30 s, delivered 20 s later")
}

// TestRandomWalks applies random events in random order to triggers and
// holds the invariants: a trigger that reached the agent is never sent
// again to the same agent session (only a spawned fresh one gets it),
// sends are bounded by the retries, resumes by the fallback's tries,
// completed and failed are final, and every failure has a class.
func TestRandomWalks(t *testing.T) {
	p := DefaultPolicy
	classes := []Class{"", "", "", OperatorBusy, RateLimited, BudgetExceeded, PaneDead, SendKeysError, TargetNotFound}
	outcomes := []string{"submitted", "queued", "unconfirmed"}
	sources := []string{AckCursor, AckHeartbeat, AckEvent, AckLine}
	kindsOf := []EventKind{EvProbed, EvSent, EvSendFailed, EvAgentIdle, EvAck, EvAnswer, EvTurnError, EvTick, EvTick, EvTick, EvRestart,
		EvResumed, EvResumeFailed, EvSpawned, EvSpawnFailed, EvPaneGone}
	seeds := uint64(2000)
	if testing.Short() {
		seeds = 200 // the inner loop's sample; the full run walks all
	}
	for seed := uint64(0); seed < seeds; seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		tr, _, err := Step(p, trig(""), Event{Kind: EvQueued, At: t0})
		require.NoError(t, err)
		now := t0
		sends, reachedAt, spawns, resumeReachedAt := 0, -1, 0, -1
		for i := 0; i < 60; i++ {
			now = now.Add(time.Duration(r.IntN(6000)) * time.Millisecond)
			ev := Event{Kind: kindsOf[r.IntN(len(kindsOf))], At: now, Class: classes[r.IntN(len(classes))],
				Outcome: outcomes[r.IntN(len(outcomes))], Acked: r.IntN(4) == 0, Reached: r.IntN(2) == 0,
				Source: sources[r.IntN(len(sources))], Until: now.Add(time.Duration(r.IntN(20)) * time.Second)}
			before := tr
			next, acts, err := Step(p, tr, ev)
			if err != nil {
				if ev.Kind == EvProbed && errors.Is(err, ErrBadInput) {
					continue // a probe reports no send error
				}
				require.ErrorIs(t, err, ErrStale, "seed %d step %d: %v", seed, i, err)
				require.Equal(t, before, next)
				continue
			}
			tr = next
			if !before.Status.Open() {
				t.Fatalf("seed %d: %s moved on from %s", seed, ev.Kind, before.Status)
			}
			if ev.Kind == EvSpawned {
				spawns++
				reachedAt, sends = -1, 0 // a fresh agent session
				require.Equal(t, 1, spawns, "seed %d: spawned twice", seed)
			}
			if tr.Fallback != nil {
				require.LessOrEqual(t, tr.Fallback.Tries, p.FallbackTries, "seed %d", seed)
			}
			for _, a := range acts {
				if (a.Kind == ActResume || a.Kind == ActSpawn) && resumeReachedAt >= 0 {
					t.Fatalf("seed %d step %d: %s after a resume reached the agent at step %d", seed, i, a.Kind, resumeReachedAt)
				}
				if a.Kind != ActSend {
					continue
				}
				sends++
				if reachedAt >= 0 {
					t.Fatalf("seed %d step %d: sent again after it reached the agent at step %d", seed, i, reachedAt)
				}
			}
			if tr.Reached && reachedAt < 0 {
				reachedAt = i
			}
			if ev.Kind == EvResumeFailed && ev.Reached {
				resumeReachedAt = i
			}
			if tr.Status == TFailed {
				require.NotEmpty(t, tr.Class, "seed %d: a failure without a class", seed)
			}
		}
		assert.LessOrEqual(t, sends, p.Retries+1+20, "seed %d", seed) // deferrals may re-probe, sends stay bounded
	}
}
