package sim

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/supervise"
)

// stallFx is an agent that hangs in the turn of trigger "hung": every
// later trigger is queued behind it (the agent is busy), no turn ends, and
// its screen (busy line aside) changes only when alive says so. Its
// headless resume answers.
type stallFx struct {
	*agentFx
	alive  bool // the screen changes at every look
	smu    sync.Mutex
	looks  int
	texts  []string // what each Send delivered
	resume []supervise.Trigger
}

func (f *stallFx) Scan(ctx context.Context) ([]supervise.Seen, error) {
	seen, _ := f.agentFx.Scan(ctx)
	seen[0].AgentSession = "sess-1"
	return seen, nil
}

func (f *stallFx) Send(ctx context.Context, rt supervise.Runtime, text string) supervise.SendReport {
	f.smu.Lock()
	f.texts = append(f.texts, text)
	f.smu.Unlock()
	if idOf(text) == "hung" {
		return f.agentFx.Send(ctx, rt, text)
	}
	return supervise.SendReport{Outcome: "queued"}
}

func (f *stallFx) Await(ctx context.Context, _ supervise.Runtime, _ supervise.TurnRecord) (string, supervise.Class, error) {
	<-ctx.Done() // the turn never ends
	return "", "", ctx.Err()
}

func (f *stallFx) Look(_ context.Context, _ supervise.Runtime, t supervise.Trigger) supervise.Sighting {
	s := supervise.Sighting{Reached: true}
	if t.ID == "hung" {
		s.Ack = supervise.AckEvent
	}
	return s
}

func (f *stallFx) Resume(_ context.Context, _ supervise.Runtime, t supervise.Trigger) supervise.ResumeReport {
	f.smu.Lock()
	f.resume = append(f.resume, t)
	f.smu.Unlock()
	return supervise.ResumeReport{Answer: "resumed answer to " + t.ID, Reached: true}
}

func (f *stallFx) Pulses(_ context.Context, rts []supervise.Runtime) map[string]supervise.Pulse {
	f.smu.Lock()
	defer f.smu.Unlock()
	f.looks++
	screen := "same"
	if f.alive {
		screen = strings.Repeat("x", f.looks)
	}
	out := map[string]supervise.Pulse{}
	for _, rt := range rts {
		out[rt.Role] = supervise.Pulse{Seen: true, Busy: true, Screen: screen}
	}
	return out
}

// TestSupervisorStalledAgentHandsQueuedTriggersToTheFallback: an agent
// hangs in a turn; a trigger queued behind it waits for no turn timeout:
// after StallAfter without a sign of life the runtime is stalled (audited,
// shown) and the trigger is answered by the agent's resumed session. An
// agent whose screen keeps changing is alive: the trigger waits.
func TestSupervisorStalledAgentHandsQueuedTriggersToTheFallback(t *testing.T) {
	const stallAfter = 2 * time.Minute
	for _, tc := range []struct {
		name  string
		alive bool
	}{
		{"hung: stalled, the queued trigger resumed", false},
		{"alive: the queued trigger waits", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			clk := NewClock()
			store := openStore(t)
			fx := &stallFx{agentFx: &agentFx{clock: clk, seen: map[string]int{}, resumed: map[string]int{}}, alive: tc.alive}
			start := clk.Now()
			submit(t, store, clk, "hung", "w2")
			lctx, cancel := context.WithCancel(ctx)
			l := &supervise.Loop{Store: store, Clock: clk, Policy: supervise.DefaultPolicy, Limits: supervise.DefaultLimits,
				Recovery: supervise.DefaultRecoveryPolicy, Effects: fx, Wake: make(chan struct{}), ScanEvery: 5 * time.Second,
				StallAfter: stallAfter}
			done := make(chan error, 1)
			go func() { done <- l.Run(lctx) }()
			w2 := func() supervise.Trigger {
				tr, err := store.Trigger(ctx, "w2")
				require.NoError(t, err)
				return tr
			}
			var stalledStatus bool
			require.Eventually(t, func() bool {
				if rt, err := store.Runtime(ctx, "claude"); err == nil && rt.Status == supervise.Stalled {
					stalledStatus = true
				}
				if tc.alive {
					return clk.Now().Sub(start) > 5*stallAfter // five stall windows alive
				}
				return w2().Status == supervise.Completed
			}, time.Minute, time.Millisecond) // a hang guard: each virtual step is real SQLite work
			cancel()
			require.NoError(t, <-done)

			evs, err := store.Events(ctx, 0, 0)
			require.NoError(t, err)
			var stalls []supervise.AuditEvent
			for _, e := range evs {
				if e.Kind == supervise.AuditStalled {
					stalls = append(stalls, e)
				}
			}
			got := w2()
			hung, err := store.Trigger(ctx, "hung")
			require.NoError(t, err)
			assert.Equal(t, supervise.Acked, hung.Status, "the hung turn's own trigger waits for its turn")
			if tc.alive {
				assert.Empty(t, stalls)
				assert.False(t, stalledStatus, "never shown stalled")
				assert.Equal(t, supervise.Queued, got.Status, "one trigger at a time: it waits behind the turn")
				assert.Empty(t, fx.resume)
				return
			}
			require.Len(t, stalls, 1, "stalled once")
			assert.Equal(t, "claude", stalls[0].Role)
			assert.True(t, stalledStatus, "the runtime was shown stalled")
			require.NotNil(t, got.Answer)
			assert.Equal(t, "resumed answer to w2", *got.Answer)
			assert.Equal(t, supervise.AckResume, got.AckSource)
			require.NotNil(t, got.Fallback)
			assert.Equal(t, supervise.AgentStalled, got.Fallback.From)
			require.Len(t, fx.resume, 1, "one resume")
			waited := got.CompletedAt.Sub(got.Created)
			assert.GreaterOrEqual(t, waited, stallAfter, "not before the stall")
			assert.Less(t, waited, 30*time.Minute, "not the turn timeout")
			fx.agentFx.mu.Lock()
			defer fx.agentFx.mu.Unlock()
			assert.Equal(t, 1, fx.agentFx.seen["hung"], "the hung trigger was shown once")
		})
	}
}

// TestSupervisorLooksForSignsOfLifeAtTheStallsPace: the runtimes' panes
// are captured for signs of life pulsesPerStall (20) times a StallAfter at
// most, not at every scan: an idle supervisor of many runtimes is not
// busy capturing their panes every few seconds.
func TestSupervisorLooksForSignsOfLifeAtTheStallsPace(t *testing.T) {
	ctx := context.Background()
	clk := NewClock()
	store := openStore(t)
	fx := &stallFx{agentFx: &agentFx{clock: clk, seen: map[string]int{}, resumed: map[string]int{}}, alive: true}
	start := clk.Now()
	lctx, cancel := context.WithCancel(ctx)
	l := &supervise.Loop{Store: store, Clock: clk, Policy: supervise.DefaultPolicy, Limits: supervise.DefaultLimits,
		Recovery: supervise.DefaultRecoveryPolicy, Effects: fx, Wake: make(chan struct{}), ScanEvery: time.Second,
		StallAfter: 10 * time.Minute}
	done := make(chan error, 1)
	go func() { done <- l.Run(lctx) }()
	require.Eventually(t, func() bool { return clk.Now().Sub(start) > 5*time.Minute }, time.Minute, time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	// The clock runs as fast as the loop does: the time that passed is
	// read after the loop ended (5 minutes or more), not assumed.
	elapsed := clk.Now().Sub(start)
	pulses, scans := int(elapsed/(30*time.Second)), int(elapsed/time.Second)
	fx.smu.Lock()
	defer fx.smu.Unlock()
	assert.GreaterOrEqual(t, fx.looks, pulses/2, "one look every 30 s (%s)", elapsed)
	assert.LessOrEqual(t, fx.looks, pulses+2, "not one at each of the %d scans (%s)", scans, elapsed)
}

// freshFx is dyingFx that records the texts it was sent.
type freshFx struct {
	*dyingFx
	texts []string
}

func (f *freshFx) Send(ctx context.Context, rt supervise.Runtime, text string) supervise.SendReport {
	f.smu.Lock()
	f.texts = append(f.texts, text)
	f.smu.Unlock()
	return f.agentFx.Send(ctx, rt, text)
}

// TestSupervisorFreshRestartGetsTheThreadSummary: a runtime restarted
// fresh (its session stale) gives its next trigger its thread's summary
// first, once; a resumed one does not.
func TestSupervisorFreshRestartGetsTheThreadSummary(t *testing.T) {
	for _, tc := range []struct {
		name  string
		quiet time.Duration // how long the session showed no sign before its pane died
		fresh bool
	}{
		{"stale session: fresh, with the summary", 13 * time.Hour, true},
		{"recent session: resumed, no summary", time.Minute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			clk := NewClock()
			store := openStore(t)
			fx := &freshFx{dyingFx: &dyingFx{agentFx: &agentFx{clock: clk, seen: map[string]int{}, resumed: map[string]int{}}}}
			run := func(until func() bool) {
				t.Helper()
				lctx, cancel := context.WithCancel(ctx)
				l := &supervise.Loop{Store: store, Clock: clk, Policy: supervise.DefaultPolicy, Limits: supervise.DefaultLimits,
					Recovery: supervise.DefaultRecoveryPolicy, Effects: fx, Wake: make(chan struct{}), ScanEvery: time.Second}
				done := make(chan error, 1)
				go func() { done <- l.Run(lctx) }()
				require.Eventually(t, until, 10*time.Second, time.Millisecond)
				cancel()
				require.NoError(t, <-done)
			}
			completed := func(id string) func() bool {
				return func() bool {
					tr, err := store.Trigger(ctx, id)
					return err == nil && tr.Status == supervise.Completed
				}
			}
			submit(t, store, clk, "a1")
			run(completed("a1"))
			clk.Advance(tc.quiet)
			fx.die()
			// Until the restart is recorded (its audit follows the record).
			run(func() bool {
				evs, err := store.Events(ctx, 0, 0)
				require.NoError(t, err)
				for _, e := range evs {
					if e.Kind == supervise.AuditRestart {
						return true
					}
				}
				return false
			})
			assert.Equal(t, []bool{!tc.fresh}, fx.restarted(), "resumed, or fresh")
			submit(t, store, clk, "b1", "b2")
			run(completed("b2"))

			fx.smu.Lock()
			defer fx.smu.Unlock()
			require.Len(t, fx.texts, 3)
			assert.NotContains(t, fx.texts[0], "[BRIDGE_RECOVERY")
			assert.NotContains(t, fx.texts[2], "[BRIDGE_RECOVERY", "the summary goes once")
			if !tc.fresh {
				assert.NotContains(t, fx.texts[1], "[BRIDGE_RECOVERY")
				return
			}
			assert.True(t, strings.HasPrefix(fx.texts[1], "[BRIDGE_RECOVERY thread=default]"), "b1 starts with the summary: %q", fx.texts[1])
			assert.Contains(t, fx.texts[1], "- trigger a1 to claude: work a1\n  answer: answer to a1")
			assert.Contains(t, fx.texts[1], "[BRIDGE_TRIGGER id=b1 ")
			rt, err := store.Runtime(ctx, "claude")
			require.NoError(t, err)
			assert.False(t, rt.Recovery.Summarize, "the flag went with the summary")
		})
	}
}
