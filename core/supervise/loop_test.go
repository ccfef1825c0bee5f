package supervise

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTakeOverWaitsForTheCancelledWait: a fallback takes a trigger over
// from the wait for its interactive turn only once that wait's goroutine
// returned; a send is never taken over; a report the wait posted before
// it saw the end is dropped; the caller's context bounds the wait.
func TestTakeOverWaitsForTheCancelledWait(t *testing.T) {
	ctx := context.Background()

	t.Run("the wait returns when cancelled", func(t *testing.T) {
		l := &Loop{workers: map[string]*worker{}}
		actx, cancel := context.WithCancel(ctx)
		await, ok := l.start("t1", cancel)
		require.True(t, ok)
		returned := make(chan struct{})
		go func() { // a wait's goroutine, as Loop.await runs it
			<-actx.Done()
			time.Sleep(20 * time.Millisecond) // its effect takes a moment to return
			close(returned)
			l.finish("t1", await)
			close(await.done)
		}()
		w, ok := l.takeOver(ctx, "t1")
		require.True(t, ok)
		select {
		case <-returned:
		default:
			t.Fatal("taken over before the wait's goroutine returned")
		}
		assert.Same(t, w, l.workers["t1"])
		_, again := l.takeOver(ctx, "t1")
		assert.False(t, again, "a fallback worker runs: no second one")
	})

	t.Run("the wait posted its report before the cancel", func(t *testing.T) {
		l := &Loop{workers: map[string]*worker{}}
		_, cancel := context.WithCancel(ctx)
		defer cancel()
		await, ok := l.start("t1", cancel)
		require.True(t, ok)
		close(await.done) // returned, its report queued for the loop
		w, ok := l.takeOver(ctx, "t1")
		require.True(t, ok, "a posted report does not keep the fallback out")
		l.done(ctx, result{id: "t1", w: await, ev: Event{Kind: EvAnswer, Answer: "late"}})
		assert.Same(t, w, l.workers["t1"], "the stale report left the fallback's worker in place")
	})

	t.Run("a send is not taken over", func(t *testing.T) {
		l := &Loop{workers: map[string]*worker{}}
		_, ok := l.start("t1", nil)
		require.True(t, ok)
		_, ok = l.takeOver(ctx, "t1")
		assert.False(t, ok)
	})

	t.Run("the context ends first", func(t *testing.T) {
		l := &Loop{workers: map[string]*worker{}}
		await, ok := l.start("t1", func() {}) // a wait that never returns
		require.True(t, ok)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, ok = l.takeOver(cctx, "t1")
		assert.False(t, ok)
		assert.Same(t, await, l.workers["t1"])
	})
}

func TestAhead(t *testing.T) {
	held := Trigger{ID: "h", Role: "a", Status: TDeferred, Class: BudgetExceeded}
	busy := Trigger{ID: "b", Role: "b", Status: TDeferred, Class: OperatorBusy}
	forcedA := Trigger{ID: "fa", Role: "a", Status: Queued, Force: true}
	sendingA := Trigger{ID: "sa", Role: "a", Status: Delivered, Force: true}
	forcedB := Trigger{ID: "fb", Role: "b", Status: Queued, Force: true}
	plainA := Trigger{ID: "pa", Role: "a", Status: Queued}
	ids := func(ts []Trigger) (out []string) {
		for _, t := range ts {
			out = append(out, t.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		open []Trigger
		want []string
	}{
		{"nothing held: oldest first", []Trigger{busy, forcedB}, []string{"b", "fb"}},
		{"a forced one goes before the held", []Trigger{held, plainA, forcedA}, []string{"fa", "h", "pa"}},
		{"and stays ahead while it is delivered", []Trigger{held, sendingA}, []string{"sa", "h"}},
		{"only for the held runtime", []Trigger{held, busy, forcedB, forcedA}, []string{"fa", "h", "b", "fb"}},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, ids(ahead(tc.open))) })
	}
}

// A trigger for unread messages names party's inbox_read tool where the
// runtime's agent has party's MCP tools, the shell command elsewhere.
func TestUnreadText(t *testing.T) {
	assert.Equal(t, "1 unread message in thread work: run `party inbox read --thread work` and act on it.", unreadText(1, "work", false))
	assert.Equal(t, "2 unread messages in thread w: read them with party's inbox_read tool (thread w) and act on them.", unreadText(2, "w", true))
}
