package daemon

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/testhome"
)

// TestMain runs the tests in a home of their own (testhome).
func TestMain(m *testing.M) { os.Exit(testhome.Main(m)) }

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// fakeClock is a clock the test moves by hand; its timers are the wall
// clock's (the code under test sets none).
type fakeClock struct {
	clock.Real
	now time.Time
}

func (c *fakeClock) Now() time.Time { return c.now }
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.now = c.now.Add(d)
	return ctx.Err()
}

// logLines are the lines a Logf was given.
type logLines []string

func (l *logLines) logf(format string, args ...any) { *l = append(*l, fmt.Sprintf(format, args...)) }
