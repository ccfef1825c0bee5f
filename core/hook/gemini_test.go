package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The payloads of Gemini CLI 0.61 (docs/agents-reference.md §4.3).
const (
	geminiBase = `"session_id":"7c1d","transcript_path":"/h/.gemini/tmp/x/chats/session.jsonl","cwd":"/w","timestamp":"2026-11-02T10:00:00.000Z"`
	transcript = "/h/.gemini/tmp/x/chats/session.jsonl"
)

func TestFromGemini(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		want    Event
	}{
		{"before agent", `{` + geminiBase + `,"hook_event_name":"BeforeAgent","prompt":"first\n\nsecond"}`,
			Event{Agent: "gemini", Raw: "BeforeAgent", Session: "7c1d", Kind: PromptSubmit, Prompts: []string{"first\n\nsecond"}}},
		{"after agent", `{` + geminiBase + `,"hook_event_name":"AfterAgent","prompt":"q","prompt_response":"line 1\n  line 2\n","stop_hook_active":false}`,
			Event{Agent: "gemini", Raw: "AfterAgent", Session: "7c1d", Kind: TurnComplete, Prompts: []string{"q"}, Answer: "line 1\n  line 2\n", Transcript: transcript}},
		{"after agent without text is a failure", `{` + geminiBase + `,"hook_event_name":"AfterAgent","prompt":"q","prompt_response":"[no response text]","stop_hook_active":false}`,
			Event{Agent: "gemini", Raw: "AfterAgent", Session: "7c1d", Kind: TurnFailed, Prompts: []string{"q"}, Type: "error", Transcript: transcript,
				Message: "Gemini's turn ended with no response text (the model request failed; the error is on its screen)"}},
		{"tool permission", `{` + geminiBase + `,"hook_event_name":"Notification","notification_type":"ToolPermission","message":"Tool Shell requires editing","details":{"type":"exec","title":"Confirm Shell Command","command":"rm -rf build","rootCommand":"rm"}}`,
			Event{Agent: "gemini", Raw: "Notification", Session: "7c1d", Kind: Notification, Type: PermissionPrompt, Message: "Tool Shell requires editing", Command: "rm -rf build"}},
		{"session start", `{` + geminiBase + `,"hook_event_name":"SessionStart","source":"startup"}`,
			Event{Agent: "gemini", Raw: "SessionStart", Session: "7c1d", Kind: SessionStart}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromGemini([]byte(tt.payload))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := FromGemini([]byte(`not json`))
	assert.ErrorIs(t, err, ErrPayload)
	_, err = FromGemini([]byte(`{}`))
	assert.ErrorIs(t, err, ErrPayload)
}

func TestMergeGeminiSettings(t *testing.T) {
	const cmd = `'/opt/party' hook gemini`
	user := `{"ui": {"theme": "dark"}, "hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}}`
	merged, changed, err := MergeGeminiSettings([]byte(user), cmd)
	require.NoError(t, err)
	assert.True(t, changed)
	var doc struct {
		UI    map[string]string `json:"ui"`
		Hooks map[string][]struct {
			Hooks []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	require.NoError(t, json.Unmarshal(merged, &doc))
	assert.Equal(t, "dark", doc.UI["theme"])
	require.Len(t, doc.Hooks["AfterAgent"], 2, "got %s", merged)
	assert.Equal(t, "echo mine", doc.Hooks["AfterAgent"][0].Hooks[0]["command"])
	for _, ev := range []string{"BeforeAgent", "AfterAgent", "Notification"} {
		groups := doc.Hooks[ev]
		h := groups[len(groups)-1].Hooks[0]
		assert.Equal(t, cmd, h["command"], ev)
		assert.Equal(t, "party", h["name"], ev)
		assert.EqualValues(t, GeminiHookTimeout, h["timeout"], ev)
	}

	again, changed, err := MergeGeminiSettings(merged, cmd)
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Equal(t, string(merged), string(again))

	// A moved party binary: its hooks are updated in place, not doubled.
	moved, changed, err := MergeGeminiSettings(merged, `/new/party hook gemini`)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, 3, strings.Count(string(moved), "hook gemini"))

	_, _, err = MergeGeminiSettings([]byte("{\n  // mine\n  \"a\": 1\n}"), cmd)
	assert.ErrorIs(t, err, ErrSettings)
	assert.ErrorContains(t, err, "comments")
	_, _, err = MergeGeminiSettings([]byte("{\n  \"a\": 1,\n}"), cmd)
	assert.ErrorIs(t, err, ErrSettings)
	assert.ErrorContains(t, err, "line 3")
}

func TestRemoveGeminiSettings(t *testing.T) {
	const cmd = `'/opt/party' hook gemini`
	user := `{"ui": {"theme": "dark"}, "hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}}`
	merged, _, err := MergeGeminiSettings([]byte(user), cmd)
	require.NoError(t, err)
	out, changed, empty, err := RemoveGeminiSettings(merged, cmd)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.False(t, empty)
	assert.JSONEq(t, user, string(out))

	fresh, _, err := MergeGeminiSettings(nil, cmd)
	require.NoError(t, err)
	out, changed, empty, err = RemoveGeminiSettings(fresh, cmd)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.True(t, empty)
	assert.JSONEq(t, `{}`, string(out))

	out, changed, _, err = RemoveGeminiSettings([]byte(user), cmd)
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Equal(t, user, string(out))
}

func TestGeminiTrust(t *testing.T) {
	home := t.TempDir()
	work := filepath.Join(home, "proj")
	require.NoError(t, os.MkdirAll(filepath.Join(work, "sub"), 0o755))
	env := map[string]string{"HOME": home}
	getenv := func(k string) string { return env[k] }
	write := func(name, content string) {
		require.NoError(t, os.MkdirAll(filepath.Join(home, ".gemini"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(home, ".gemini", name), []byte(content), 0o600))
	}
	ok, why := GeminiTrust(work, getenv)
	assert.False(t, ok)
	assert.Contains(t, why, "does not exist")

	write("trustedFolders.json", `{"`+work+`": "TRUST_FOLDER" // mine
	}`)
	ok, _ = GeminiTrust(filepath.Join(work, "sub"), getenv)
	assert.True(t, ok, "a trusted folder covers its subfolders")
	write("trustedFolders.json", `{"`+work+`": "TRUST_FOLDER", "`+filepath.Join(work, "sub")+`": "DO_NOT_TRUST"}`)
	ok, why = GeminiTrust(filepath.Join(work, "sub"), getenv)
	assert.False(t, ok, "the longest rule wins")
	assert.Contains(t, why, "DO_NOT_TRUST")
	write("trustedFolders.json", `{"`+filepath.Join(work, "x")+`": "TRUST_PARENT"}`)
	ok, _ = GeminiTrust(work, getenv)
	assert.True(t, ok, "TRUST_PARENT trusts the rule's parent")
	ok, _ = GeminiTrust(home, getenv)
	assert.False(t, ok)

	write("settings.json", `{"security": {"folderTrust": {"enabled": false}}}`)
	ok, _ = GeminiTrust(home, getenv)
	assert.True(t, ok, "folder trust off")
	env["GEMINI_CLI_TRUST_WORKSPACE"] = "false"
	ok, _ = GeminiTrust(home, getenv)
	assert.False(t, ok)
}

func TestGeminiTranscriptAnswer(t *testing.T) {
	// The shape of Gemini 0.61's chat recording.
	rec := `{"sessionId":"600c","projectHash":"8d4f","startTime":"2026-11-23T17:04:49.189Z","kind":"main"}
{"$set":{"messages":[{"id":"d049","type":"user","content":[{"text":"<session_context>...</session_context>"}]}]}}
{"id":"d24b","timestamp":"2026-11-23T17:04:49.739Z","type":"user","content":[{"text":"what is six times seven?"}]}
{"$set":{"lastUpdated":"2026-11-23T17:04:49.739Z"}}
{"id":"fb40","timestamp":"2026-11-23T17:04:50.307Z","type":"gemini","content":"old answer","thoughts":[],"model":"gemini-3.8-flash"}
{"id":"224b","timestamp":"2026-11-23T17:04:51.279Z","type":"user","content":[{"text":"and seven times six?"}]}
{"id":"96b6","timestamp":"2026-11-23T17:04:51.803Z","type":"gemini","content":"The answer is 42.\nSecond line.","thoughts":[]}
{"$set":{"lastUpdated":"2026-11-23T17:04:51.803Z"}}
`
	path := filepath.Join(t.TempDir(), "session.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(rec), 0o600))
	got, ok := GeminiTranscriptAnswer(path)
	assert.True(t, ok)
	assert.Equal(t, "The answer is 42.\nSecond line.", got)

	require.NoError(t, os.WriteFile(path, []byte(rec+`{"id":"x","type":"user","content":[{"text":"fails"}]}`+"\n"), 0o600))
	_, ok = GeminiTranscriptAnswer(path)
	assert.False(t, ok, "no model text after the last prompt")
	_, ok = GeminiTranscriptAnswer(filepath.Join(t.TempDir(), "missing"))
	assert.False(t, ok)
}

func TestCodexHome(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	assert.Equal(t, "/c", CodexHome(env(map[string]string{"CODEX_HOME": "/c", "HOME": "/h"})))
	assert.Equal(t, "/h/.codex", CodexHome(env(map[string]string{"HOME": "/h"})))
}
