package sim

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/supervise"
)

// dyingFx is agentFx whose pane can die (die) and which records how each
// restart started the agent: resumed (true) or fresh.
type dyingFx struct {
	*agentFx
	smu      sync.Mutex
	dead     bool
	restarts []bool
}

func (f *dyingFx) Scan(ctx context.Context) ([]supervise.Seen, error) {
	seen, _ := f.agentFx.Scan(ctx)
	f.smu.Lock()
	defer f.smu.Unlock()
	seen[0].AgentSession = "sess-1"
	if f.dead {
		seen[0].Status = supervise.Offline
	}
	return seen, nil
}

func (f *dyingFx) Restart(_ context.Context, _ supervise.Runtime, resume bool) (string, error) {
	f.smu.Lock()
	defer f.smu.Unlock()
	f.restarts = append(f.restarts, resume)
	f.dead = false
	return "", nil
}

// die kills the agent's pane: the next scan sees it offline.
func (f *dyingFx) die() {
	f.smu.Lock()
	defer f.smu.Unlock()
	f.dead = true
}

func (f *staleFx) Resume(ctx context.Context, _ supervise.Runtime, _ supervise.Trigger) supervise.ResumeReport {
	<-ctx.Done()
	return supervise.ResumeReport{Err: ctx.Err()}
}

func (f *dyingFx) restarted() []bool {
	f.smu.Lock()
	defer f.smu.Unlock()
	return append([]bool(nil), f.restarts...)
}

// staleFx is dyingFx whose headless resume never answers (no sign of life
// comes from it).
type staleFx struct{ *dyingFx }

// TestSupervisorStaleSessionStartsFresh: the agent's session showed no
// sign of life for longer than StaleAfter while the supervisor rewrote its
// runtime's record (a trigger deferred by an operator: status, busy flag,
// updated time); its pane dies: the restart starts a fresh session. The
// same with a sign a moment before (a trigger the agent acknowledged)
// resumes it.
func TestSupervisorStaleSessionStartsFresh(t *testing.T) {
	for _, tc := range []struct {
		name   string
		signed bool
		resume bool
	}{
		{"no sign for 13 h, status rewritten: fresh", false, false},
		{"a sign a moment ago: resumed", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			clk := NewClock()
			store, err := supervise.Open(t.TempDir() + "/" + supervise.StoreFile)
			require.NoError(t, err)
			t.Cleanup(func() { store.Close() })
			fx := &staleFx{&dyingFx{agentFx: &agentFx{clock: clk, seen: map[string]int{}, resumed: map[string]int{}}}}
			run := func(until func() bool) {
				t.Helper()
				lctx, cancel := context.WithCancel(ctx)
				// The operator stays: the trigger is never taken over by a
				// fallback (which would hold the runtime) within the test.
				policy := supervise.DefaultPolicy
				policy.MaxDefer = 48 * time.Hour
				l := &supervise.Loop{Store: store, Clock: clk, Policy: policy, Limits: supervise.DefaultLimits,
					Recovery: supervise.DefaultRecoveryPolicy, Effects: fx, Wake: make(chan struct{}), ScanEvery: time.Second}
				done := make(chan error, 1)
				go func() { done <- l.Run(lctx) }()
				require.Eventually(t, until, 10*time.Second, time.Millisecond)
				cancel()
				require.NoError(t, <-done)
			}
			registered := clk.Now()
			run(func() bool { _, err := store.Runtime(ctx, "claude"); return err == nil })

			clk.Advance(13 * time.Hour)
			if tc.signed {
				submit(t, store, clk, "a1")
				run(func() bool {
					tr, err := store.Trigger(ctx, "a1")
					return err == nil && tr.Status == supervise.Completed
				})
			}
			// An operator in the pane: the supervisor rewrites the runtime's
			// record (deferred, operator busy), no sign of the agent.
			fx.busy = func(time.Time) bool { return true }
			submit(t, store, clk, "b1")
			run(func() bool { rt, err := store.Runtime(ctx, "claude"); return err == nil && rt.OperatorBusy })
			rt, err := store.Runtime(ctx, "claude")
			require.NoError(t, err)
			require.Greater(t, rt.Updated.Sub(registered), 12*time.Hour, "the record was written lately")
			require.Equal(t, tc.signed, rt.Recovery.LastSign.Sub(registered) > 12*time.Hour, "signs: %v", rt.Recovery.LastSign)

			// The pane dies; the restart is due 5 s later.
			fx.die()
			why := func() string {
				evs, err := store.Events(ctx, 0, 0)
				require.NoError(t, err)
				for _, e := range evs {
					if e.Kind == supervise.AuditRestart {
						return e.Result + ": " + e.Detail
					}
				}
				return ""
			}
			run(func() bool { return why() != "" })
			assert.Equal(t, []bool{tc.resume}, fx.restarted())
			if tc.resume {
				assert.Equal(t, "resume: its agent session resumed", why())
			} else {
				assert.Equal(t, "fresh: its session is stale: no sign of it for 12h0m0s", why())
			}
		})
	}
}

// countingFx is dyingFx that counts the supervisor's scans and whose
// headless resume answers once released.
type countingFx struct {
	*dyingFx
	scans   int
	release chan struct{}
}

func (f *countingFx) Resume(ctx context.Context, _ supervise.Runtime, t supervise.Trigger) supervise.ResumeReport {
	select {
	case <-f.release:
		return supervise.ResumeReport{Answer: "resumed answer to " + t.ID, Reached: true}
	case <-ctx.Done():
		return supervise.ResumeReport{Err: ctx.Err()}
	}
}

func (f *countingFx) Scan(ctx context.Context) ([]supervise.Seen, error) {
	f.smu.Lock()
	f.scans++
	f.smu.Unlock()
	return f.dyingFx.Scan(ctx)
}

func (f *countingFx) scanned() int {
	f.smu.Lock()
	defer f.smu.Unlock()
	return f.scans
}

// TestSupervisorIdlesWhileTheFallbackHoldsAnOfflineRuntime: a runtime
// whose trigger the headless fallback holds is not restarted while it
// runs, though its pane died and its restart time passed; the loop waits
// for the fallback instead of looking again at once, over and over (it
// spun, a scan a millisecond), and restarts it once the fallback is done.
func TestSupervisorIdlesWhileTheFallbackHoldsAnOfflineRuntime(t *testing.T) {
	ctx := context.Background()
	clk := NewClock()
	store := openStore(t)
	fx := &countingFx{dyingFx: &dyingFx{agentFx: &agentFx{clock: clk, seen: map[string]int{}, resumed: map[string]int{}}}, release: make(chan struct{})}
	fx.busy = func(time.Time) bool { return true } // an operator stays: the fallback takes the trigger
	submit(t, store, clk, "a1")
	lctx, cancel := context.WithCancel(ctx)
	l := &supervise.Loop{Store: store, Clock: clk, Policy: supervise.DefaultPolicy, Limits: supervise.DefaultLimits,
		Recovery: supervise.DefaultRecoveryPolicy, Effects: fx, Wake: make(chan struct{}), ScanEvery: time.Second}
	done := make(chan error, 1)
	go func() { done <- l.Run(lctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	require.Eventually(t, func() bool {
		tr, err := store.Trigger(ctx, "a1")
		return err == nil && tr.Status == supervise.TFallbackResume
	}, 10*time.Second, time.Millisecond)

	fx.die()
	from, before := clk.Now(), fx.scanned()
	require.Eventually(t, func() bool { return clk.Now().Sub(from) > 2*time.Minute || fx.scanned()-before > 1000 },
		10*time.Second, time.Millisecond)
	// The loop runs on while this looks: its scans are bounded by the
	// virtual time that passed when they were counted (read after them),
	// not by the two minutes waited for.
	scans := fx.scanned() - before
	elapsed := clk.Now().Sub(from)
	assert.LessOrEqual(t, scans, int(elapsed/time.Second)+10, "about one scan a second (ScanEvery): %d in %s", scans, elapsed)
	assert.Empty(t, fx.restarted(), "the fallback holds the runtime: no restart")

	close(fx.release) // the resumed session answers
	require.Eventually(t, func() bool { return len(fx.restarted()) == 1 }, 10*time.Second, time.Millisecond, "restarted once the fallback is done")
	tr, err := store.Trigger(ctx, "a1")
	require.NoError(t, err)
	assert.Equal(t, supervise.Completed, tr.Status)
}
