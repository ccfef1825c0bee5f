package fakemodel

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/mockagents/script"
)

// usageScript sets the usage of the first answer of a tool turn (after
// its say: a usage step counts for the whole answer it is in), and
// another for the answer after the tool.
const usageScript = `on /^perm/
  say asking
  usage input=1200 output=340 cache_read=100 cache_write=50 reasoning=20 model=big-model
  permission touch x
  usage input=7 output=3
  say after the tool
on *
  say plain answer
`

func startUsage(t *testing.T) (*Server, string) {
	t.Helper()
	dir := t.TempDir()
	sp := filepath.Join(dir, "script")
	require.NoError(t, os.WriteFile(sp, []byte(usageScript), 0o644))
	usagePath := filepath.Join(dir, "usage.log")
	s, err := Start(Options{ScriptPath: sp, LogPath: filepath.Join(dir, "model.log"), UsageLogPath: usagePath})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s, usagePath
}

// usageLog reads the usage log, its times checked and cleared.
func usageLog(t *testing.T, path string) []UsageEntry {
	t.Helper()
	entries, err := ReadUsage(path)
	require.NoError(t, err)
	for i := range entries {
		assert.WithinDuration(t, time.Now(), entries[i].Time, time.Minute)
		entries[i].Time = time.Time{}
	}
	return entries
}

// jsonOf is v as generic JSON, for comparing a wire object exactly.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestAnthropicUsage(t *testing.T) {
	s, usagePath := startUsage(t)
	resp := post(t, s.URL()+"/v1/messages", claudeBody(text("perm please")))
	evs := events(t, resp.Body)
	var id string
	for _, e := range evs {
		switch e["type"] {
		case "message_start":
			msg := e["message"].(map[string]any)
			assert.Equal(t, "big-model", msg["model"])
			assert.JSONEq(t, `{"input_tokens":1200,"cache_creation_input_tokens":50,"cache_read_input_tokens":100,"output_tokens":1}`,
				jsonOf(t, msg["usage"]), "the start has the input's counts, the output's come with the end")
		case "message_delta":
			assert.JSONEq(t, `{"input_tokens":1200,"cache_creation_input_tokens":50,"cache_read_input_tokens":100,"output_tokens":340}`,
				jsonOf(t, e["usage"]))
		case "content_block_start":
			if cb := e["content_block"].(map[string]any); cb["type"] == "tool_use" {
				id = cb["id"].(string)
			}
		}
	}
	require.NotEmpty(t, id)

	resp = post(t, s.URL()+"/v1/messages", claudeBody(map[string]any{"type": "tool_result", "tool_use_id": id, "content": "ok"}))
	for _, e := range events(t, resp.Body) {
		if e["type"] == "message_delta" {
			assert.JSONEq(t, `{"input_tokens":7,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":3}`,
				jsonOf(t, e["usage"]), "the answer after the tool has its own usage")
		}
	}

	body := claudeBody(text("<session>\nperm\n</session>"))
	body["output_config"] = map[string]any{"format": map[string]any{"type": "json_schema"}}
	body["stream"] = false
	resp = post(t, s.URL()+"/v1/messages", body)
	var m struct {
		Usage json.RawMessage `json:"usage"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
	assert.JSONEq(t, `{"input_tokens":12,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":7}`, string(m.Usage),
		"a side request gets the default usage: its answer is 30 bytes")

	// The Messages API has no reasoning count: the log says what the
	// wire carried.
	assert.Equal(t, []UsageEntry{
		{Agent: "claude", Seq: 1, Mode: "submit", Model: "big-model", Usage: script.Tokens{Input: 1200, Output: 340, CacheRead: 100, CacheWrite: 50}},
		{Agent: "claude", Seq: 2, Mode: "continue", Model: "m", Usage: script.Tokens{Input: 7, Output: 3}},
		{Agent: "claude", Seq: 3, Mode: "side", Model: "m", Usage: script.Tokens{Input: 12, Output: 7}},
	}, usageLog(t, usagePath))
}

func TestOpenAIUsage(t *testing.T) {
	s, usagePath := startUsage(t)
	resp := post(t, s.URL()+"/v1/responses", codexBody(userMsg("perm now")))
	var completed map[string]any
	for _, e := range events(t, resp.Body) {
		if e["type"] == "response.completed" {
			completed = e["response"].(map[string]any)
		}
	}
	require.NotNil(t, completed)
	assert.Equal(t, "big-model", completed["model"])
	assert.JSONEq(t, `{"input_tokens":1200,"input_tokens_details":{"cached_tokens":100,"cache_write_tokens":50},
		"output_tokens":340,"output_tokens_details":{"reasoning_tokens":20},"total_tokens":1540}`, jsonOf(t, completed["usage"]))

	resp = post(t, s.URL()+"/v1/responses", codexBody(userMsg("hello")))
	for _, e := range events(t, resp.Body) {
		if e["type"] == "response.completed" {
			r := e["response"].(map[string]any)
			assert.Equal(t, "x", r["model"], "the model asked for, when no usage step names one")
			assert.JSONEq(t, `{"input_tokens":12,"input_tokens_details":{"cached_tokens":0,"cache_write_tokens":0},
				"output_tokens":3,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":15}`, jsonOf(t, r["usage"]),
				"the default: 12 in, a quarter of the answer's 12 bytes out")
		}
	}
	resp = post(t, s.URL()+"/v1/responses", codexBody(userMsg("Generate a concise, single-line task title for: perm")))
	_ = events(t, resp.Body)

	entries := usageLog(t, usagePath)
	assert.Equal(t, []UsageEntry{
		{Agent: "codex", Seq: 1, Mode: "submit", Model: "big-model", Usage: script.Tokens{Input: 1200, Output: 340, CacheRead: 100, CacheWrite: 50, Reasoning: 20}},
		{Agent: "codex", Seq: 2, Mode: "submit", Model: "x", Usage: script.Tokens{Input: 12, Output: 3}},
		{Agent: "codex", Seq: 3, Mode: "side", Model: "x", Usage: script.Tokens{Input: 12, Output: 7}},
	}, entries)
	assert.Equal(t, script.Tokens{Input: 1212, Output: 343, CacheRead: 100, CacheWrite: 50, Reasoning: 20},
		ConversationUsage(entries, "codex"), "the title's answer is not the conversation's")
	assert.Equal(t, script.Tokens{}, ConversationUsage(entries, "claude"))
}

func TestGeminiUsage(t *testing.T) {
	s, usagePath := startUsage(t)
	url := s.URL() + "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
	resp := post(t, url, geminiBody("perm it"))
	evs := events(t, resp.Body)
	require.NotEmpty(t, evs)
	last := evs[len(evs)-1]
	assert.Equal(t, "big-model", last["modelVersion"])
	assert.JSONEq(t, `{"promptTokenCount":1200,"cachedContentTokenCount":100,"candidatesTokenCount":340,
		"thoughtsTokenCount":20,"totalTokenCount":1560}`, jsonOf(t, last["usageMetadata"]),
		"the total counts the thoughts; the API has no cache-write count")

	body := geminiBody("route me")
	body["generationConfig"] = map[string]any{"responseMimeType": "application/json", "responseJsonSchema": map[string]any{"type": "STRING"}}
	resp = post(t, s.URL()+"/v1beta/models/gemini-2.5-flash-lite:generateContent", body)
	var m map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
	assert.JSONEq(t, `{"promptTokenCount":12,"candidatesTokenCount":2,"totalTokenCount":14}`, jsonOf(t, m["usageMetadata"]))

	assert.Equal(t, []UsageEntry{
		{Agent: "gemini", Seq: 1, Mode: "submit", Model: "big-model", Usage: script.Tokens{Input: 1200, Output: 340, CacheRead: 100, Reasoning: 20}},
		{Agent: "gemini", Seq: 2, Mode: "side", Model: "gemini-2.5-flash-lite", Usage: script.Tokens{Input: 12, Output: 2}},
	}, usageLog(t, usagePath))
}

// An answer that failed, or never ended, carried no usage: the log has
// none of it.
func TestNoUsageWithoutAnEnd(t *testing.T) {
	s, usagePath := startUsage(t)
	require.NoError(t, s.SetScript("on /^boom/\n  fail 500\non /^midway/\n  say partial\n  usage input=5\n  fail overloaded_error\n"))
	resp := post(t, s.URL()+"/v1/messages", claudeBody(text("boom")))
	require.Equal(t, 500, resp.StatusCode)
	resp = post(t, s.URL()+"/v1/messages", claudeBody(text("midway")))
	_ = events(t, resp.Body)
	_, err := ReadUsage(usagePath)
	assert.ErrorIs(t, err, os.ErrNotExist)
}
