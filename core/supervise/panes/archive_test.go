package panes

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/observe"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/tmux"
)

// TestArchiveWritesEachLineOnce: the audit events a prune deletes are
// lines of the session's event log, each once: a prune that failed, or a
// supervisor killed before its prune committed, gives them again, and
// those the log holds are not written twice; the hooks' events around
// them are left as they are, and their readers pass them by.
func TestArchiveWritesEachLineOnce(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	log := filepath.Join(dir, state.EventLog)
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	ev := func(seq int64, kind string) supervise.AuditEvent {
		return supervise.AuditEvent{Seq: seq, At: at.Add(time.Duration(seq) * time.Second), Kind: kind, Trigger: "t1", Role: "claude",
			Thread: "th", Result: "ACK_TIMEOUT"}
	}
	hookEvent := func() {
		require.NoError(t, state.AppendEvent(log, hook.Event{Time: at, Pane: "%1", Agent: "claude", Kind: hook.TurnComplete}))
	}
	lines := func() []AuditLine {
		t.Helper()
		b, err := os.ReadFile(log)
		require.NoError(t, err)
		var out []AuditLine
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			var l AuditLine
			require.NoError(t, json.Unmarshal([]byte(line), &l))
			if strings.HasPrefix(l.Kind, "supervise.") {
				out = append(out, l)
			}
		}
		return out
	}
	fx := &Effects{Info: tmux.SessionInfo{StateDir: dir}}

	hookEvent()
	_, err := fx.Archive(ctx, []supervise.AuditEvent{ev(1, supervise.AuditAck), ev(2, supervise.AuditFailed)})
	require.NoError(t, err)
	hookEvent()
	// That prune failed: its rows come again, with another.
	kept, err := fx.Archive(ctx, []supervise.AuditEvent{ev(1, supervise.AuditAck), ev(2, supervise.AuditFailed), ev(3, supervise.AuditBlocked)})
	require.NoError(t, err)
	kept()
	got := lines()
	require.Len(t, got, 3)
	assert.Equal(t, AuditLine{Time: at.Add(2 * time.Second), Kind: "supervise.trigger_failed", Audit: ev(2, supervise.AuditFailed)}, got[1])
	assert.Equal(t, "supervise.thread_blocked", got[2].Kind)

	// A supervisor killed after the lines, before the rows went: the next
	// one (nothing read yet) gives them again.
	_, err = fx.Archive(ctx, []supervise.AuditEvent{ev(4, supervise.AuditCompleted)})
	require.NoError(t, err)
	next := &Effects{Info: tmux.SessionInfo{StateDir: dir}}
	_, err = next.Archive(ctx, []supervise.AuditEvent{ev(4, supervise.AuditCompleted), ev(5, supervise.AuditOverride)})
	require.NoError(t, err)
	assert.Len(t, lines(), 5, "each once")

	var seen []string
	observe.Events{Path: log}.Each("%1", 0, func(e hook.Event) bool { seen = append(seen, e.Kind); return true })
	assert.Equal(t, []string{hook.TurnComplete, hook.TurnComplete}, seen, "a pane's events are the hooks' alone")
}
