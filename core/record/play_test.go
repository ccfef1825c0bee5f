package record

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
)

// sleeps is a clock that records its pauses and never waits; its timers
// are the wall clock's.
type sleeps []time.Duration

func (s *sleeps) NewTimer(d time.Duration) clock.Timer   { return clock.Real{}.NewTimer(d) }
func (s *sleeps) NewTicker(d time.Duration) clock.Ticker { return clock.Real{}.NewTicker(d) }

func (s *sleeps) Now() time.Time { return time.Time{} }
func (s *sleeps) Sleep(ctx context.Context, d time.Duration) error {
	*s = append(*s, d)
	return ctx.Err()
}

func TestPlay(t *testing.T) {
	events := []Event{{0.5, "o", "a"}, {1, "i", "typed"}, {1.5, "o", "b"}, {1.5, "o", "c"}, {3.5, "r", "80x24"}, {4.5, "o", "d"}}
	tests := []struct {
		name    string
		speed   float64
		noDelay bool
		want    []time.Duration
	}{
		{"recorded pacing", 1, false, []time.Duration{500 * time.Millisecond, time.Second, 3 * time.Second}},
		{"twice as fast", 2, false, []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, 1500 * time.Millisecond}},
		{"no delay", 1, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			var c sleeps
			require.NoError(t, Play(context.Background(), &c, &out, events, tt.speed, tt.noDelay))
			assert.Equal(t, "abcd", out.String(), "output events only")
			assert.Equal(t, tt.want, []time.Duration(c))
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var c sleeps
	assert.ErrorIs(t, Play(ctx, &c, &bytes.Buffer{}, events, 1, false), context.Canceled)
}
