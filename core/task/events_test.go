package task

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	events, err := ReadEvents(path)
	require.NoError(t, err, "a missing log has no events")
	assert.Empty(t, events)

	good := `{"event":"task_added","id":"1","to":"a","actor":"planner","ts":"2026-11-23T20:00:00Z"}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(good+"\n"+good+`{"event":"task_upd`), 0o600))
	events, err = ReadEvents(path)
	require.NoError(t, err, "a blank line and a torn last append are skipped")
	assert.Len(t, events, 2)

	require.NoError(t, os.WriteFile(path, []byte(good+"not json\n"+good), 0o600))
	_, err = ReadEvents(path)
	assert.ErrorIs(t, err, ErrCorrupt)
	assert.ErrorContains(t, err, path+":2:")
}

func TestEventOfTask(t *testing.T) {
	assert.True(t, Event{Event: "task_updated", ID: "1"}.OfTask("1"))
	assert.True(t, Event{Event: "doc_updated", ID: "1"}.OfTask("1"))
	assert.False(t, Event{Event: "milestone_added", ID: "1"}.OfTask("1"), "a milestone with a task's id")
	assert.False(t, Event{Event: "task_updated", ID: "2"}.OfTask("1"))
	assert.True(t, Event{Event: "milestone_added", ID: "M1"}.OfTask(""))
}

func TestCheckRole(t *testing.T) {
	for _, ok := range []string{"codex", "planner-2", "a.b_c", "Executor"} {
		assert.NoError(t, CheckRole("actor", ok), ok)
	}
	for _, bad := range []string{"", "two words", "a,b", "line\nbreak", "@someone", "-x", "ünï"} {
		assert.ErrorIs(t, CheckRole("actor", bad), ErrInvalid, bad)
	}
}

func TestFSRefusesABadAssignee(t *testing.T) {
	ctx := t.Context()
	s := newTeam(t)
	_, err := s.AddTask(ctx, "planner", NewTask{Title: "a", Assignee: "two words"})
	assert.ErrorIs(t, err, ErrInvalid)
	tk, err := s.AddTask(ctx, "planner", NewTask{Title: "a"})
	require.NoError(t, err)
	bad := "x\ny"
	_, err = s.Update(ctx, "planner", tk.ID, Change{Assignee: &bad})
	assert.ErrorIs(t, err, ErrInvalid)
	none := ""
	_, err = s.Update(ctx, "planner", tk.ID, Change{Assignee: &none})
	assert.NoError(t, err, "an empty assignee clears it")
}

func TestPrintable(t *testing.T) {
	assert.Equal(t, "plain båd title", Printable("plain båd title"))
	assert.Equal(t, `a\nb\x1b[31mred\tc\u0085`, Printable("a\nb\x1b[31mred\tc\u0085"))
	assert.Equal(t, `2026-11-23T20:00:00Z  human  task_updated 1 title: - → x\x1b[2J`,
		Event{Event: "task_updated", ID: "1", Field: "title", To: "x\x1b[2J", Actor: "human", TS: t0}.String())
}
