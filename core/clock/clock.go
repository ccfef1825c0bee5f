package clock

import (
	"context"
	"time"
)

// Clock tells the time and waits. Waits take a context so that callers can
// cancel them, or go through a Timer or Ticker of the clock so that a
// select can wait for them with other things; core code does not call
// time.Sleep, time.After, time.NewTimer or time.NewTicker directly
// (dbfile.WhileBusy aside: its doc says why).
type Clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx is done, returning ctx.Err() in the
	// latter case.
	Sleep(ctx context.Context, d time.Duration) error
	// NewTimer returns a timer that sends the clock's time on its channel
	// once d has passed, as time.NewTimer.
	NewTimer(d time.Duration) Timer
	// NewTicker returns a ticker that sends the clock's time on its
	// channel every d, dropping ticks for a slow reader, as
	// time.NewTicker. d must be positive.
	NewTicker(d time.Duration) Ticker
}

// Timer is a Clock's time.Timer. After Stop or Reset returns, no time from
// before the call is received from C (Go 1.23's timers).
type Timer interface {
	// C is the channel the time is sent on.
	C() <-chan time.Time
	// Stop keeps the timer from firing; it reports whether it was armed.
	Stop() bool
	// Reset arms the timer to fire once d has passed from now; it
	// reports whether it was armed.
	Reset(d time.Duration) bool
}

// Ticker is a Clock's time.Ticker.
type Ticker interface {
	// C is the channel the ticks are sent on.
	C() <-chan time.Time
	// Stop turns the ticker off: no more ticks are sent.
	Stop()
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// Sleep waits for d or until ctx is done.
func (Real) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// NewTimer returns time.NewTimer(d).
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

// NewTicker returns time.NewTicker(d).
func (Real) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

// realTimer is a *time.Timer as a Timer.
type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

// realTicker is a *time.Ticker as a Ticker.
type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }
