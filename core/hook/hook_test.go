package hook

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFromClaude(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		want    Event
	}{
		{"prompt", `{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"hi"}`,
			Event{Agent: "claude", Raw: "UserPromptSubmit", Session: "s1", Kind: PromptSubmit, Prompts: []string{"hi"}}},
		{"stop", `{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"done"}`,
			Event{Agent: "claude", Raw: "Stop", Session: "s1", Kind: TurnComplete, Answer: "done"}},
		{"stop failure", `{"hook_event_name":"StopFailure","error_type":"rate_limit","error":"429"}`,
			Event{Agent: "claude", Raw: "StopFailure", Kind: TurnFailed, Type: "rate_limit", Message: "429"}},
		{"permission", `{"hook_event_name":"Notification","notification_type":"permission_prompt","message":"Claude needs your permission to use Bash"}`,
			Event{Agent: "claude", Raw: "Notification", Kind: Notification, Type: "permission_prompt", Message: "Claude needs your permission to use Bash"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromClaude([]byte(tt.payload))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := FromClaude([]byte(`{`))
	assert.ErrorIs(t, err, ErrPayload)
	_, err = FromClaude([]byte(`{}`))
	assert.ErrorIs(t, err, ErrPayload)
}

func TestFromCodex(t *testing.T) {
	got, err := FromCodex([]byte(`{"type":"agent-turn-complete","thread-id":"t","turn-id":"1","cwd":"/w","input-messages":["q"],"last-assistant-message":"a"}`))
	require.NoError(t, err)
	assert.Equal(t, Event{Agent: "codex", Raw: "agent-turn-complete", Kind: TurnComplete, Session: "t", Prompts: []string{"q"}, Answer: "a"}, got)
	_, err = FromCodex([]byte(`nope`))
	assert.ErrorIs(t, err, ErrPayload)
}

func TestWiring(t *testing.T) {
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct{ Type, Command string } `json:"hooks"`
		} `json:"hooks"`
	}
	require.NoError(t, json.Unmarshal(ClaudeSettings("'/opt/my party/party' hook claude"), &s))
	for _, ev := range []string{"Stop", "StopFailure", "UserPromptSubmit", "Notification"} {
		require.Len(t, s.Hooks[ev], 1, ev)
		assert.Equal(t, "'/opt/my party/party' hook claude", s.Hooks[ev][0].Hooks[0].Command)
	}
	assert.Equal(t, `notify=["/p q/party","hook","codex-notify"]`, CodexNotify([]string{"/p q/party", "hook", "codex-notify"}))
	assert.Equal(t, `'it'\''s'`, ShellQuote("it's"))
}
