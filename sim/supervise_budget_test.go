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

// budgetFx is agentFx whose team has a budget: spent, while over is set.
type budgetFx struct {
	*agentFx
	bmu  sync.Mutex
	over string
}

func (f *budgetFx) OverBudget(context.Context, supervise.Runtime) string {
	f.bmu.Lock()
	defer f.bmu.Unlock()
	return f.over
}

func (f *budgetFx) spend(why string) {
	f.bmu.Lock()
	defer f.bmu.Unlock()
	f.over = why
}

func (f *agentFx) times(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen[id]
}

// TestSupervisorHoldsTriggersWhileTheBudgetIsSpent: a trigger to a
// runtime whose budget is spent is held (deferred, BUDGET_EXCEEDED,
// audited once) for as long as it stays spent, past any deferral limit,
// and never reaches the agent; the operator's forced trigger goes by
// (audited as an override); once a budget lets it go (a new day, a limit
// raised) the held one is delivered, once.
func TestSupervisorHoldsTriggersWhileTheBudgetIsSpent(t *testing.T) {
	ctx := context.Background()
	clk := NewClock()
	store := openStore(t)
	fx := &budgetFx{agentFx: &agentFx{clock: clk, seen: map[string]int{}, resumed: map[string]int{}}}
	fx.spend("s/claude spent 1200 of its 1000 tokens (budget.roleTokens)")
	submit(t, store, clk, "a1")
	lctx, cancel := context.WithCancel(ctx)
	wake := make(chan struct{})
	l := &supervise.Loop{Store: store, Clock: clk, Policy: supervise.DefaultPolicy, Limits: supervise.DefaultLimits,
		Recovery: supervise.DefaultRecoveryPolicy, Effects: fx, Wake: wake, ScanEvery: time.Second}
	done := make(chan error, 1)
	go func() { done <- l.Run(lctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	status := func(id string) supervise.Trigger {
		tr, err := store.Trigger(ctx, id)
		require.NoError(t, err)
		return tr
	}
	start := clk.Now()
	require.Eventually(t, func() bool { return clk.Now().Sub(start) > 10*time.Minute }, 10*time.Second, time.Millisecond)
	held := status("a1")
	assert.Equal(t, supervise.TDeferred, held.Status)
	assert.Equal(t, supervise.BudgetExceeded, held.Class)
	assert.Contains(t, held.Error, "budget.roleTokens")
	assert.Zero(t, fx.times("a1"), "held: it never reached the agent")

	ops := &supervise.Ops{Store: store, Clock: clk, Policy: supervise.DefaultPolicy, Limits: supervise.DefaultLimits}
	_, _, err := ops.Submit(ctx, supervise.Caller{}, supervise.TriggerRequest{ID: "f1", Role: "claude", Text: "work f1",
		Force: true, Actor: "operator", Why: "the release needs it"})
	require.NoError(t, err)
	select {
	case wake <- struct{}{}:
	case <-time.After(10 * time.Second):
		t.Fatal("the loop took no wake")
	}
	require.Eventually(t, func() bool { return status("f1").Status == supervise.Completed }, 10*time.Second, time.Millisecond, "f1: %+v", status("f1"))
	assert.Equal(t, 1, fx.times("f1"), "the forced trigger went by the spent budget")
	assert.Equal(t, supervise.TDeferred, status("a1").Status, "the other stays held")

	fx.spend("") // a limit raised
	require.Eventually(t, func() bool { return status("a1").Status == supervise.Completed }, 10*time.Second, time.Millisecond)
	assert.Equal(t, 1, fx.times("a1"))

	evs, err := store.Events(ctx, 0, 0)
	require.NoError(t, err)
	var deferred, overrides []string
	for _, e := range evs {
		switch {
		case e.Kind == supervise.AuditDeferred:
			deferred = append(deferred, e.Trigger+" "+e.Result)
		case e.Kind == supervise.AuditOverride && e.Result == string(supervise.BudgetExceeded):
			overrides = append(overrides, e.Trigger)
		}
	}
	assert.Equal(t, []string{"a1 BUDGET_EXCEEDED"}, deferred, "held once, audited once")
	assert.Equal(t, []string{"f1"}, overrides)
}
