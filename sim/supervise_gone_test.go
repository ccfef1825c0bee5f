package sim

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/supervise"
)

// goneFx is agentFx whose pane is killed once, at killAt: between the
// supervisor's look and its making the envelope ready ("prepare": the
// first Prepare finds no pane), between the paste and the Enter ("enter":
// the agent never took it), or after the agent took it and before the
// delivery saw it ("taken"); tmux then shows no pane until the runtime is
// restarted.
type goneFx struct {
	*agentFx
	killAt   string
	gmu      sync.Mutex
	killed   bool // the pane was killed once
	gone     bool
	restarts int
}

// kill kills the pane at stage, once; it says whether the pane is gone.
func (f *goneFx) kill(stage string) bool {
	f.gmu.Lock()
	defer f.gmu.Unlock()
	if !f.killed && (f.killAt == stage || f.killAt == "" && stage == "prepare") {
		f.killed, f.gone = true, true
	}
	return f.gone
}

// Send pastes, then finds the pane gone at the Enter, or after the agent
// took the text.
func (f *goneFx) Send(ctx context.Context, rt supervise.Runtime, text string) supervise.SendReport {
	gone := supervise.SendReport{Class: supervise.TargetNotFound, Pasted: true, Err: errors.New("pane %0: no such pane")}
	if f.kill("enter") {
		return gone
	}
	r := f.agentFx.Send(ctx, rt, text)
	if f.kill("taken") {
		return gone
	}
	return r
}

func (f *goneFx) isGone() bool {
	f.gmu.Lock()
	defer f.gmu.Unlock()
	return f.gone
}

func (f *goneFx) Scan(ctx context.Context) ([]supervise.Seen, error) {
	if f.isGone() {
		return nil, nil
	}
	return f.agentFx.Scan(ctx)
}

func (f *goneFx) Restart(context.Context, supervise.Runtime, bool) (string, error) {
	f.gmu.Lock()
	defer f.gmu.Unlock()
	f.gone = false
	f.restarts++
	return "", nil
}

func (f *goneFx) Probe(ctx context.Context, rt supervise.Runtime) supervise.Probed {
	if f.isGone() {
		return supervise.Probed{Class: supervise.TargetNotFound, Why: "pane %0: no such pane"}
	}
	return f.agentFx.Probe(ctx, rt)
}

func (f *goneFx) Prepare(ctx context.Context, rt supervise.Runtime, text string) (string, *supervise.TurnRecord, error) {
	if f.kill("prepare") {
		return "", nil, errors.New("pane %0: no such pane")
	}
	return f.agentFx.Prepare(ctx, rt, text)
}

// TestSupervisorPaneGoneBeforeTheSend: the pane is killed after the look
// that let a trigger go and before its envelope was made ready: nothing
// was pasted, so the trigger is not failed (SEND_KEYS_ERROR, even with no
// retries left) but waits for the runtime's restart and then goes, once.
func TestSupervisorPaneGoneBeforeTheSend(t *testing.T) {
	ctx := context.Background()
	clk := NewClock()
	store := openStore(t)
	fx := &goneFx{agentFx: &agentFx{clock: clk, seen: map[string]int{}, resumed: map[string]int{}}}
	submit(t, store, clk, "g1")
	policy := supervise.DefaultPolicy
	policy.Retries = 0
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	l := &supervise.Loop{Store: store, Clock: clk, Policy: policy, Limits: supervise.DefaultLimits,
		Recovery: supervise.DefaultRecoveryPolicy, Effects: fx, Wake: make(chan struct{}), ScanEvery: time.Second}
	done := make(chan error, 1)
	go func() { done <- l.Run(lctx) }()
	require.Eventually(t, func() bool {
		tr, err := store.Trigger(ctx, "g1")
		return err == nil && !tr.Status.Open()
	}, 10*time.Second, time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	tr, err := store.Trigger(ctx, "g1")
	require.NoError(t, err)
	assert.Equal(t, supervise.Completed, tr.Status, "class %s: %s", tr.Class, tr.Error)
	assert.Equal(t, 1, fx.seen["g1"])
	assert.Equal(t, 1, fx.restarts)
	trs, err := store.Transitions(ctx, "g1")
	require.NoError(t, err)
	for _, x := range trs {
		assert.NotEqual(t, supervise.TRetrying, x.To, "no failed send was recorded")
	}
}

// TestSupervisorPaneGoneDuringTheSend: the pane of a runtime that will be
// restarted is killed during a delivery. Killed after the paste and before
// the Enter, the agent never took the envelope (its events and transcript
// show nothing): the trigger waits for the restart and goes to the
// restarted agent, once. Killed after the agent took it, it is never
// delivered again: PANE_DEAD, reached.
func TestSupervisorPaneGoneDuringTheSend(t *testing.T) {
	for _, c := range []struct {
		stage  string
		status supervise.TriggerStatus
		class  supervise.Class
	}{
		{"enter", supervise.Completed, ""},
		{"taken", supervise.TFailed, supervise.PaneDead},
	} {
		t.Run(c.stage, func(t *testing.T) {
			ctx := context.Background()
			clk := NewClock()
			store := openStore(t)
			fx := &goneFx{agentFx: &agentFx{clock: clk, seen: map[string]int{}, resumed: map[string]int{}}, killAt: c.stage}
			submit(t, store, clk, "g1")
			lctx, cancel := context.WithCancel(ctx)
			defer cancel()
			l := &supervise.Loop{Store: store, Clock: clk, Policy: supervise.DefaultPolicy, Limits: supervise.DefaultLimits,
				Recovery: supervise.DefaultRecoveryPolicy, Effects: fx, Wake: make(chan struct{}), ScanEvery: time.Second}
			done := make(chan error, 1)
			go func() { done <- l.Run(lctx) }()
			require.Eventually(t, func() bool {
				tr, err := store.Trigger(ctx, "g1")
				return err == nil && !tr.Status.Open()
			}, 10*time.Second, time.Millisecond)
			cancel()
			require.NoError(t, <-done)
			tr, err := store.Trigger(ctx, "g1")
			require.NoError(t, err)
			assert.Equal(t, c.status, tr.Status, "class %s: %s", tr.Class, tr.Error)
			assert.Equal(t, c.class, tr.Class)
			assert.True(t, tr.Reached)
			assert.Equal(t, 1, fx.seen["g1"], "the agent got it %d times", fx.seen["g1"])
		})
	}
}

// busyOnceFx is agentFx whose first send finds someone typing in the box
// (nothing pasted: OPERATOR_BUSY), and whose wait for a turn the agent
// never took waits on (a turn it did take is answered).
type busyOnceFx struct {
	*agentFx
	bmu   sync.Mutex
	sends int
}

func (f *busyOnceFx) Send(ctx context.Context, rt supervise.Runtime, text string) supervise.SendReport {
	f.bmu.Lock()
	f.sends++
	first := f.sends == 1
	f.bmu.Unlock()
	if first {
		return supervise.SendReport{Class: supervise.OperatorBusy, Err: errors.New("someone typed into the input box as the text was pasted")}
	}
	return f.agentFx.Send(ctx, rt, text)
}

func (f *busyOnceFx) Await(ctx context.Context, rt supervise.Runtime, turn supervise.TurnRecord) (string, supervise.Class, error) {
	f.mu.Lock()
	took := f.seen[idOf(turn.Prompt)] > 0
	f.mu.Unlock()
	if !took {
		<-ctx.Done()
		return "", "", ctx.Err()
	}
	return f.agentFx.Await(ctx, rt, turn)
}

// TestSupervisorNoWaitForASendThatFailed: a send that failed before the
// paste (someone typing) leaves the trigger deferred; no wait for the
// answer of a turn it never started runs then, so nothing holds up its
// next send, which goes once the operator is done.
func TestSupervisorNoWaitForASendThatFailed(t *testing.T) {
	ctx := context.Background()
	clk := NewClock()
	store := openStore(t)
	fx := &busyOnceFx{agentFx: &agentFx{clock: clk, seen: map[string]int{}, resumed: map[string]int{}}}
	submit(t, store, clk, "b1")
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	l := &supervise.Loop{Store: store, Clock: clk, Policy: supervise.DefaultPolicy, Limits: supervise.DefaultLimits,
		Recovery: supervise.DefaultRecoveryPolicy, Effects: fx, Wake: make(chan struct{}), ScanEvery: time.Second}
	done := make(chan error, 1)
	go func() { done <- l.Run(lctx) }()
	require.Eventually(t, func() bool {
		tr, err := store.Trigger(ctx, "b1")
		return err == nil && !tr.Status.Open()
	}, 10*time.Second, time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	tr, err := store.Trigger(ctx, "b1")
	require.NoError(t, err)
	assert.Equal(t, supervise.Completed, tr.Status, "class %s: %s", tr.Class, tr.Error)
	assert.Equal(t, 1, fx.seen["b1"])
	assert.Nil(t, tr.Fallback, "delivered in the pane, not through a fallback")
}
