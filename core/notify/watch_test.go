package notify

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/supervise"
)

func TestKindsAreConfigs(t *testing.T) {
	var names []string
	for _, k := range Kinds {
		names = append(names, string(k))
	}
	assert.Equal(t, config.NotifyKinds, names)
	assert.Equal(t, config.NotifySinks, SinkNames)
}

// TestWatchHook: a turn's hook events, as claude sends them.
func TestWatchHook(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	ev := func(d time.Duration, kind, typ string) hook.Event {
		return hook.Event{Time: t0.Add(d), Pane: "%1", Agent: "claude", Kind: kind, Type: typ}
	}
	var w Watch
	var out []Event
	w, out = w.Hook("s", ev(0, hook.PromptSubmit, ""), time.Minute)
	assert.Empty(t, out)

	// One permission prompt, told through two hooks: one key.
	w, _ = w.Hook("s", ev(time.Second, hook.ToolUse, ""), time.Minute)
	perm := ev(2*time.Second, hook.Notification, hook.PermissionPrompt)
	perm.Tool, perm.Command = "Bash", "rm -rf build"
	w, first := w.Hook("s", perm, time.Minute)
	require.Len(t, first, 1)
	assert.Equal(t, Event{Kind: Permission, Session: "s", Pane: "%1", At: t0.Add(2 * time.Second), Title: "claude asks for permission",
		Body: "Bash rm -rf build", Key: first[0].Key}, first[0])
	again := ev(2*time.Second+time.Millisecond, hook.Notification, hook.PermissionPrompt)
	again.Message = "Claude needs your permission to use Bash"
	w, second := w.Hook("s", again, time.Minute)
	require.Len(t, second, 1)
	assert.Equal(t, first[0].Key, second[0].Key)

	// The next tool call's prompt is another.
	w, _ = w.Hook("s", ev(3*time.Second, hook.ToolUsed, ""), time.Minute)
	w, third := w.Hook("s", perm, time.Minute)
	require.Len(t, third, 1)
	assert.NotEqual(t, first[0].Key, third[0].Key)

	// Idle is nobody's business; an elicitation is a dialog.
	w, out = w.Hook("s", ev(4*time.Second, hook.Notification, "idle_prompt"), time.Minute)
	assert.Empty(t, out)
	w, out = w.Hook("s", ev(5*time.Second, hook.Notification, "elicitation_dialog"), time.Minute)
	require.Len(t, out, 1)
	assert.Equal(t, Dialog, out[0].Kind)

	// A turn of two minutes ends: done.
	w, out = w.Hook("s", ev(2*time.Minute, hook.TurnComplete, ""), time.Minute)
	require.Len(t, out, 1)
	assert.Equal(t, Done, out[0].Kind)
	assert.Equal(t, "a turn of 2m0s ended", out[0].Body)
	assert.Empty(t, w.Turns)

	// A short one: nothing; a failed one: failed, its text on one line
	// without escapes.
	w, _ = w.Hook("s", ev(3*time.Minute, hook.PromptSubmit, ""), time.Minute)
	w, out = w.Hook("s", ev(3*time.Minute+time.Second, hook.TurnComplete, ""), time.Minute)
	assert.Empty(t, out)
	failed := ev(4*time.Minute, hook.TurnFailed, "rate_limit")
	failed.Message = "429\n\x1b]9;forged\aToo many"
	_, out = w.Hook("s", failed, time.Minute)
	require.Len(t, out, 1)
	assert.Equal(t, Failed, out[0].Kind)
	assert.Equal(t, "rate_limit 429 ]9;forgedToo many", out[0].Body)
}

// TestWatchCodexTurn: codex reports no submit; the turn starts when party
// pasted the text.
func TestWatchCodexTurn(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	var w Watch
	w, _ = w.Hook("s", hook.Event{Time: t0, Pane: "%2", Kind: "input"}, time.Minute)
	_, out := w.Hook("s", hook.Event{Time: t0.Add(3 * time.Minute), Pane: "%2", Agent: "codex", Kind: hook.TurnComplete}, time.Minute)
	require.Len(t, out, 1)
	assert.Equal(t, Event{Kind: Done, Session: "s", Pane: "%2", At: t0.Add(3 * time.Minute), Title: "codex finished",
		Body: "a turn of 3m0s ended", Key: out[0].Key}, out[0])
}

func TestWatchAudit(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	var w Watch
	w, out := w.Audit("s", supervise.AuditEvent{Seq: 4, At: at, Kind: supervise.AuditSent, Trigger: "t1"})
	assert.Empty(t, out)
	w, out = w.Audit("s", supervise.AuditEvent{Seq: 5, At: at, Kind: supervise.AuditFailed, Trigger: "t1", Role: "codex",
		Result: string(supervise.DeferTimeout), Detail: "the operator stayed busy"})
	require.Len(t, out, 1)
	assert.Equal(t, Event{Kind: Trigger, Session: "s", Role: "codex", At: at, Key: "audit|5",
		Title: "trigger t1 to codex waited past its limit", Body: "the operator stayed busy"}, out[0])
	w, out = w.Audit("s", supervise.AuditEvent{Seq: 6, At: at, Kind: supervise.AuditBlocked, Thread: "th"})
	require.Len(t, out, 1)
	assert.Equal(t, "thread th was blocked", out[0].Title)
	assert.Equal(t, int64(6), w.AuditSeq)
	w, out = w.Audit("s", supervise.AuditEvent{Seq: 7, At: at, Kind: supervise.AuditResumeStarted, Trigger: "t2", Role: "claude",
		Result: string(supervise.DeferTimeout)})
	require.Len(t, out, 1, "a trigger deferred past its limit and resumed is told")
	assert.Equal(t, "trigger t2 to claude waited past its limit; its session answers without its pane", out[0].Title)
	w, out = w.Audit("s", supervise.AuditEvent{Seq: 8, At: at, Kind: supervise.AuditResumeStarted, Trigger: "t3", Role: "claude",
		Result: string(supervise.AckTimeout)})
	assert.Empty(t, out, "an agent that did not ack is recovered without a person")
	w, out = w.Audit("s", supervise.AuditEvent{Seq: 9, At: at, Kind: supervise.AuditStalled, Role: "codex",
		Result: string(supervise.Stalled), Detail: "busy with no screen change and no event of its own for 2m0s"})
	require.Len(t, out, 1, "a stalled agent is told")
	assert.Equal(t, Event{Kind: Stalled, Session: "s", Role: "codex", At: at, Key: "audit|9",
		Title: "codex is stalled: busy, no sign of life", Body: "busy with no screen change and no event of its own for 2m0s"}, out[0])
	_, out = w.Audit("s", supervise.AuditEvent{Seq: 10, At: at, Kind: supervise.AuditUnstalled, Role: "codex"})
	assert.Empty(t, out, "its end is not told")
}

func TestWatchReview(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	var w Watch
	w, out := w.ReviewState("s", review.Status{State: review.NeedsDiscussion, Since: t0})
	assert.Empty(t, out, "the state the notifier first sees is history")
	w, out = w.ReviewState("s", review.Status{State: review.InReview, Since: t0.Add(time.Minute)})
	assert.Empty(t, out)
	w, out = w.ReviewState("s", review.Status{State: review.NeedsDiscussion, Since: t0.Add(2 * time.Minute), Note: "3 reviews"})
	require.Len(t, out, 1)
	assert.Equal(t, Discussion, out[0].Kind)
	assert.Equal(t, "3 reviews", out[0].Body)
	_, out = w.ReviewState("s", review.Status{State: review.NeedsDiscussion, Since: t0.Add(2 * time.Minute), Note: "3 reviews"})
	assert.Empty(t, out, "seen once")
}

func TestWatchBudget(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	use := func(used float64) []BudgetUse {
		return []BudgetUse{{Key: "budget.roleTokens", Scope: "t/claude", Role: "claude", Used: used, Text: "t/claude spent …"}}
	}
	titles := func(evs []Event) (out []string) {
		for _, e := range evs {
			out = append(out, e.Title)
		}
		return out
	}
	var w Watch
	w, out := w.Budget("t", use(0.5), at)
	assert.Empty(t, out, "half spent: nothing")
	w, out = w.Budget("t", use(0.85), at)
	require.Len(t, out, 1)
	assert.Equal(t, Event{Kind: Budget, Session: "t", Role: "claude", At: at, Key: "budget|budget.roleTokens|t/claude|80",
		Title: "t/claude: 85% of budget.roleTokens spent", Body: "t/claude spent …"}, out[0])
	w, out = w.Budget("t", use(0.9), at)
	assert.Empty(t, out, "80% is told once")
	w, out = w.Budget("t", use(1.1), at)
	assert.Equal(t, []string{"t/claude: budget.roleTokens spent; its agents' triggers are held"}, titles(out))
	w, out = w.Budget("t", use(1.3), at)
	assert.Empty(t, out, "spent is told once")
	w, out = w.Budget("t", use(0.1), at) // a limit raised
	assert.Empty(t, out)
	_, out = w.Budget("t", use(0.95), at)
	assert.Equal(t, []string{"t/claude: 95% of budget.roleTokens spent"}, titles(out), "passed again: told again")
	_, out = w.Budget("t", []BudgetUse{{Key: "budget.dayUSD", Scope: "t 2026-01-02", Used: 1}, {Key: "budget.sessionTokens", Scope: "t", Used: 0.8}}, at)
	assert.Len(t, out, 2, "each budget on its own")
}
