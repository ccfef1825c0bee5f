package supervise

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// markFx are Effects that count their scans and restarts, whose panes'
// mark (PanesMarker) the test sets; the loop's scan calls nothing else.
type markFx struct {
	Effects
	seen     Seen
	mark     string
	ok       bool
	scans    int
	restarts int
}

func (f *markFx) Scan(context.Context) ([]Seen, error) { f.scans++; return []Seen{f.seen}, nil }

func (f *markFx) PanesMark(context.Context) (string, bool) { return f.mark, f.ok }

func (f *markFx) Restart(context.Context, Runtime, bool) (string, error) {
	f.restarts++
	return "h2", nil
}

// TestScanReadsThroughOnlyWhatMayHaveChanged: a scan reads tmux and the
// records through when the panes' mark moved or cannot tell, the store
// changed, tmux told of a change, a runtime's look is due (its restart,
// the end of its grace for not running its agent) or a minute passed;
// else it is the mark alone.
func TestScanReadsThroughOnlyWhatMayHaveChanged(t *testing.T) {
	ctx := context.Background()
	store := openStore(t)
	clk := &virtualClock{now: t0}
	fx := &markFx{mark: "a", ok: true, seen: Seen{Runtime: Runtime{ID: "s/claude", Role: "claude", Agent: "claude", Pane: "%1",
		PID: 7, Status: Ready, TokenHash: "h1"}, RunsAgent: true}}
	l := &Loop{Store: store, Clock: clk, Effects: fx, ScanEvery: 5 * time.Second,
		Recovery: RecoveryPolicy{RestartAfter: 5 * time.Second, NotAgentGrace: 30 * time.Second, MaxRestarts: 3, RestartWindow: 15 * time.Minute}}
	l.Store.keepReads()
	scan := func(step string, want int) {
		t.Helper()
		clk.now = clk.now.Add(l.ScanEvery)
		require.NoError(t, l.scan(ctx), step)
		assert.Equal(t, want, fx.scans, "scans after %s", step)
	}
	status := func() RuntimeStatus {
		t.Helper()
		rt, err := store.Runtime(ctx, "claude")
		require.NoError(t, err)
		return rt.Status
	}

	scan("the first scan", 1)
	scan("the registration it wrote", 2)
	scan("nothing changed", 2)
	scan("nothing changed again", 2)

	require.NoError(t, store.Heartbeat(ctx, "claude", "idle", clk.now))
	scan("a write to the store", 3)
	scan("nothing since", 3)

	fx.mark = "b"
	scan("a new mark", 4)
	scan("the same mark", 4)

	fx.ok = false
	scan("a mark that cannot tell", 5)
	scan("a mark that still cannot tell", 6)
	fx.ok = true
	scan("a mark again", 7)
	scan("the same mark", 7)

	l.scanNow = true
	scan("tmux told of a change", 8)
	scan("nothing since", 8)

	clk.now = clk.now.Add(fullScanEvery)
	scan("a minute later", 9)
	scan("nothing since", 9)

	// The pane runs something else: failed when its grace ends, with the
	// mark as it was.
	fx.mark, fx.seen.RunsAgent = "c", false
	scan("not its agent", 10)
	scan("its record", 11)
	for range 4 {
		scan("within the grace", 11)
	}
	assert.Equal(t, Ready, status(), "within the grace")
	scan("the grace ends", 12)
	assert.Equal(t, Failed, status())
	scan("its record", 13)
	scan("failed, nothing changed", 13)

	fx.mark, fx.seen.RunsAgent = "d", true
	scan("its agent again", 14)
	assert.Equal(t, Ready, status())
	scan("its record", 15)

	// Its pane dies: restarted once its restart is due, mark unchanged.
	fx.mark, fx.seen.Status = "e", Offline
	scan("dead", 16)
	assert.Equal(t, Offline, status())
	clk.now = clk.now.Add(-l.ScanEvery + time.Second) // before the restart is due
	scan("its record", 17)
	assert.Zero(t, fx.restarts)
	scan("the restart is due", 18)
	assert.Equal(t, 1, fx.restarts)
}
