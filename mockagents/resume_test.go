package mockagents

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A mock started to resume a session refuses it, as the real agent does,
// when it keeps nothing of it, and shows the conversation when it does.
func TestResumeRefusesWhatItKeepsNothingOf(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CODEX_HOME", "")
	t.Chdir(t.TempDir())
	const id = "0b7c1e2a-1111-4222-8333-944455556666"
	for _, tc := range []struct {
		persona, says string
		status        int
	}{
		{"claude", "No conversation found with session ID: " + id, 1},
		{"codex", "ERROR: No saved session found with ID " + id, 1},
		{"gemini", `Error resuming session: Invalid session identifier "` + id + `".`, 42},
	} {
		msg, status := refusal(Options{Persona: tc.persona, Resume: id})
		assert.Contains(t, msg, tc.says, tc.persona)
		assert.Equal(t, tc.status, status, tc.persona)
		msg, _ = refusal(Options{Persona: tc.persona})
		assert.Empty(t, msg, "%s: a fresh start", tc.persona)
	}

	// Kept: no refusal, and the conversation comes back.
	chat := newGeminiChat(id)
	chat.user([]string{"first question"})
	chat.response(modelResponse{text: "first answer", tool: &toolCall{name: "Bash", input: permissionInput("ls")}})
	chat.toolResult("README.md")
	msg, _ := refusal(Options{Persona: "gemini", Resume: id})
	assert.Empty(t, msg)
	assert.Equal(t, []pastTurn{{user: true, text: "first question"}, {text: "first answer"}}, past(Options{Persona: "gemini", Resume: id}))

	tr := newTranscript(id)
	tr.prompts([]string{"claude question"}, "p1")
	tr.text("claude answer")
	tr.response(modelResponse{text: "claude answer"})
	msg, _ = refusal(Options{Persona: "claude", Resume: id})
	assert.Empty(t, msg)
	assert.Equal(t, []pastTurn{{user: true, text: "claude question"}, {text: "claude answer"}}, past(Options{Persona: "claude", Resume: id}))

	r := newRollout(id)
	r.turnStarted([]string{"codex question"}, "")
	r.response(modelResponse{text: "codex answer"})
	r.completed("codex answer", "")
	require.NoError(t, r.f.Close())
	msg, _ = refusal(Options{Persona: "codex", Resume: id})
	assert.Empty(t, msg)
	assert.Equal(t, []pastTurn{{user: true, text: "codex question"}, {text: "codex answer"}}, past(Options{Persona: "codex", Resume: id}))
	files, _ := filepath.Glob(filepath.Join(os.Getenv("HOME"), ".codex", "sessions", "*", "*", "*", "rollout-*"))
	assert.Len(t, files, 1)
}
