package review

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/hook"
)

func TestHooks(t *testing.T) {
	stateDir := t.TempDir()
	repo := filepath.Join(t.TempDir(), "repo")
	h := Hooks{Cwd: func(string, string) (string, error) { return repo, nil }}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	edit := hook.Event{Time: at, Kind: hook.ToolUsed, Tool: "Edit", File: filepath.Join(repo, "cache.go")}

	assert.Empty(t, h.Gate(stateDir, "party review request"), "no review: no gate")
	require.NoError(t, h.Signal(stateDir, edit))
	sigs, err := Signals(Dir(stateDir))
	require.NoError(t, err)
	assert.Empty(t, sigs, "no review: no signal")

	require.NoError(t, Init(Dir(stateDir), at, 3))
	assert.Contains(t, h.Gate(stateDir, "party review request"), "needs fresh critic evidence")
	assert.Empty(t, h.Gate(stateDir, "party evidence add critic && party review request"))

	for _, ev := range []hook.Event{
		edit,
		{Time: at, Kind: hook.ToolUsed, Tool: "Write", File: filepath.Join(repo, "NOTES.md")},
		{Time: at, Kind: hook.ToolUsed, Tool: "Read", File: filepath.Join(repo, "x.go")},
		{Time: at, Kind: hook.SessionStart, Session: "abc"},
		{Time: at, Kind: hook.SessionStart},
	} {
		require.NoError(t, h.Signal(stateDir, ev))
	}
	sigs, err = Signals(Dir(stateDir))
	require.NoError(t, err)
	var got []Event
	for _, s := range sigs {
		got = append(got, s.Event)
	}
	assert.ElementsMatch(t, []Event{{Kind: EvEdit, Reason: edit.File, At: at}, {Kind: EvSession, Text: "abc", At: at}}, got,
		"a code edit and a session id; notes, reads and empty sessions say nothing")
}
