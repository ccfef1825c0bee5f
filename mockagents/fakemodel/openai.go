package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/partyhq/party/mockagents/script"
)

// openai is the Responses API as Codex CLI uses it.
type openai struct{}

// codexContext are the user messages Codex adds itself: they are not
// what the user typed.
var codexContext = []string{"<environment_context>", "<user_instructions>", "# AGENTS.md", "<permissions", "<user_shell_command>", "<turn_aborted>"}

func (openai) decode(body []byte, r *http.Request) (request, error) {
	var m struct {
		Model        string `json:"model"`
		Stream       bool   `json:"stream"`
		Instructions string `json:"instructions"`
		Input        []struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			CallID  string          `json:"call_id"`
			Output  json.RawMessage `json:"output"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"input"`
		Text struct {
			Format json.RawMessage `json:"format"`
		} `json:"text"`
		Tools []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return request{}, fmt.Errorf("responses request: %w", err)
	}
	req := request{agent: "codex", stream: m.Stream, model: m.Model}
	for _, t := range m.Tools {
		if t.Type == "namespace" {
			req.namespaces = append(req.namespaces, t.Name)
		}
	}
	// The new input is the last user message, when nothing of the model's
	// follows it. (An interrupted turn's message stays in the history
	// before it; a steered turn's first message was sent before.)
	for i := len(m.Input) - 1; i >= 0; i-- {
		it := m.Input[i]
		if it.Type == "function_call_output" || it.Type == "custom_tool_call_output" {
			req.toolID, req.toolResult = it.CallID, openaiOutput(it.Output)
		}
		if it.Type == "message" && it.Role == "user" {
			var texts []string
			for _, c := range it.Content {
				if c.Type == "input_text" {
					texts = append(texts, c.Text)
				}
			}
			if isCodexContext(strings.Join(texts, "")) {
				continue
			}
			req.texts = texts
		}
		break
	}
	if len(m.Text.Format) > 0 && string(m.Text.Format) != "null" || strings.Contains(m.Instructions, "task title") ||
		len(req.texts) > 0 && strings.Contains(req.texts[0], "Generate a concise") {
		req.side = "title"
	}
	return req, nil
}

func isCodexContext(text string) bool {
	t := strings.TrimSpace(text)
	for _, p := range codexContext {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

func (openai) sideAnswer(w http.ResponseWriter, req request, body []byte) answer {
	req.stream = true
	a := openai{}.open(w, req, script.Usage{})
	_ = a.text(`{"title": "Fake model task"}`)
	_ = a.end()
	return a
}

func (openai) errorStatus(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "code": nil}})
}

func (openai) open(w http.ResponseWriter, req request, u script.Usage) answer {
	a := &openaiAnswer{w: w, model: req.model, u: u, id: "resp_" + randomHex(8), msgID: "msg_" + randomHex(8), namespaces: req.namespaces}
	if u.Model != "" {
		a.model = u.Model
	}
	sseHeaders(w)
	_ = a.event("response.created", map[string]any{"response": a.response("in_progress", []any{})})
	return a
}

type openaiAnswer struct {
	w      http.ResponseWriter
	model  string
	u      script.Usage
	id     string
	msgID  string
	seq    int
	inText bool
	out    strings.Builder
	items  []any
	// namespaces are the request's tool namespaces (Codex offers an MCP
	// server's tools as the namespace mcp__SERVER).
	namespaces []string
}

func (a *openaiAnswer) event(kind string, fields map[string]any) error {
	fields["type"] = kind
	fields["sequence_number"] = a.seq
	a.seq++
	return sse(a.w, kind, fields)
}

func (a *openaiAnswer) response(status string, output []any) map[string]any {
	r := map[string]any{"id": a.id, "object": "response", "created_at": time.Now().Unix(), "status": status,
		"model": a.model, "output": output}
	if status == "completed" {
		t, _ := a.usage()
		r["usage"] = map[string]any{"input_tokens": t.Input,
			"input_tokens_details":  map[string]any{"cached_tokens": t.CacheRead, "cache_write_tokens": t.CacheWrite},
			"output_tokens":         t.Output,
			"output_tokens_details": map[string]any{"reasoning_tokens": t.Reasoning},
			"total_tokens":          t.Input + t.Output}
	}
	return r
}

// usage: the Responses API counts the cached input in input_tokens and
// the reasoning in output_tokens, and totals the two.
func (a *openaiAnswer) usage() (script.Tokens, string) {
	return a.u.Tokens(a.out.String()), a.model
}

func (a *openaiAnswer) text(s string) error {
	if !a.inText {
		a.inText = true
		_ = a.event("response.output_item.added", map[string]any{"output_index": len(a.items),
			"item": map[string]any{"id": a.msgID, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
		_ = a.event("response.content_part.added", map[string]any{"item_id": a.msgID, "output_index": len(a.items), "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
	}
	a.out.WriteString(s)
	return a.event("response.output_text.delta", map[string]any{"item_id": a.msgID, "output_index": len(a.items), "content_index": 0, "delta": s})
}

func (a *openaiAnswer) closeText() {
	if !a.inText {
		return
	}
	a.inText = false
	text := a.out.String()
	part := map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
	_ = a.event("response.output_text.done", map[string]any{"item_id": a.msgID, "output_index": len(a.items), "content_index": 0, "text": text})
	_ = a.event("response.content_part.done", map[string]any{"item_id": a.msgID, "output_index": len(a.items), "content_index": 0, "part": part})
	item := map[string]any{"id": a.msgID, "type": "message", "status": "completed", "role": "assistant", "content": []any{part}}
	_ = a.event("response.output_item.done", map[string]any{"output_index": len(a.items), "item": item})
	a.items = append(a.items, item)
}

func (a *openaiAnswer) tool(id, cmd string) error {
	return a.call(id, "exec_command", map[string]any{"cmd": cmd, "sandbox_permissions": "require_escalated",
		"justification": "The fake model asks to run " + cmd})
}

// openaiOutput is a function_call_output's output as text: a string, or
// the texts of its content items, joined.
func openaiOutput(out json.RawMessage) string {
	var s string
	if json.Unmarshal(out, &s) == nil {
		return s
	}
	var items []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(out, &items) != nil {
		return string(out)
	}
	var texts []string
	for _, it := range items {
		texts = append(texts, it.Text)
	}
	return strings.Join(texts, "\n")
}

func (a *openaiAnswer) call(id, name string, input map[string]any) error {
	a.closeText()
	args, _ := json.Marshal(input)
	item := map[string]any{"id": "fc_" + id, "type": "function_call", "status": "completed", "call_id": "call_" + id,
		"name": name, "arguments": string(args)}
	// A tool of a namespace the request offered (NAMESPACE__TOOL) is
	// called as that namespace's tool, as the Responses API does.
	for _, ns := range a.namespaces {
		if fn, ok := strings.CutPrefix(name, ns+"__"); ok {
			item["namespace"], item["name"] = ns, fn
		}
	}
	_ = a.event("response.output_item.added", map[string]any{"output_index": len(a.items), "item": item})
	_ = a.event("response.output_item.done", map[string]any{"output_index": len(a.items), "item": item})
	a.items = append(a.items, item)
	return a.complete()
}

func (a *openaiAnswer) end() error {
	a.closeText()
	return a.complete()
}

func (a *openaiAnswer) complete() error {
	return a.event("response.completed", map[string]any{"response": a.response("completed", a.items)})
}

func (a *openaiAnswer) fail(kind string) error {
	r := a.response("failed", a.items)
	r["error"] = map[string]any{"code": "server_error", "message": "fakemodel: scripted failure " + kind}
	return a.event("response.failed", map[string]any{"response": r})
}
