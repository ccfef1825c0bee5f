package sim_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/sim"
)

// sent is the time waiting on c, if any, without waiting: Advance sends
// before it returns.
func sent(c <-chan time.Time) (time.Time, bool) {
	select {
	case at := <-c:
		return at, true
	default:
		return time.Time{}, false
	}
}

// assertSent checks that c holds want.
func assertSent(t *testing.T, c <-chan time.Time, want time.Time, msgAndArgs ...any) {
	t.Helper()
	got, ok := sent(c)
	if assert.True(t, ok, msgAndArgs...) {
		assert.Equal(t, want, got, msgAndArgs...)
	}
}

// assertQuiet checks that c holds nothing (the zero time: the clock
// sends none).
func assertQuiet(t *testing.T, c <-chan time.Time, msgAndArgs ...any) {
	t.Helper()
	got, _ := sent(c)
	assert.Zero(t, got, msgAndArgs...)
}

func TestClockTimersFireByDeadline(t *testing.T) {
	clk := sim.NewClock()
	start := clk.Now()
	late := clk.NewTimer(3 * time.Second)
	early := clk.NewTimer(time.Second)
	middle := clk.NewTimer(2 * time.Second)

	clk.Advance(1500 * time.Millisecond)
	assertSent(t, early.C(), start.Add(time.Second), "the timer due sends its deadline, not the time Advance reached")
	assertQuiet(t, middle.C(), "a timer not yet due")
	assertQuiet(t, late.C(), "a timer not yet due")
	assert.Equal(t, start.Add(1500*time.Millisecond), clk.Now())

	clk.Advance(2 * time.Second)
	assertSent(t, middle.C(), start.Add(2*time.Second))
	assertSent(t, late.C(), start.Add(3*time.Second))
	assertQuiet(t, early.C(), "a timer fires once")
	assert.False(t, early.Stop(), "a fired timer is not armed")
}

func TestClockTimerAtOnce(t *testing.T) {
	clk := sim.NewClock()
	timer := clk.NewTimer(0)
	assertSent(t, timer.C(), clk.Now(), "a timer of no duration fires at once")
	timer.Reset(-time.Second)
	assertSent(t, timer.C(), clk.Now().Add(-time.Second), "nor of a negative one")
}

func TestClockTimerStop(t *testing.T) {
	clk := sim.NewClock()
	timer := clk.NewTimer(time.Second)
	assert.True(t, timer.Stop(), "an armed timer")
	assert.False(t, timer.Stop(), "stopped twice")
	clk.Advance(time.Minute)
	assertQuiet(t, timer.C(), "a stopped timer does not fire")

	fired := clk.NewTimer(time.Second)
	clk.Advance(time.Second)
	assert.False(t, fired.Stop(), "a timer that fired")
	assertQuiet(t, fired.C(), "the time it sent before Stop, unread, is not received after")
}

func TestClockTimerReset(t *testing.T) {
	clk := sim.NewClock()
	start := clk.Now()
	timer := clk.NewTimer(time.Second)
	assert.True(t, timer.Reset(3*time.Second), "an armed timer")
	clk.Advance(2 * time.Second)
	assertQuiet(t, timer.C(), "the first deadline went with Reset")
	clk.Advance(time.Second)
	assertSent(t, timer.C(), start.Add(3*time.Second), "the deadline Reset set")

	clk.Advance(time.Second)
	assert.False(t, timer.Reset(time.Second), "a fired timer")
	clk.Advance(time.Second)
	assertSent(t, timer.C(), start.Add(5*time.Second), "armed again from the time of Reset")

	stale := clk.NewTimer(time.Second)
	clk.Advance(time.Second)
	stale.Reset(time.Second)
	assertQuiet(t, stale.C(), "the time it sent before Reset, unread, is not received after")
	clk.Advance(time.Second)
	assertSent(t, stale.C(), start.Add(7*time.Second))
}

func TestClockTimerAfterAdvance(t *testing.T) {
	clk := sim.NewClock()
	start := clk.Now()
	clk.Advance(10 * time.Second)
	timer := clk.NewTimer(time.Second)
	assertQuiet(t, timer.C(), "a timer counts from when it was made, not from the clock's start")
	clk.Advance(999 * time.Millisecond)
	assertQuiet(t, timer.C())
	clk.Advance(time.Millisecond)
	assertSent(t, timer.C(), start.Add(11*time.Second))
}

func TestClockTicker(t *testing.T) {
	clk := sim.NewClock()
	start := clk.Now()
	ticker := clk.NewTicker(time.Second)
	assertQuiet(t, ticker.C(), "no tick before its period")
	clk.Advance(time.Second)
	assertSent(t, ticker.C(), start.Add(time.Second))
	clk.Advance(time.Second)
	assertSent(t, ticker.C(), start.Add(2*time.Second), "it is armed again after each tick")

	// Three periods at once, the tick unread: the channel holds the
	// first; the others are dropped, as time.Ticker's.
	clk.Advance(3 * time.Second)
	assertSent(t, ticker.C(), start.Add(3*time.Second))
	assertQuiet(t, ticker.C())
	clk.Advance(time.Second)
	assertSent(t, ticker.C(), start.Add(6*time.Second), "the ticks keep their rhythm")

	ticker.Stop()
	clk.Advance(time.Minute)
	assertQuiet(t, ticker.C(), "a stopped ticker does not tick")
	assert.Panics(t, func() { clk.NewTicker(0) }, "a ticker needs a period")
}

func TestClockSleepFiresTimers(t *testing.T) {
	clk := sim.NewClock()
	start := clk.Now()
	timer := clk.NewTimer(time.Second)
	require.NoError(t, clk.Sleep(context.Background(), 2*time.Second))
	assertSent(t, timer.C(), start.Add(time.Second), "a Sleep moves the clock past the timer")
}

// TestClockAwaitTimers: goroutines that wait on their timers are woken
// by the test's Advance, once AwaitTimers said they all armed them; no
// real time passes.
func TestClockAwaitTimers(t *testing.T) {
	clk := sim.NewClock()
	start := clk.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const n = 8
	got := make([]time.Time, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			timer := clk.NewTimer(time.Duration(i+1) * time.Second)
			got[i] = <-timer.C()
		})
	}
	require.NoError(t, clk.AwaitTimers(ctx, n))
	clk.Advance(n * time.Second)
	wg.Wait()
	for i, at := range got {
		assert.Equal(t, start.Add(time.Duration(i+1)*time.Second), at, "goroutine %d", i)
	}

	short, stop := context.WithCancel(context.Background())
	stop()
	assert.ErrorIs(t, clk.AwaitTimers(short, 1), context.Canceled, "no timer is armed")
}
