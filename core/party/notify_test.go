package party

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/notify"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
)

// notifierIn is a notifier of a session whose state dir is dir, as a
// fresh process builds it; it records what it tells in told.
func notifierIn(dir string, told *[]notify.Event, since time.Time) *notifier {
	return &notifier{Session: "s", StateDir: dir, Dir: NotifyDir(dir), LongTurn: time.Minute, Since: since,
		Policy: notify.Policy{On: map[notify.Kind]bool{notify.Permission: true, notify.Failed: true, notify.Done: true},
			Dedupe: 10 * time.Minute, Burst: 100, Window: time.Minute},
		Tell: func(_ context.Context, ev notify.Event) []notify.Result {
			*told = append(*told, ev)
			return []notify.Result{{Sink: "test", Status: "sent"}}
		},
		Roles: func(context.Context) map[string]string { return map[string]string{"%1": "claude"} },
		api:   supervise.NewUnixClient(filepath.Join(dir, "no-supervisor.sock"))}
}

// TestNotifierSurvivesKills: a notifier killed after any pass, or between
// saving and telling, resumes from its saved state: nothing is told twice
// and nothing after the kill is lost.
func TestNotifierSurvivesKills(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, state.MkdirPrivate(NotifyDir(dir)))
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	log := filepath.Join(dir, state.EventLog)
	add := func(d time.Duration, kind, typ string) {
		require.NoError(t, state.AppendEvent(log, hook.Event{Time: t0.Add(d), Pane: "%1", Agent: "claude", Kind: kind, Type: typ}))
	}
	var told []notify.Event
	ctx := context.Background()

	// History older than a minute before the first start is not told.
	add(0, hook.PromptSubmit, "")
	add(time.Second, hook.Notification, hook.PermissionPrompt)
	n := notifierIn(dir, &told, t0.Add(time.Minute))
	require.NoError(t, n.load())
	_, err := n.pass(ctx)
	require.NoError(t, err)
	assert.Empty(t, told)

	// A prompt's two hooks: told once.
	add(2*time.Minute, hook.ToolUse, "")
	add(2*time.Minute+time.Second, hook.Notification, hook.PermissionPrompt)
	add(2*time.Minute+2*time.Second, hook.Notification, hook.PermissionPrompt)
	_, err = n.pass(ctx)
	require.NoError(t, err)
	require.Len(t, told, 1)
	assert.Equal(t, "claude", told[0].Role)

	// Killed after the pass (nothing in memory survives): a new notifier
	// tells nothing again, then tells what is new, with the turn it knew.
	n = notifierIn(dir, &told, t0.Add(time.Hour))
	require.NoError(t, n.load())
	_, err = n.pass(ctx)
	require.NoError(t, err)
	assert.Len(t, told, 1)
	add(3*time.Minute, hook.TurnComplete, "")
	_, err = n.pass(ctx)
	require.NoError(t, err)
	require.Len(t, told, 2)
	assert.Equal(t, notify.Done, told[1].Kind, "the turn started before the kill is known")

	// Killed between saving and telling: that one is lost, never told
	// twice.
	add(4*time.Minute, hook.PromptSubmit, "")
	add(4*time.Minute+time.Second, hook.TurnFailed, "overloaded")
	n.Tell = func(context.Context, notify.Event) []notify.Result { panic("killed") }
	assert.Panics(t, func() { _, _ = n.pass(ctx) })
	n = notifierIn(dir, &told, time.Time{})
	require.NoError(t, n.load())
	_, err = n.pass(ctx)
	require.NoError(t, err)
	assert.Len(t, told, 2)

	// A line still being written is read once it is whole.
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"time":"2026-01-02T03:05:00Z","pane":"%1","agent":"claude","kind":"turn-failed"`)
	require.NoError(t, err)
	_, err = n.pass(ctx)
	require.NoError(t, err)
	assert.Len(t, told, 2)
	_, err = f.WriteString(`,"type":"api_error"}` + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	decided, err := n.pass(ctx)
	require.NoError(t, err)
	require.Len(t, told, 3)
	assert.Equal(t, notify.Failed, told[2].Kind)
	assert.Equal(t, "tell", decided[0].Verdict)
}
