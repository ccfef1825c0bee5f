package sim

import (
	"context"
	"sync"
	"time"
)

// Clock is a virtual clock. Sleep advances it at once (auto-advance), so
// code under test that waits runs without real time passing. This suits
// one goroutine under test; concurrent sleepers each advance the shared
// time and do not wait for one another.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

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

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

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
