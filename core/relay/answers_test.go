package relay

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Codex's title thread reports a turn of its own, quoting the thread's
// first prompt: it does not end the turn that was asked for a block, so
// the block is not taken off the screen (rendered) for it. A turn whose
// prompt names the block, or a turn of another agent, does.
func TestAnswersTitleThreadIsNotTheTurn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	title := `{"pane":"%0","agent":"codex","kind":"turn-complete","prompts":["Generate a concise, single-line task title … You are the PLANNER"],"answer":"Planner setup"}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(title), 0o600))
	a := &answers{path: path, pane: "%0"}
	b, err := a.find([]string{"tk-1-plan"})
	require.NoError(t, err)
	assert.Nil(t, b)
	assert.True(t, a.heard)
	assert.False(t, a.ended, "the title thread's turn is not the end of the asked turn")

	own := `{"pane":"%0","agent":"codex","kind":"turn-complete","prompts":["TASK tk-1: … id tk-1-plan …"],"answer":"no block here"}` + "\n"
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(own)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = a.find([]string{"tk-1-plan"})
	require.NoError(t, err)
	assert.True(t, a.ended)
}

// Gemini's turn on the primer, ending after the task's text went in (its
// AfterAgent names the turn's prompt), is not the end of the task's
// turn either.
func TestAnswersAnotherGeminiTurnIsNotTheTurn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	primer := `{"pane":"%1","agent":"gemini","kind":"turn-complete","prompts":["You are the EXECUTER in a planner/executor pair. … Reply \"ready\"."],"answer":"ready"}` + "\n"
	stop := `{"pane":"%1","agent":"claude","kind":"turn-complete","answer":"no block"}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(primer), 0o600))
	a := &answers{path: path, pane: "%1"}
	b, err := a.find([]string{"tk-1-result"})
	require.NoError(t, err)
	assert.Nil(t, b)
	assert.False(t, a.ended, "the primer's turn")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(stop)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = a.find([]string{"tk-1-result"})
	require.NoError(t, err)
	assert.True(t, a.ended, "a turn that names no prompt counts")
}
