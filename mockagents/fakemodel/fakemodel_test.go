package fakemodel

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/partyhq/party/mockagents/mocklog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testScript = `on /^perm/
  say asking
  permission touch x
  say after the tool
on /^boom/
  fail 529
on /^midway/
  say partial
  fail overloaded_error
on /^slow/
  think 50ms
  say slow $0
on *
  say answer to $0
  marker
`

func start(t *testing.T, script string) (*Server, string) {
	t.Helper()
	dir := t.TempDir()
	sp := filepath.Join(dir, "script")
	require.NoError(t, os.WriteFile(sp, []byte(script), 0o644))
	logPath := filepath.Join(dir, "model.log")
	s, err := Start(Options{ScriptPath: sp, LogPath: logPath})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s, logPath
}

func post(t *testing.T, url string, body any) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	resp, err := http.Post(url, "application/json", strings.NewReader(string(b)))
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// events reads an SSE stream into its data payloads.
func events(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(data), &m), data)
		out = append(out, m)
	}
	return out
}

func claudeBody(blocks ...any) map[string]any {
	return map[string]any{"model": "m", "stream": true, "messages": []any{
		map[string]any{"role": "user", "content": blocks},
		map[string]any{"role": "system", "content": "agents list"},
	}}
}

func text(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func claudeText(evs []map[string]any) (text, stop string) {
	for _, e := range evs {
		switch e["type"] {
		case "content_block_delta":
			d := e["delta"].(map[string]any)
			if d["type"] == "text_delta" {
				text += d["text"].(string)
			}
		case "message_delta":
			stop = e["delta"].(map[string]any)["stop_reason"].(string)
		}
	}
	return text, stop
}

func readLog(t *testing.T, path string) []mocklog.Entry {
	t.Helper()
	e, err := mocklog.Read(path)
	require.NoError(t, err)
	return e
}

func TestAnthropicAnswerAndLog(t *testing.T) {
	s, logPath := start(t, testScript)
	nonce := "abc123def456"
	prompt := "hello\tworld $(x) `y`\nPrint PARTY_DONE_ immediately followed by " + nonce
	resp := post(t, s.URL()+"/v1/messages?beta=true", claudeBody(text("<system-reminder>ctx</system-reminder>"), text(prompt)))
	require.Equal(t, 200, resp.StatusCode)
	got, stop := claudeText(events(t, resp.Body))
	assert.Equal(t, "answer to "+prompt+"\nPARTY_DONE_"+nonce, got)
	assert.Equal(t, "end_turn", stop)

	entries := readLog(t, logPath)
	require.Len(t, entries, 1)
	assert.Equal(t, mocklog.Entry{Agent: "claude", Seq: 1, Mode: "submit", Text: prompt}, withoutTime(entries[0]))
}

func withoutTime(e mocklog.Entry) mocklog.Entry { e.Time = time.Time{}; return e }

func TestAnthropicQueuedTextsAreOneRequest(t *testing.T) {
	s, logPath := start(t, testScript)
	resp := post(t, s.URL()+"/v1/messages", claudeBody(text("first\n"), text("second")))
	require.Equal(t, 200, resp.StatusCode)
	_, _ = io.Copy(io.Discard, resp.Body)
	entries := readLog(t, logPath)
	require.Len(t, entries, 2)
	assert.Equal(t, "first\n", entries[0].Text)
	assert.Equal(t, "second", entries[1].Text)
	assert.Equal(t, entries[0].Seq, entries[1].Seq, "one request")
}

func TestAnthropicSideRequest(t *testing.T) {
	s, logPath := start(t, testScript)
	body := claudeBody(text("<session>\nboom\n</session>"))
	body["output_config"] = map[string]any{"format": map[string]any{"type": "json_schema"}}
	resp := post(t, s.URL()+"/v1/messages", body)
	require.Equal(t, 200, resp.StatusCode, "a side request is never matched against the script")
	got, _ := claudeText(events(t, resp.Body))
	assert.JSONEq(t, `{"title": "Fake model session"}`, got)
	assert.Equal(t, "side", readLog(t, logPath)[0].Mode)
}

func TestAnthropicPermissionThenResult(t *testing.T) {
	s, logPath := start(t, testScript)
	resp := post(t, s.URL()+"/v1/messages", claudeBody(text("perm please")))
	evs := events(t, resp.Body)
	got, stop := claudeText(evs)
	assert.Equal(t, "asking", got)
	assert.Equal(t, "tool_use", stop)
	var id, input string
	for _, e := range evs {
		if cb, ok := e["content_block"].(map[string]any); ok && cb["type"] == "tool_use" {
			id = cb["id"].(string)
			assert.Equal(t, "Bash", cb["name"])
		}
		if d, ok := e["delta"].(map[string]any); ok && d["type"] == "input_json_delta" {
			input = d["partial_json"].(string)
		}
	}
	require.NotEmpty(t, id)
	assert.Contains(t, input, `"command":"touch x"`)

	resp = post(t, s.URL()+"/v1/messages", claudeBody(map[string]any{"type": "tool_result", "tool_use_id": id, "content": "ok"}))
	got, stop = claudeText(events(t, resp.Body))
	assert.Equal(t, "after the tool", got)
	assert.Equal(t, "end_turn", stop)
	assert.Equal(t, "continue", readLog(t, logPath)[1].Mode)
}

func TestAnthropicFailures(t *testing.T) {
	s, _ := start(t, testScript)
	resp := post(t, s.URL()+"/v1/messages", claudeBody(text("boom")))
	assert.Equal(t, 529, resp.StatusCode)
	var e struct {
		Error struct{ Type string } `json:"error"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
	assert.Equal(t, "overloaded_error", e.Error.Type)

	resp = post(t, s.URL()+"/v1/messages", claudeBody(text("midway")))
	require.Equal(t, 200, resp.StatusCode, "a mid-stream failure starts as a success")
	evs := events(t, resp.Body)
	assert.Equal(t, "error", evs[len(evs)-1]["type"])
}

func TestAnthropicNonStreaming(t *testing.T) {
	s, _ := start(t, testScript)
	body := claudeBody(text("plain"))
	body["stream"] = false
	resp := post(t, s.URL()+"/v1/messages", body)
	var m struct {
		Content []struct{ Type, Text string }
		Stop    string `json:"stop_reason"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
	require.Len(t, m.Content, 1)
	assert.Equal(t, "answer to plain", m.Content[0].Text)
	assert.Equal(t, "end_turn", m.Stop)
}

func codexBody(items ...any) map[string]any {
	input := []any{map[string]any{"type": "message", "role": "user", "content": []any{
		map[string]any{"type": "input_text", "text": "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>"}}}}
	return map[string]any{"model": "x", "stream": true, "instructions": "You are Codex", "input": append(input, items...)}
}

func userMsg(s string) map[string]any {
	return map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": s}}}
}

func TestOpenAIAnswerToolAndResult(t *testing.T) {
	s, logPath := start(t, testScript)
	resp := post(t, s.URL()+"/v1/responses", codexBody(userMsg("slow one")))
	evs := events(t, resp.Body)
	var got string
	for _, e := range evs {
		if e["type"] == "response.output_text.delta" {
			got += e["delta"].(string)
		}
	}
	assert.Equal(t, "slow slow one", got)
	assert.Equal(t, "response.created", evs[0]["type"])
	assert.Equal(t, "response.completed", evs[len(evs)-1]["type"])

	resp = post(t, s.URL()+"/v1/responses", codexBody(userMsg("slow one"),
		map[string]any{"type": "message", "role": "assistant", "content": []any{}}, userMsg("perm now")))
	var call map[string]any
	for _, e := range events(t, resp.Body) {
		if it, ok := e["item"].(map[string]any); ok && e["type"] == "response.output_item.done" && it["type"] == "function_call" {
			call = it
		}
	}
	require.NotNil(t, call)
	assert.Equal(t, "exec_command", call["name"])
	assert.Contains(t, call["arguments"], `"sandbox_permissions":"require_escalated"`)

	resp = post(t, s.URL()+"/v1/responses", codexBody(userMsg("perm now"), call,
		map[string]any{"type": "function_call_output", "call_id": call["call_id"], "output": "done"}))
	got = ""
	for _, e := range events(t, resp.Body) {
		if e["type"] == "response.output_text.delta" {
			got += e["delta"].(string)
		}
	}
	assert.Equal(t, "after the tool", got)

	entries := readLog(t, logPath)
	require.Len(t, entries, 3)
	assert.Equal(t, []string{"slow one", "perm now", ""}, []string{entries[0].Text, entries[1].Text, entries[2].Text},
		"only the texts after the model's last output are new; codex's own context is not the user's")
	assert.Equal(t, "continue", entries[2].Mode)
}

func TestOpenAITitleIsSide(t *testing.T) {
	s, logPath := start(t, testScript)
	resp := post(t, s.URL()+"/v1/responses", codexBody(userMsg("Generate a concise, single-line task title for: boom")))
	assert.Equal(t, 200, resp.StatusCode)
	_, _ = io.Copy(io.Discard, resp.Body)
	assert.Equal(t, "side", readLog(t, logPath)[0].Mode)
}

func TestOpenAIStreamFailure(t *testing.T) {
	s, _ := start(t, testScript)
	resp := post(t, s.URL()+"/v1/responses", codexBody(userMsg("midway")))
	evs := events(t, resp.Body)
	assert.Equal(t, "response.failed", evs[len(evs)-1]["type"])
}

func geminiBody(texts ...string) map[string]any {
	parts := []any{map[string]any{"text": "<session_context>\nThis is the Gemini CLI.</session_context>"}}
	for _, s := range texts {
		parts = append(parts, map[string]any{"text": s})
	}
	return map[string]any{"contents": []any{map[string]any{"role": "user", "parts": parts}}}
}

func geminiText(evs []map[string]any) (text string, calls []map[string]any) {
	for _, e := range evs {
		for _, c := range e["candidates"].([]any) {
			for _, p := range c.(map[string]any)["content"].(map[string]any)["parts"].([]any) {
				pm := p.(map[string]any)
				if s, ok := pm["text"].(string); ok {
					text += s
				}
				if fc, ok := pm["functionCall"].(map[string]any); ok {
					calls = append(calls, fc)
				}
			}
		}
	}
	return text, calls
}

func TestGeminiStreamToolAndClassifier(t *testing.T) {
	s, logPath := start(t, testScript)
	url := s.URL() + "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
	resp := post(t, url, geminiBody("plain  words"))
	got, _ := geminiText(events(t, resp.Body))
	assert.Equal(t, "answer to plain  words", got)

	resp = post(t, url, geminiBody("perm it"))
	got, calls := geminiText(events(t, resp.Body))
	assert.Equal(t, "asking", got)
	require.Len(t, calls, 1)
	assert.Equal(t, "run_shell_command", calls[0]["name"])

	resp = post(t, url, map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{
		map[string]any{"functionResponse": map[string]any{"id": calls[0]["id"], "name": "run_shell_command", "response": map[string]any{}}}}}}})
	got, _ = geminiText(events(t, resp.Body))
	assert.Equal(t, "after the tool", got)

	body := geminiBody("route me")
	body["generationConfig"] = map[string]any{"responseMimeType": "application/json", "responseJsonSchema": map[string]any{
		"type": "OBJECT", "properties": map[string]any{"complexity_score": map[string]any{"type": "INTEGER"},
			"next_speaker": map[string]any{"type": "STRING", "enum": []any{"model", "user"}}}}}
	resp = post(t, s.URL()+"/v1beta/models/gemini-2.5-flash-lite:generateContent", body)
	var m map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
	got, _ = geminiText([]map[string]any{m})
	assert.JSONEq(t, `{"complexity_score": 1, "next_speaker": "user"}`, got)

	entries := readLog(t, logPath)
	require.Len(t, entries, 4)
	assert.Equal(t, []string{"submit", "submit", "continue", "side"}, []string{entries[0].Mode, entries[1].Mode, entries[2].Mode, entries[3].Mode})
	assert.Equal(t, "plain  words", entries[0].Text, "gemini's session context is not the user's text")
}

func TestScriptReloadAndHang(t *testing.T) {
	s, _ := start(t, testScript)
	require.NoError(t, s.SetScript("on *\n  hang\n"))
	client := &http.Client{Timeout: 300 * time.Millisecond}
	b, _ := json.Marshal(claudeBody(text("anything")))
	resp, err := client.Post(s.URL()+"/v1/messages", "application/json", strings.NewReader(string(b)))
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	assert.Error(t, err, "a hanging answer never ends")
}

func TestScriptFileChanges(t *testing.T) {
	s, _ := start(t, testScript)
	require.NoError(t, os.WriteFile(s.opt.ScriptPath, []byte("on *\n  say changed answer\n"), 0o644))
	// The file's size changed, so it is read again.
	resp := post(t, s.URL()+"/v1/messages", claudeBody(text("x")))
	got, _ := claudeText(events(t, resp.Body))
	assert.Equal(t, "changed answer", got)
}

func TestEndpoints(t *testing.T) {
	s, _ := start(t, "")
	resp, err := http.Head(s.URL() + "/")
	require.NoError(t, err)
	assert.Equal(t, 200, resp.StatusCode)
	resp, err = http.Get(s.URL() + "/v1beta/models")
	require.NoError(t, err)
	defer resp.Body.Close()
	var m struct{ Models []any }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
	assert.NotEmpty(t, m.Models)
	resp = post(t, s.URL()+"/v1beta/models/x:countTokens", map[string]any{})
	assert.Equal(t, 200, resp.StatusCode)
	resp = post(t, s.URL()+"/nope", map[string]any{})
	assert.Equal(t, 404, resp.StatusCode)
}

func TestDeclinedToolThenNewText(t *testing.T) {
	s, _ := start(t, testScript)
	resp := post(t, s.URL()+"/v1/messages", claudeBody(text("perm please")))
	var id string
	for _, e := range events(t, resp.Body) {
		if cb, ok := e["content_block"].(map[string]any); ok && cb["type"] == "tool_use" {
			id = cb["id"].(string)
		}
	}
	require.NotEmpty(t, id)
	resp = post(t, s.URL()+"/v1/messages", claudeBody(
		map[string]any{"type": "tool_result", "tool_use_id": id, "content": "declined", "is_error": true}, text("plain")))
	got, _ := claudeText(events(t, resp.Body))
	assert.Equal(t, "answer to plain", got, "new text after a declined tool is a new turn")
}

// TestUnansweredTurnIsHistory: Claude keeps a failed turn's message and
// merges its next text into it (each but the last text ending in a
// newline), and a resumed session sends it again before the resume's
// prompt. The rules match the new text only; the failed text is not
// logged again. The same failed request sent again fails again.
func TestUnansweredTurnIsHistory(t *testing.T) {
	s, logPath := start(t, testScript)
	resp := post(t, s.URL()+"/v1/messages", claudeBody(text("boom 1")))
	require.Equal(t, 529, resp.StatusCode)
	resp = post(t, s.URL()+"/v1/messages", claudeBody(text("boom 1")))
	require.Equal(t, 529, resp.StatusCode, "the agent sending the failed turn again: the same turn")

	resp = post(t, s.URL()+"/v1/messages", claudeBody(text("boom 1\n"), text("next")))
	require.Equal(t, 200, resp.StatusCode, "the failed text in front of the new one is history")
	got, _ := claudeText(events(t, resp.Body))
	assert.Equal(t, "answer to next", got)

	// A resumed session that failed once more keeps both in front.
	resp = post(t, s.URL()+"/v1/messages", claudeBody(text("boom 1\n"), text("boom 2")))
	require.Equal(t, 529, resp.StatusCode)
	resp = post(t, s.URL()+"/v1/messages", claudeBody(text("boom 1\n"), text("boom 2\n"), text("boom 2")))
	require.Equal(t, 529, resp.StatusCode, "the last text is new, even when it failed before")
	resp = post(t, s.URL()+"/v1/messages", claudeBody(text("boom 1\n"), text("boom 2\n"), text("slow 3")))
	require.Equal(t, 200, resp.StatusCode)
	got, _ = claudeText(events(t, resp.Body))
	assert.Equal(t, "slow slow 3", got, "the prompt is the new text alone")

	var logged []string
	for _, e := range readLog(t, logPath) {
		logged = append(logged, e.Text)
	}
	assert.Equal(t, []string{"boom 1", "boom 1", "next", "boom 2", "boom 2", "slow 3"}, logged)
}
