package review

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/daemon"
)

func TestEvidenceRows(t *testing.T) {
	edit := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s := New(edit.Add(-time.Hour), 3)
	s.LastEdit = edit
	s.Evidence[Critic] = edit.Add(time.Minute)
	s.Evidence[Minimizer] = edit.Add(-time.Minute)
	rows := s.EvidenceRows()
	require.Len(t, rows, len(Kinds), "every kind, in Kinds order")
	want := map[Kind]string{Critic: "fresh", Minimizer: "stale", ReviewApproved: "missing"}
	for _, r := range rows {
		if w, ok := want[r.Kind]; ok {
			assert.Equal(t, w, r.Status, "%s", r.Kind)
		}
		assert.Equal(t, r.Status == "missing", r.Time == nil, "%s: a time only when recorded", r.Kind)
	}
	assert.Equal(t, Kinds[0], rows[0].Kind)
	for _, r := range rows {
		switch r.Kind {
		case Critic:
			assert.Equal(t, []string{"critic", "fresh", edit.Add(time.Minute).Local().Format(time.TimeOnly)}, r.Row())
		case ReviewApproved:
			assert.Equal(t, []string{"review-approved", "missing", "-"}, r.Row(), "no time: -")
		}
	}
}

func TestLabel(t *testing.T) {
	assert.Equal(t, "IMPLEMENT", Label(Implement, ""))
	assert.Equal(t, "REVIEW (verdict)", Label(InReview, "verdict"))
}

func TestWriteStatus(t *testing.T) {
	since := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s := New(since, 3)
	s.State, s.Iteration, s.Reviews = InReview, 1, 2
	s.Review = &Review{N: 2, Outcome: Valid, Blocking: 1, Total: 3}
	s.Evidence[Critic] = since
	s.Note = "why"
	s.Exchanges = []Exchange{{N: 2, Kind: "prompt"}, {N: 1, Kind: "dialogue", To: "planner"}}
	var b strings.Builder
	WriteStatus(&b, s, daemon.Proc{Running: true, PID: 42}, since.Add(90*time.Second))
	assert.Equal(t, `State: REVIEW for 1m30s
Evidence: critic✓ minimizer✗ reviewer-ran✗ review-approved✗ tests-passed✗ checks-passed✗ security-scanned✗ pr-verified✗
Reviews: 1/3 (2 in all) | last: #2 valid, 1 blocking of 3
Last edit: - | Session: - | Coordinator: running (pid 42)
Note: why
Waiting for: #1 dialogue to planner, #2 prompt to reviewer
`, b.String())
	assert.Equal(t, "not running", daemon.Proc{}.Describe("not running"))
}

func TestWatch(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, Init(dir, time.Now().UTC(), 3))

	var states []State
	require.NoError(t, Watch(context.Background(), clock.Real{}, dir, 0, func(s Status, p daemon.Proc, _ time.Time) {
		states = append(states, s.State)
		assert.False(t, p.Running)
	}))
	assert.Len(t, states, 1, "once without an interval")

	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var at []time.Time
		err := Watch(ctx, clock.Real{}, dir, time.Second, func(_ Status, _ daemon.Proc, now time.Time) {
			if at = append(at, now); len(at) == 3 {
				cancel()
			}
		})
		assert.NoError(t, err, "an interrupt ends a watch cleanly")
		require.Len(t, at, 3)
		assert.Equal(t, time.Second, at[2].Sub(at[1]), "every interval")
	})

	err := Watch(context.Background(), clock.Real{}, t.TempDir(), time.Second, func(Status, daemon.Proc, time.Time) { t.Fatal("shown") })
	assert.ErrorIs(t, err, ErrNoCoordinator)
}
