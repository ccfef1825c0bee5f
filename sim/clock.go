package sim

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/partyhq/party/core/clock"
)

// Clock is a virtual clock. Sleep advances it at once (auto-advance), so
// code under test that waits runs without real time passing. This suits
// one goroutine under test; concurrent sleepers each advance the shared
// time and do not wait for one another.
//
// Its timers and tickers fire only as the clock moves (Advance, Sleep):
// a goroutine that waits on one waits until the test moves the clock past
// its deadline, and AwaitTimers tells the test when the goroutine has
// armed it. It is safe for concurrent use.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*timer      // the armed ones
	seq    uint64        // arming order, which breaks ties between deadlines
	armed  chan struct{} // closed when a timer is armed (AwaitTimers)
}

var _ clock.Clock = (*Clock)(nil)

// NewClock returns a clock at a fixed instant.
func NewClock() *Clock {
	return &Clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

// Now returns the virtual time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep advances the clock by d, unless ctx is done.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	return nil
}

// Advance moves the clock forward by d, firing the timers and tickers due
// on the way in the order of their deadlines (of their arming, for equal
// ones): each sends its deadline, and a ticker fires again each period
// that fits. A timer's channel holds one time; a
// tick its reader has not taken yet is dropped, as time.Ticker's.
func (c *Clock) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	end := c.now.Add(d)
	for {
		t := c.next(end)
		if t == nil {
			break
		}
		c.now = t.when
		c.fire(t)
	}
	c.now = end
}

// next is the armed timer due first, by end at the latest; nil when none
// is. c.mu is held.
func (c *Clock) next(end time.Time) *timer {
	var first *timer
	for _, t := range c.timers {
		if t.when.After(end) {
			continue
		}
		if first == nil || t.when.Before(first.when) || (t.when.Equal(first.when) && t.seq < first.seq) {
			first = t
		}
	}
	return first
}

// fire sends t's deadline on its channel (unless a time is waiting there)
// and disarms it, or arms a ticker for its next period. c.mu is held.
func (c *Clock) fire(t *timer) {
	select {
	case t.c <- t.when:
	default:
	}
	if t.period > 0 {
		t.when = t.when.Add(t.period)
		c.seq++
		t.seq = c.seq
		return
	}
	c.disarm(t)
}

// arm arms t to fire d from now; at once when d is not positive. c.mu is
// held.
func (c *Clock) arm(t *timer, d time.Duration) {
	t.when = c.now.Add(d)
	c.seq++
	t.seq = c.seq
	c.timers = append(c.timers, t)
	if c.armed != nil {
		close(c.armed)
		c.armed = nil
	}
	if d <= 0 {
		c.fire(t)
	}
}

// disarm takes t off the armed timers, reporting whether it was armed. c.mu is held.
func (c *Clock) disarm(t *timer) bool {
	n := len(c.timers)
	c.timers = slices.DeleteFunc(c.timers, func(u *timer) bool { return u == t })
	return len(c.timers) < n
}

// drain takes the time waiting on t's channel, if any: after Stop or
// Reset, no earlier time is received. c.mu is held.
func drain(t *timer) {
	select {
	case <-t.c:
	default:
	}
}

// NewTimer returns a timer that fires once the clock has moved d on.
func (c *Clock) NewTimer(d time.Duration) clock.Timer {
	t := &timer{clock: c, c: make(chan time.Time, 1)}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.arm(t, d)
	return t
}

// NewTicker returns a ticker that fires each time the clock has moved d
// on. It panics if d is not positive, as time.NewTicker.
func (c *Clock) NewTicker(d time.Duration) clock.Ticker {
	if d <= 0 {
		panic("sim: non-positive interval for NewTicker")
	}
	t := &timer{clock: c, c: make(chan time.Time, 1), period: d}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.arm(t, d)
	return ticker{t}
}

// AwaitTimers waits until at least n timers and tickers are armed, or ctx
// is done: a test learns so that the code it runs is waiting on the clock
// before it moves the clock.
func (c *Clock) AwaitTimers(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		armed := len(c.timers)
		if c.armed == nil {
			c.armed = make(chan struct{})
		}
		changed := c.armed
		c.mu.Unlock()
		if armed >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("%d of %d timers armed: %w", armed, n, ctx.Err())
		}
	}
}

// timer is a Clock's timer, or (period > 0) the timer of its ticker.
type timer struct {
	clock  *Clock
	c      chan time.Time
	period time.Duration
	when   time.Time // its deadline, while armed
	seq    uint64
}

// C is the channel the time is sent on.
func (t *timer) C() <-chan time.Time { return t.c }

// Stop disarms the timer; it reports whether it was armed.
func (t *timer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	drain(t)
	return t.clock.disarm(t)
}

// Reset arms the timer to fire d from now; it reports whether it was
// armed.
func (t *timer) Reset(d time.Duration) bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	drain(t)
	was := t.clock.disarm(t)
	t.clock.arm(t, d)
	return was
}

// ticker is a Clock's ticker.
type ticker struct{ t *timer }

// C is the channel the ticks are sent on.
func (k ticker) C() <-chan time.Time { return k.t.c }

// Stop turns the ticker off.
func (k ticker) Stop() { k.t.Stop() }

// Locker serializes callers per key in memory (the simulator's stand-in
// for party's flock locks).
type Locker struct {
	mu    sync.Mutex
	locks map[string]chan struct{}
}

// Lock blocks until key is free or ctx is done.
func (l *Locker) Lock(ctx context.Context, key string) (func(), error) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]chan struct{}{}
	}
	c, ok := l.locks[key]
	if !ok {
		c = make(chan struct{}, 1)
		l.locks[key] = c
	}
	l.mu.Unlock()
	select {
	case c <- struct{}{}:
		return func() { <-c }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
