package supervise

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// archiveFx are Effects with an archive (AuditArchive) that keeps what it
// is given, or fails; the loop's prune calls nothing else.
type archiveFx struct {
	Effects
	fail  bool
	given []string // the kinds given, in order
	kept  int      // how many times its rows were deleted
}

func (f *archiveFx) Archive(_ context.Context, evs []AuditEvent) (func(), error) {
	if f.fail {
		return nil, errors.New("disk full")
	}
	for _, ev := range evs {
		f.given = append(f.given, ev.Kind)
	}
	return func() { f.kept++ }, nil
}

// TestPruneArchivesTheAuditThatLasts: the audit rows a prune deletes
// that last (a trigger's ack and end, a thread's block and unblock, an
// override) go to the archive first; the others are only deleted; when
// the archive fails, nothing is.
func TestPruneArchivesTheAuditThatLasts(t *testing.T) {
	ctx := context.Background()
	store := openStore(t)
	var evs []AuditEvent
	for i, kind := range []string{AuditQueued, AuditOverride, AuditSent, AuditAck, AuditCompleted, AuditCursor,
		AuditFailed, AuditBlocked, AuditUnblocked, AuditRuntime, AuditOffline, AuditRetry} {
		evs = append(evs, AuditEvent{At: t0.Add(time.Duration(i) * time.Second), Kind: kind, Trigger: "t1", Role: "claude", Thread: "th"})
	}
	require.NoError(t, store.Audit(ctx, evs...))
	require.NoError(t, store.Audit(ctx, AuditEvent{At: t0.Add(time.Hour), Kind: AuditFailed, Trigger: "t2"}))
	fx := &archiveFx{fail: true}
	var logged []string
	l := &Loop{Store: store, Clock: &virtualClock{now: t0.Add(time.Hour + time.Minute)}, Effects: fx, Keep: time.Hour,
		Logf: func(f string, a ...any) { logged = append(logged, f) }}

	l.prune(ctx)
	left, err := store.Events(ctx, 0, 0)
	require.NoError(t, err)
	assert.Len(t, left, len(evs)+1, "an archive that failed: nothing deleted")
	assert.Contains(t, logged, "prune: %v")

	fx.fail, l.pruneDue = false, time.Time{}
	l.prune(ctx)
	assert.Equal(t, []string{AuditOverride, AuditAck, AuditCompleted, AuditFailed, AuditBlocked, AuditUnblocked}, fx.given)
	assert.Equal(t, 1, fx.kept, "told once the rows were deleted")
	left, err = store.Events(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, left, 1, "the recent row stays")
	assert.Equal(t, "t2", left[0].Trigger)
}
