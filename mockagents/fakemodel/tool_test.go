package fakemodel

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toolScript calls a named tool with JSON arguments (a group of the rule
// in them), then says something once its result is back.
const toolScript = `on /read (\w+)/
  say calling
  tool mcp__party__inbox_read {"thread": "$1"}
  say got it
`

func TestToolStepAnthropic(t *testing.T) {
	s, logPath := start(t, toolScript)
	evs := events(t, post(t, s.URL()+"/v1/messages", claudeBody(text("read main"))).Body)
	got, stop := claudeText(evs)
	assert.Equal(t, "calling", got)
	assert.Equal(t, "tool_use", stop)
	var id, name, input string
	for _, e := range evs {
		if cb, ok := e["content_block"].(map[string]any); ok && cb["type"] == "tool_use" {
			id, name = cb["id"].(string), cb["name"].(string)
		}
		if d, ok := e["delta"].(map[string]any); ok && d["type"] == "input_json_delta" {
			input = d["partial_json"].(string)
		}
	}
	assert.Equal(t, "mcp__party__inbox_read", name)
	assert.JSONEq(t, `{"thread": "main"}`, input)

	result := map[string]any{"type": "tool_result", "tool_use_id": id, "content": []any{text(`{"messages":[]}`)}}
	got, stop = claudeText(events(t, post(t, s.URL()+"/v1/messages", claudeBody(result)).Body))
	assert.Equal(t, "got it", got)
	assert.Equal(t, "end_turn", stop)

	entries := readLog(t, logPath)
	require.Len(t, entries, 3)
	assert.Equal(t, []string{"submit", "continue", "tool_result"}, []string{entries[0].Mode, entries[1].Mode, entries[2].Mode})
	assert.Equal(t, `mcp__party__inbox_read {"messages":[]}`, entries[2].Text, "the log names the tool and its result")
}

func TestToolStepOpenAI(t *testing.T) {
	s, logPath := start(t, toolScript)
	var call map[string]any
	for _, e := range events(t, post(t, s.URL()+"/v1/responses", codexBody(userMsg("read main"))).Body) {
		if it, ok := e["item"].(map[string]any); ok && e["type"] == "response.output_item.done" && it["type"] == "function_call" {
			call = it
		}
	}
	require.NotNil(t, call)
	assert.Equal(t, "mcp__party__inbox_read", call["name"])
	assert.JSONEq(t, `{"thread": "main"}`, call["arguments"].(string))

	out := []any{map[string]any{"type": "input_text", "text": `{"messages":[]}`}}
	post(t, s.URL()+"/v1/responses", codexBody(userMsg("read main"), call,
		map[string]any{"type": "function_call_output", "call_id": call["call_id"], "output": out}))
	entries := readLog(t, logPath)
	require.Len(t, entries, 3)
	assert.Equal(t, "tool_result", entries[2].Mode)
	assert.Equal(t, `mcp__party__inbox_read {"messages":[]}`, entries[2].Text)

	// Codex offers an MCP server's tools as a namespace: the call names it.
	body := codexBody(userMsg("read again"))
	body["tools"] = []any{map[string]any{"type": "namespace", "name": "mcp__party", "tools": []any{}}}
	call = nil
	for _, e := range events(t, post(t, s.URL()+"/v1/responses", body).Body) {
		if it, ok := e["item"].(map[string]any); ok && e["type"] == "response.output_item.done" && it["type"] == "function_call" {
			call = it
		}
	}
	require.NotNil(t, call)
	assert.Equal(t, []any{"mcp__party", "inbox_read"}, []any{call["namespace"], call["name"]})
}

func TestToolStepGemini(t *testing.T) {
	s, logPath := start(t, toolScript)
	url := s.URL() + "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
	_, calls := geminiText(events(t, post(t, url, geminiBody("read main")).Body))
	require.Len(t, calls, 1)
	assert.Equal(t, "mcp__party__inbox_read", calls[0]["name"])
	assert.Equal(t, map[string]any{"thread": "main"}, calls[0]["args"])

	resp := map[string]any{"output": `{"messages":[]}`}
	post(t, url, map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{
		map[string]any{"functionResponse": map[string]any{"id": calls[0]["id"], "name": calls[0]["name"], "response": resp}}}}}})
	entries := readLog(t, logPath)
	require.Len(t, entries, 3)
	assert.Equal(t, "tool_result", entries[2].Mode)
	want, _ := json.Marshal(resp)
	assert.Equal(t, "mcp__party__inbox_read "+string(want), entries[2].Text)
}
