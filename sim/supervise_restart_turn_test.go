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

// respawnFx is agentFx whose agent dies during the first trigger's turn
// and is restarted before the wait for that turn looks again: the wait
// never sees the pane dead and never ends on its own.
type respawnFx struct {
	*agentFx
	rmu      sync.Mutex
	dead     bool
	restarts int
}

func (f *respawnFx) Scan(ctx context.Context) ([]supervise.Seen, error) {
	seen, _ := f.agentFx.Scan(ctx)
	f.rmu.Lock()
	defer f.rmu.Unlock()
	seen[0].AgentSession = "sess-1"
	if f.dead {
		seen[0].Status = supervise.Offline
	}
	return seen, nil
}

func (f *respawnFx) Restart(context.Context, supervise.Runtime, bool) (string, error) {
	f.rmu.Lock()
	defer f.rmu.Unlock()
	f.dead = false
	f.restarts++
	return "", nil
}

// Await: the first turn's agent dies (the pane is dead until the
// restart) and the wait never ends; later turns answer.
func (f *respawnFx) Await(ctx context.Context, rt supervise.Runtime, turn supervise.TurnRecord) (string, supervise.Class, error) {
	if idOf(turn.Prompt) != "k1" {
		return f.agentFx.Await(ctx, rt, turn)
	}
	f.rmu.Lock()
	if f.restarts == 0 {
		f.dead = true
	}
	f.rmu.Unlock()
	<-ctx.Done()
	return "", "", ctx.Err()
}

// TestSupervisorRestartEndsTheDeadTurn: the agent dies during a
// trigger's turn and is restarted before the wait saw it dead; the
// restart ends that wait: the trigger fails PANE_DEAD (its turn died with
// the agent) and the trigger queued behind it goes to the restarted
// agent, rather than waiting for the turn timeout.
func TestSupervisorRestartEndsTheDeadTurn(t *testing.T) {
	ctx := context.Background()
	clk := NewClock()
	store := openStore(t)
	fx := &respawnFx{agentFx: &agentFx{clock: clk, seen: map[string]int{}, resumed: map[string]int{}}}
	submit(t, store, clk, "k1", "k2")
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	l := &supervise.Loop{Store: store, Clock: clk, Policy: supervise.DefaultPolicy, Limits: supervise.DefaultLimits,
		Recovery: supervise.DefaultRecoveryPolicy, Effects: fx, Wake: make(chan struct{}), ScanEvery: time.Second}
	done := make(chan error, 1)
	go func() { done <- l.Run(lctx) }()
	require.Eventually(t, func() bool {
		open, err := store.Triggers(ctx, supervise.TriggerFilter{Open: true})
		return err == nil && len(open) == 0
	}, 10*time.Second, time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	k1, err := store.Trigger(ctx, "k1")
	require.NoError(t, err)
	assert.Equal(t, supervise.TFailed, k1.Status)
	assert.Equal(t, supervise.PaneDead, k1.Class)
	assert.Contains(t, k1.Error, "restarted during the turn")
	k2, err := store.Trigger(ctx, "k2")
	require.NoError(t, err)
	assert.Equal(t, supervise.Completed, k2.Status)
	assert.Equal(t, 1, fx.restarts)
	assert.Equal(t, 1, fx.seen["k1"], "never sent again")
	assert.Equal(t, 1, fx.seen["k2"])
}
