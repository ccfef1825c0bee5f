package notify

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
)

// notifierIn is a notifier of a session whose state dir is dir, as a
// fresh process builds it; it records what it tells in told.
func notifierIn(dir string, told *[]Event, since time.Time) *Notifier {
	return &Notifier{Session: "s", StateDir: dir, Dir: Dir(dir), LongTurn: time.Minute, Since: since,
		Policy: Policy{On: map[Kind]bool{Permission: true, Failed: true, Done: true},
			Dedupe: 10 * time.Minute, Burst: 100, Window: time.Minute},
		Tell: func(_ context.Context, ev Event) []Result {
			*told = append(*told, ev)
			return []Result{{Sink: "test", Status: "sent"}}
		},
		Roles: func(context.Context) map[string]string { return map[string]string{"%1": "claude"} },
		Audit: supervise.NewUnixClient(filepath.Join(dir, "no-supervisor.sock"))}
}

// TestNotifierSurvivesKills: a notifier killed after any pass, or between
// saving and telling, resumes from its saved state: nothing is told twice
// and nothing after the kill is lost.
func TestNotifierSurvivesKills(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, state.MkdirPrivate(Dir(dir)))
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	log := filepath.Join(dir, state.EventLog)
	add := func(d time.Duration, kind, typ string) {
		require.NoError(t, state.AppendEvent(log, hook.Event{Time: t0.Add(d), Pane: "%1", Agent: "claude", Kind: kind, Type: typ}))
	}
	var told []Event
	ctx := context.Background()

	// History older than a minute before the first start is not told.
	add(0, hook.PromptSubmit, "")
	add(time.Second, hook.Notification, hook.PermissionPrompt)
	n := notifierIn(dir, &told, t0.Add(time.Minute))
	require.NoError(t, n.Load())
	_, err := n.Pass(ctx)
	require.NoError(t, err)
	assert.Empty(t, told)

	// A prompt's two hooks: told once.
	add(2*time.Minute, hook.ToolUse, "")
	add(2*time.Minute+time.Second, hook.Notification, hook.PermissionPrompt)
	add(2*time.Minute+2*time.Second, hook.Notification, hook.PermissionPrompt)
	_, err = n.Pass(ctx)
	require.NoError(t, err)
	require.Len(t, told, 1)
	assert.Equal(t, "claude", told[0].Role)

	// Killed after the pass (nothing in memory survives): a new notifier
	// tells nothing again, then tells what is new, with the turn it knew.
	n = notifierIn(dir, &told, t0.Add(time.Hour))
	require.NoError(t, n.Load())
	_, err = n.Pass(ctx)
	require.NoError(t, err)
	assert.Len(t, told, 1)
	add(3*time.Minute, hook.TurnComplete, "")
	_, err = n.Pass(ctx)
	require.NoError(t, err)
	require.Len(t, told, 2)
	assert.Equal(t, Done, told[1].Kind, "the turn started before the kill is known")

	// Killed between saving and telling: that one is lost, never told
	// twice.
	add(4*time.Minute, hook.PromptSubmit, "")
	add(4*time.Minute+time.Second, hook.TurnFailed, "overloaded")
	n.Tell = func(context.Context, Event) []Result { panic("killed") }
	assert.Panics(t, func() { _, _ = n.Pass(ctx) })
	n = notifierIn(dir, &told, time.Time{})
	require.NoError(t, n.Load())
	_, err = n.Pass(ctx)
	require.NoError(t, err)
	assert.Len(t, told, 2)

	// A line still being written is read once it is whole.
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"time":"2026-01-02T03:05:00Z","pane":"%1","agent":"claude","kind":"turn-failed"`)
	require.NoError(t, err)
	_, err = n.Pass(ctx)
	require.NoError(t, err)
	assert.Len(t, told, 2)
	_, err = f.WriteString(`,"type":"api_error"}` + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	decided, err := n.Pass(ctx)
	require.NoError(t, err)
	require.Len(t, told, 3)
	assert.Equal(t, Failed, told[2].Kind)
	assert.Equal(t, "tell", decided[0].Verdict)
}

// lines is a log that hands each line written to it to a channel.
type lines chan string

func (l lines) Write(b []byte) (int, error) {
	l <- string(b)
	return len(b), nil
}

// stopped is a clock whose waits end only with their context: Run passes
// only when woken.
type stopped struct{ clock.Real }

func (stopped) Now() time.Time { return time.Time{} }

func (stopped) Sleep(ctx context.Context, _ time.Duration) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestNotifierRun: Run passes at once and again on each wake-up, writes
// each decision to its log as the line LogFile has, and returns when its
// context ends.
func TestNotifierRun(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, state.MkdirPrivate(Dir(dir)))
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	events := filepath.Join(dir, state.EventLog)
	add := func(d time.Duration, kind, typ string) {
		require.NoError(t, state.AppendEvent(events, hook.Event{Time: t0.Add(d), Pane: "%1", Agent: "claude", Kind: kind, Type: typ}))
	}
	var told []Event
	n := notifierIn(dir, &told, time.Time{})
	log := make(lines, 10)
	wake := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error)
	add(0, hook.Notification, hook.PermissionPrompt)
	go func() { done <- n.Run(ctx, stopped{}, wake, log, func(err error) { t.Errorf("pass: %v", err) }) }()

	first := <-log
	add(time.Minute, hook.Notification, hook.PermissionPrompt)
	wake <- struct{}{}
	second := <-log
	cancel()
	require.NoError(t, <-done)

	b, err := os.ReadFile(filepath.Join(Dir(dir), LogFile))
	require.NoError(t, err)
	assert.Equal(t, string(b), first+second, "the log's lines are the told log's")
	assert.Contains(t, first, `"verdict":"tell"`)
	assert.Contains(t, second, `"verdict":"duplicate"`)
	assert.Len(t, told, 1)
}

// TestNew: the notifier's policy and sinks are its configuration's.
func TestNew(t *testing.T) {
	tm := &fakeTmux{}
	cfg := config.Notify{Events: "permission,failed", Sinks: "tmux, webhook", Dedupe: time.Minute, PerMinute: 3, LongTurn: time.Hour}
	n, err := New(cfg, "s", "/state", tm)
	require.NoError(t, err)
	assert.Equal(t, Policy{On: map[Kind]bool{Permission: true, Failed: true}, Dedupe: time.Minute, Burst: 3, Window: time.Minute}, n.Policy)
	assert.Equal(t, Dir("/state"), n.Dir)
	assert.Equal(t, time.Hour, n.LongTurn)

	for _, tc := range []struct {
		name, sinks, session string
		on                   map[string]bool
		tmux                 bool
	}{
		{"a list", "tmux, webhook", "s", map[string]bool{SinkTmux: true, SinkWebhook: true}, true},
		{"all", "all", "s", map[string]bool{SinkTmux: true, SinkTerminal: true, SinkDesktop: true, SinkWebhook: true}, true},
		{"no session", "tmux", "", map[string]bool{SinkTmux: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSinks(config.Notify{Sinks: tc.sinks}, tc.session, tm)
			assert.Equal(t, tc.on, s.On)
			assert.Equal(t, tc.tmux, s.Tmux != nil)
		})
	}

	_, err = New(config.Notify{Events: "permission,nonsense"}, "s", "/state", tm)
	assert.ErrorIs(t, err, config.ErrInvalid)
}
