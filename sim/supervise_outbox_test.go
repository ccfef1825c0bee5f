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

// hostsFx are the hosts the outbox forwards to (a supervise.Forwarder):
// each records a message of an id once, as a supervisor's store does; a
// host is down until its time in upAt. crashAfter, when set, names an id
// whose forward kills the supervisor (its context ends) once the host
// recorded it and before the report is applied.
type hostsFx struct {
	mu         sync.Mutex
	clock      *Clock
	upAt       map[string]time.Time
	got        map[string][]string           // host -> the ids it recorded, in order
	tries      map[string][]time.Time        // id -> when each forward came
	texts      map[string]supervise.Outbound // id -> what was recorded
	crashAfter string
	crash      context.CancelFunc
	// crashBefore kills it as the forward of crashAfter starts, before
	// the host records anything.
	crashBefore bool
}

func (h *hostsFx) Forward(_ context.Context, o supervise.Outbound) supervise.ForwardReport {
	h.mu.Lock()
	defer h.mu.Unlock()
	// The loop's goroutine may have moved the virtual clock on since
	// the try was saved: the try's own time is its next one's less the
	// backoff it saved.
	backoff := min(supervise.DefaultForwardPolicy.First<<(o.Attempts-1), supervise.DefaultForwardPolicy.Cap)
	h.tries[o.ID] = append(h.tries[o.ID], o.NextAt.Add(-backoff))
	now := h.clock.Now()
	if h.crashBefore && h.crashAfter == o.ID && h.crash != nil {
		h.crash()
		h.crash, h.crashAfter = nil, ""
		return supervise.ForwardReport{Code: "HOST_CONNECTION_LOST", Err: errors.New("killed")}
	}
	if now.Before(h.upAt[o.Host]) {
		return supervise.ForwardReport{Code: "HOST_UNREACHABLE", Err: errors.New("ssh: connect to host: Connection refused")}
	}
	if _, ok := h.texts[o.ID]; !ok {
		h.texts[o.ID] = o
		h.got[o.Host] = append(h.got[o.Host], o.ID)
	}
	if h.crashAfter == o.ID && h.crash != nil {
		h.crash()
		h.crash, h.crashAfter = nil, ""
		return supervise.ForwardReport{Code: "HOST_CONNECTION_LOST", Err: errors.New("killed")}
	}
	return supervise.ForwardReport{Seq: int64(len(h.texts))}
}

// runOutbox runs a supervisor's loop over store with the hosts fx until
// no outbox entry is pending (true) or fx killed it (false).
func runOutbox(t *testing.T, store *supervise.Store, clk *Clock, fx *hostsFx) bool {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fx.mu.Lock()
	fx.crash = cancel
	fx.mu.Unlock()
	l := &supervise.Loop{Store: store, Clock: clk, Policy: supervise.DefaultPolicy, Limits: supervise.DefaultLimits,
		Effects: &agentFx{clock: clk}, Wake: make(chan struct{}), ScanEvery: time.Second, Forward: fx}
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	deadline := time.After(10 * time.Second)
	for {
		pending, err := store.Pending(context.Background())
		require.NoError(t, err)
		if len(pending) == 0 {
			cancel()
			require.NoError(t, <-done)
			return true
		}
		select {
		case err := <-done:
			require.NoError(t, err)
			return false
		case <-deadline:
			t.Fatalf("still pending: %+v", pending)
		case <-time.After(time.Millisecond):
		}
	}
}

// TestOutboxForwardsOnceInOrder: messages to a host that is down wait in
// the outbox and are tried again, never before the backoff says (1 s,
// doubling), while another host's go at once; once the host is back each
// is recorded there once, in the order they were sent, and the outbox
// says forwarded with as many attempts as the host saw.
func TestOutboxForwardsOnceInOrder(t *testing.T) {
	ctx := context.Background()
	clk := NewClock()
	store := openStore(t)
	ops := &supervise.Ops{Store: store, Clock: clk, Policy: supervise.DefaultPolicy, Limits: supervise.DefaultLimits, Self: "a"}
	var ids []string
	for _, r := range []supervise.OutboundRequest{
		{Host: "b", To: "codex", Text: "first"}, {Host: "c", To: "codex", Text: "to c"}, {Host: "b", To: "codex", Text: "second"},
	} {
		o, _, err := ops.Outsend(ctx, supervise.Caller{Runtime: "claude"}, r)
		require.NoError(t, err)
		ids = append(ids, o.ID)
	}
	fx := &hostsFx{clock: clk, upAt: map[string]time.Time{"b": clk.Now().Add(20 * time.Second)},
		got: map[string][]string{}, tries: map[string][]time.Time{}, texts: map[string]supervise.Outbound{}}
	require.True(t, runOutbox(t, store, clk, fx))

	assert.Equal(t, []string{ids[0], ids[2]}, fx.got["b"], "b got each once, in order")
	assert.Equal(t, []string{ids[1]}, fx.got["c"])
	assert.Len(t, fx.tries[ids[1]], 1, "c was up: one forward")
	assert.GreaterOrEqual(t, len(fx.tries[ids[0]]), 3, "b was down for 20 s: tried again")
	for i := 1; i < len(fx.tries[ids[0]]); i++ {
		gap := fx.tries[ids[0]][i].Sub(fx.tries[ids[0]][i-1])
		assert.GreaterOrEqual(t, gap, time.Second<<(i-1), "try %d came after %s", i+1, gap)
	}
	assert.Len(t, fx.tries[ids[2]], 1, "the second waited behind the first, then went once")
	assert.Equal(t, "claude@a", fx.texts[ids[0]].Origin)

	out, err := store.Outbox(ctx, "")
	require.NoError(t, err)
	for _, o := range out {
		assert.Equal(t, supervise.FwdForwarded, o.State, o.ID)
		assert.Equal(t, len(fx.tries[o.ID]), o.Attempts, "%s: the attempts recorded are the forwards the host saw", o.ID)
	}
	evs, err := store.Events(ctx, 0, 0)
	require.NoError(t, err)
	count := map[string]int{}
	for _, e := range evs {
		count[e.Kind]++
	}
	assert.Equal(t, 3, count[supervise.AuditForwarded])
	assert.Equal(t, len(fx.tries[ids[0]])-1, count[supervise.AuditForwardRetry])
}

// TestOutboxKilled: the supervisor dies (its context ends, as with kill
// -9: nothing after the point runs, its report is never saved) once the
// try was saved, before the host recorded the message or after; a new
// one over the same store forwards it again with the same id, which the
// host takes as the one it has: the host has it once, the outbox says
// forwarded.
func TestOutboxKilled(t *testing.T) {
	for _, tt := range []struct {
		name   string
		before bool
	}{{"before the host recorded it", true}, {"after the host recorded it", false}} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			clk := NewClock()
			store := openStore(t)
			ops := &supervise.Ops{Store: store, Clock: clk, Policy: supervise.DefaultPolicy, Limits: supervise.DefaultLimits, Self: "a"}
			o, _, err := ops.Outsend(ctx, supervise.Caller{Runtime: "claude"}, supervise.OutboundRequest{Host: "b", To: "codex", Text: "once"})
			require.NoError(t, err)
			fx := &hostsFx{clock: clk, upAt: map[string]time.Time{}, got: map[string][]string{}, tries: map[string][]time.Time{},
				texts: map[string]supervise.Outbound{}, crashAfter: o.ID, crashBefore: tt.before}
			require.False(t, runOutbox(t, store, clk, fx), "killed")
			left, err := store.Outbound(ctx, o.ID)
			require.NoError(t, err)
			require.Equal(t, supervise.FwdPending, left.State, "the try was saved, its outcome not")
			require.Equal(t, 1, left.Attempts)

			require.True(t, runOutbox(t, store, clk, fx))
			assert.Equal(t, []string{o.ID}, fx.got["b"], "recorded there once")
			assert.Len(t, fx.tries[o.ID], 2, "forwarded again after the kill, with the same id")
			done, err := store.Outbound(ctx, o.ID)
			require.NoError(t, err)
			assert.Equal(t, supervise.FwdForwarded, done.State)
			assert.Equal(t, 2, done.Attempts)
		})
	}
}
