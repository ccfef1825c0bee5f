package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResumeArgv(t *testing.T) {
	id := "9a5cebc5-6382-4c60-b81e-41facd48595f"
	for _, c := range []struct {
		kind Kind
		argv []string
		want []string
	}{
		{Claude, []string{"claude", "--settings", "s.json"}, []string{"claude", "--settings", "s.json", "--resume", id}},
		{Codex, []string{"codex", "-c", "allow_login_shell=false"}, []string{"codex", "-c", "allow_login_shell=false", "resume", id}},
		{Gemini, []string{"gemini"}, []string{"gemini", "--resume", id}},
	} {
		got, err := ResumeArgv(c.kind, c.argv, id)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, c.kind)
	}
	for _, bad := range []string{"", "--help", "a b", "../x", "a\nb"} {
		_, err := ResumeArgv(Claude, []string{"claude"}, bad)
		assert.ErrorIs(t, err, ErrNoResume, "id %q", bad)
	}
	_, err := ResumeArgv(Generic, []string{"vim"}, id)
	assert.ErrorIs(t, err, ErrNoResume)
}

func TestHeadlessArgv(t *testing.T) {
	got, err := HeadlessArgv(Codex, "/bin/codex", []string{"-c", "x=1"}, "t1", "-n look")
	require.NoError(t, err)
	assert.Equal(t, []string{"/bin/codex", "-c", "x=1", "exec", "--skip-git-repo-check", "--json", "resume", "t1", "-n look"}, got)
	got, err = HeadlessArgv(Gemini, "gemini", nil, "g1", "hi")
	require.NoError(t, err)
	assert.Equal(t, []string{"gemini", "--resume", "g1", "-p", "hi", "--output-format", "json"}, got)
	_, err = HeadlessArgv(Shell, "bash", nil, "x", "hi")
	assert.ErrorIs(t, err, ErrNoResume)
}

// The outputs are the pinned agents' own, as measured against the fake
// model.
func TestParseHeadless(t *testing.T) {
	h, err := ParseHeadless(Claude, []byte(`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"answer two","session_id":"9a5c"}`+"\n"))
	require.NoError(t, err)
	assert.Equal(t, Headless{Answer: "answer two", Session: "9a5c", Done: true, Ran: true}, h)
	_, err = ParseHeadless(Claude, []byte(`{"type":"result","is_error":true,"result":"API Error: 500","session_id":"9a5c"}`))
	assert.ErrorIs(t, err, ErrHeadlessTurn)
	_, err = ParseHeadless(Claude, []byte(`{"type":"res`))
	assert.ErrorIs(t, err, ErrHeadlessTurn)

	codex := `{"type":"thread.started","thread_id":"01a2"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for x not found."}}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"answer four"}}
{"type":"turn.completed","usage":{"input_tokens":24}}
`
	h, err = ParseHeadless(Codex, []byte(codex))
	require.NoError(t, err)
	assert.Equal(t, Headless{Answer: "answer four", Session: "01a2", Done: true, Ran: true}, h)
	_, err = ParseHeadless(Codex, []byte(`{"type":"thread.started","thread_id":"01a2"}`+"\n"+`{"type":"turn.started"}`))
	assert.ErrorIs(t, err, ErrHeadlessTurn, "a cut output is no answer")
	_, err = ParseHeadless(Codex, []byte(`{"type":"turn.failed","error":{"message":"stream error"}}`))
	assert.ErrorIs(t, err, ErrHeadlessTurn)

	h, err = ParseHeadless(Gemini, []byte("Warning: True color (24-bit) support not detected.\n{\n  \"session_id\": \"1168\",\n  \"response\": \"answer six\",\n  \"stats\": {}\n}\n"))
	require.NoError(t, err)
	assert.Equal(t, Headless{Answer: "answer six", Session: "1168", Done: true, Ran: true}, h)
	_, err = ParseHeadless(Gemini, []byte(`{"session_id":"1168","error":{"message":"quota"}}`))
	assert.ErrorIs(t, err, ErrHeadlessTurn)
}

// TestHeadlessRan: whether a headless run's output records a turn on the
// prompt, as the pinned agents print it against the fake model (measured:
// a model error 500 on a resumed session, and a resume of a session id
// that does not exist).
func TestHeadlessRan(t *testing.T) {
	for _, c := range []struct {
		name           string
		kind           Kind
		stdout, stderr string
		ran            bool
	}{
		{"claude, the model failed", Claude,
			`{"type":"result","subtype":"success","is_error":true,"api_error_status":500,"num_turns":1,"result":"API Error: 500 fakemodel: scripted failure 500.","stop_reason":"stop_sequence","session_id":"0344"}` + "\n", "", true},
		{"claude, no such session", Claude, "", "No conversation found with session ID: 3f1b5c2e-1111-4222-8333-944455556666\n", false},
		{"gemini, the model failed (its object on stderr)", Gemini, "",
			"Warning: True color (24-bit) support not detected.\n    at async Turn.run (file:///x/chunk.js:333001:24) {\n  status: 500\n}\n" +
				"{\n  \"session_id\": \"6b0c\",\n  \"error\": {\n    \"type\": \"Error\",\n    \"message\": \"{\\\"error\\\":{\\\"code\\\":500}}\",\n    \"code\": 500\n  }\n}\n", true},
		{"gemini, no such session", Gemini, "",
			"Error resuming session: Invalid session identifier \"3f1b\".\n  Use --list-sessions to see available sessions.\n", false},
		{"codex, the model failed", Codex,
			`{"type":"thread.started","thread_id":"01a2"}` + "\n" + `{"type":"turn.started"}` + "\n" +
				`{"type":"error","message":"Reconnecting... 1/5"}` + "\n" + `{"type":"turn.failed","error":{"message":"high demand"}}` + "\n", "", true},
		{"codex, no such session", Codex, "", "Error: thread/resume: thread/resume failed: no rollout found for thread id 3f1b (code -32600)\n", false},
		{"codex, another writer", Codex, "", "Error: thread/resume: thread/resume failed: thread 01a2 already has an active writer (code -32600)\n", false},
	} {
		h, err := ParseHeadlessRun(c.kind, []byte(c.stdout), []byte(c.stderr))
		assert.ErrorIs(t, err, ErrHeadlessTurn, c.name)
		assert.Equal(t, c.ran, h.Ran, c.name)
	}
}
