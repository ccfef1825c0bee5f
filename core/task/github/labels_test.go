package github

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/partyhq/party/core/task"
)

func TestStatusOfIssue(t *testing.T) {
	for _, tc := range []struct {
		name   string
		state  string
		labels []string
		want   task.Status
	}{
		{"open without a label is pending", "open", nil, task.Pending},
		{"open with other labels is pending", "open", []string{"bug", "party:assignee:codex"}, task.Pending},
		{"pending", "open", []string{"party:pending"}, task.Pending},
		{"in progress", "open", []string{"bug", "party:in_progress"}, task.InProgress},
		{"done label on an open issue", "open", []string{"party:done"}, task.Done},
		{"several labels: the most advanced", "open", []string{"party:in_progress", "party:pending"}, task.InProgress},
		{"closed is done whatever the labels", "closed", []string{"party:pending"}, task.Done},
		{"closed without labels is done", "closed", nil, task.Done},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, StatusOf(tc.state, tc.labels))
		})
	}
}

func TestWithStatusKeepsExactlyOne(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels []string
		s      task.Status
		want   []string
	}{
		{"none yet", nil, task.Pending, []string{"party:pending"}},
		{"replaces the old one", []string{"bug", "party:pending"}, task.InProgress, []string{"bug", "party:in_progress"}},
		{"drops every other", []string{"party:done", "x", "party:pending", "party:in_progress"}, task.Done, []string{"x", "party:done"}},
		{"same status", []string{"party:done"}, task.Done, []string{"party:done"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := WithStatus(tc.labels, tc.s)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.s, StatusOf("open", got), "the status reads back")
		})
	}
}

func TestAssigneeLabel(t *testing.T) {
	ls := withAssignee([]string{"party:pending", "party:assignee:claude"}, "codex")
	assert.Equal(t, []string{"party:pending", "party:assignee:codex"}, ls)
	assert.Equal(t, "codex", assigneeOf(ls))
	assert.Equal(t, []string{"party:pending"}, withAssignee(ls, ""))
	assert.Empty(t, assigneeOf([]string{"party:pending"}))
	assert.ErrorIs(t, task.NewTask{Title: "x", Assignee: "a,b"}.Check(), task.ErrInvalid)
	assert.ErrorIs(t, checkLabel("a-role-name-much-too-long-for-a-github-label"), task.ErrInvalid)
	assert.NoError(t, checkLabel("executor-2"))
}

func TestCommentRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)
	line := commentLine("status", "pending", "in_progress", "codex", at)
	assert.Equal(t, "**[party]** Status changed: `pending` → `in_progress` · Actor: codex · 2026-11-23T20:00:00Z", line)
	body := "some words\n" + line + "\n" + commentLine("milestone", "", "2", "human", at.Add(time.Second))
	assert.Equal(t, []task.Event{
		{Event: "task_updated", ID: "7", Field: "status", From: "pending", To: "in_progress", Actor: "codex", TS: at},
		{Event: "task_updated", ID: "7", Field: "milestone", From: "", To: "2", Actor: "human", TS: at.Add(time.Second)},
	}, ParseComment("7", body))
	assert.Empty(t, ParseComment("7", "**[party]** Status changed: `a` → `b` · Actor: x · yesterday"))
}

func FuzzCommentRoundTrip(f *testing.F) {
	f.Add("pending", "done", "codex")
	f.Add("", "m-1", "human")
	f.Fuzz(func(t *testing.T, from, to, actor string) {
		// Values party writes: ids, statuses and roles, never holding a
		// backtick, a line break, the separator or the empty marker.
		for _, v := range []string{from, to, actor} {
			if !utf8.ValidString(v) || strings.ContainsAny(v, "`\r\n\u2028\u2029\u0085") || strings.Contains(v, " · ") ||
				v == "(none)" || strings.TrimSpace(v) != v {
				t.Skip()
			}
		}
		if actor == "" {
			t.Skip()
		}
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		got := ParseComment("1", commentLine("milestone", from, to, actor, at))
		if len(got) != 1 {
			t.Fatalf("got %d events from %q, want 1", len(got), commentLine("milestone", from, to, actor, at))
		}
		want := task.Event{Event: "task_updated", ID: "1", Field: "milestone", From: from, To: to, Actor: actor, TS: at}
		assert.Equal(t, want, got[0])
	})
}
