package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/partyhq/party/mockagents/script"
)

// anthropic is the Messages API as Claude Code uses it.
type anthropic struct{}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

func (anthropic) decode(body []byte, r *http.Request) (request, error) {
	var m struct {
		System   json.RawMessage `json:"system"`
		Model    string          `json:"model"`
		Stream   bool            `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		OutputConfig struct {
			Format json.RawMessage `json:"format"`
		} `json:"output_config"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return request{}, fmt.Errorf("messages request: %w", err)
	}
	req := request{agent: "claude", stream: m.Stream, model: m.Model, cwd: claudeCwd(m.System)}
	if len(m.Messages) == 0 {
		return req, fmt.Errorf("messages request without messages")
	}
	// The conversation ends with the user's message, possibly followed by
	// system messages Claude Code adds (agent lists, reminders, and what
	// the user typed while a tool ran: claudeMidTurn).
	last := m.Messages[len(m.Messages)-1]
	for i := len(m.Messages) - 1; i >= 0 && last.Role == "system"; i-- {
		last = m.Messages[i]
		var note string
		if last.Role == "system" && json.Unmarshal(last.Content, &note) == nil {
			req.queued = append(claudeMidTurn(note), req.queued...)
		}
	}
	if last.Role != "user" {
		return req, nil
	}
	var blocks []anthropicBlock
	var s string
	if json.Unmarshal(last.Content, &s) == nil {
		blocks = []anthropicBlock{{Type: "text", Text: s}}
	} else if err := json.Unmarshal(last.Content, &blocks); err != nil {
		return req, fmt.Errorf("message content: %w", err)
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			// Claude Code's own notes are not the user's text.
			if strings.HasPrefix(b.Text, "<system-reminder>") || strings.HasPrefix(b.Text, "[Request interrupted by user") {
				continue
			}
			req.texts = append(req.texts, b.Text)
		case "tool_result":
			req.toolID, req.toolResult = b.ToolUseID, toolResultText(b.Content)
		}
	}
	// Side requests (the session title) ask for JSON output; turns never do.
	if f := m.OutputConfig.Format; len(f) > 0 && string(f) != "null" {
		req.side = "structured output"
	}
	return req, nil
}

func (anthropic) sideAnswer(w http.ResponseWriter, req request, body []byte) answer {
	text := `{"title": "Fake model session"}`
	a := anthropic{}.open(w, req, script.Usage{})
	_ = a.text(text)
	_ = a.end()
	return a
}

func (anthropic) errorStatus(w http.ResponseWriter, status int, msg string) {
	kind := "api_error"
	switch {
	case status == 400:
		kind = "invalid_request_error"
	case status == 401:
		kind = "authentication_error"
	case status == 429:
		kind = "rate_limit_error"
	case status == 529:
		kind = "overloaded_error"
	}
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": kind, "message": msg}})
}

func (anthropic) open(w http.ResponseWriter, req request, u script.Usage) answer {
	a := &anthropicAnswer{w: w, stream: req.stream, model: req.model, id: "msg_fake" + randomHex(6), u: u}
	if u.Model != "" {
		a.model = u.Model
	}
	if a.stream {
		// As the real API: the input counts at the start, the output's
		// with the end (message_delta).
		start := a.wireUsage()
		start["output_tokens"] = 1
		sseHeaders(w)
		_ = sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
			"id": a.id, "type": "message", "role": "assistant", "model": a.model, "content": []any{},
			"stop_reason": nil, "stop_sequence": nil, "usage": start,
		}})
	}
	return a
}

type anthropicAnswer struct {
	w       http.ResponseWriter
	stream  bool
	model   string
	u       script.Usage
	id      string
	index   int
	inText  bool
	content []map[string]any
	out     strings.Builder
}

func (a *anthropicAnswer) text(s string) error {
	a.out.WriteString(s)
	if !a.stream {
		return nil
	}
	if !a.inText {
		a.inText = true
		if err := sse(a.w, "content_block_start", map[string]any{"type": "content_block_start", "index": a.index,
			"content_block": map[string]any{"type": "text", "text": ""}}); err != nil {
			return err
		}
	}
	return sse(a.w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": a.index,
		"delta": map[string]any{"type": "text_delta", "text": s}})
}

func (a *anthropicAnswer) closeText() {
	if a.out.Len() > 0 {
		a.content = append(a.content, map[string]any{"type": "text", "text": a.out.String()})
	}
	if a.stream && a.inText {
		_ = sse(a.w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": a.index})
		a.index++
	}
	a.inText = false
}

func (a *anthropicAnswer) tool(id, cmd string) error {
	return a.toolUse(id, "Bash", map[string]any{"command": cmd, "description": "Run " + cmd})
}

func (a *anthropicAnswer) call(id, name string, input map[string]any) error {
	return a.toolUse(id, name, input)
}

// toolResultText is the text of a tool_result's content: a string, or
// the texts of its blocks, joined.
func toolResultText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var blocks []anthropicBlock
	if json.Unmarshal(content, &blocks) != nil {
		return string(content)
	}
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// write asks for Claude's Write tool: path (absolute) gets text.
func (a *anthropicAnswer) write(id, path, text string) error {
	return a.toolUse(id, "Write", map[string]any{"file_path": path, "content": text})
}

func (a *anthropicAnswer) toolUse(id, name string, input map[string]any) error {
	a.closeText()
	a.content = append(a.content, map[string]any{"type": "tool_use", "id": "toolu_" + id, "name": name, "input": input})
	if a.stream {
		in, _ := json.Marshal(input)
		_ = sse(a.w, "content_block_start", map[string]any{"type": "content_block_start", "index": a.index,
			"content_block": map[string]any{"type": "tool_use", "id": "toolu_" + id, "name": name, "input": map[string]any{}}})
		_ = sse(a.w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": a.index,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
		_ = sse(a.w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": a.index})
		a.index++
	}
	return a.finish("tool_use")
}

func (a *anthropicAnswer) end() error {
	a.closeText()
	return a.finish("end_turn")
}

// usage: the Messages API has no count of reasoning (thinking is output).
func (a *anthropicAnswer) usage() (script.Tokens, string) {
	t := a.u.Tokens(a.out.String())
	t.Reasoning = 0
	return t, a.model
}

// wireUsage is the answer's usage in the Messages API's fields.
func (a *anthropicAnswer) wireUsage() map[string]any {
	t, _ := a.usage()
	return map[string]any{"input_tokens": t.Input, "cache_creation_input_tokens": t.CacheWrite,
		"cache_read_input_tokens": t.CacheRead, "output_tokens": t.Output}
}

func (a *anthropicAnswer) finish(reason string) error {
	usage := a.wireUsage()
	if !a.stream {
		writeJSON(a.w, http.StatusOK, map[string]any{"id": a.id, "type": "message", "role": "assistant", "model": a.model,
			"content": a.content, "stop_reason": reason, "stop_sequence": nil, "usage": usage})
		return nil
	}
	_ = sse(a.w, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": reason, "stop_sequence": nil}, "usage": usage})
	return sse(a.w, "message_stop", map[string]any{"type": "message_stop"})
}

func (a *anthropicAnswer) fail(kind string) error {
	if !a.stream {
		anthropic{}.errorStatus(a.w, 500, "fakemodel: scripted failure "+kind)
		return nil
	}
	if !strings.HasSuffix(kind, "_error") {
		kind = "api_error"
	}
	return sse(a.w, "error", map[string]any{"type": "error", "error": map[string]any{"type": kind, "message": "fakemodel: scripted failure"}})
}

// claudeCwdLine is how Claude Code's system prompt names its working
// directory.
var claudeCwdLine = regexp.MustCompile(`(?m)^[\t -]*(?:Primary working directory|Working directory): (/[^\n]*)$`)

// claudeCwd is the working directory the system prompt (a string or text
// blocks) names, "" when it names none.
func claudeCwd(system json.RawMessage) string {
	var text string
	if json.Unmarshal(system, &text) != nil {
		var blocks []anthropicBlock
		_ = json.Unmarshal(system, &blocks)
		for _, b := range blocks {
			text += b.Text + "\n"
		}
	}
	if m := claudeCwdLine.FindStringSubmatch(text); m != nil {
		return strings.TrimSpace(m[1])
	}
	return ""
}

// The note Claude Code (2.1.197) sends the model, as a trailing role
// "system" message of the request that carries a tool's result, for a
// message the user typed while the tool ran; the text is not submitted
// again after the turn. Several such messages are one system message of
// notes joined by a blank line.
const (
	claudeMidTurnHead = "The user sent a new message while you were working:\n"
	claudeMidTurnTail = "\n\nIMPORTANT: After completing your current task, you MUST address the user's message above. Do not ignore it."
)

// claudeMidTurn returns the users' texts of such notes, in order; none
// when note is not made of them.
func claudeMidTurn(note string) []string {
	var texts []string
	for rest := note; rest != ""; {
		body, ok := strings.CutPrefix(rest, claudeMidTurnHead)
		if !ok {
			return nil
		}
		text, after, ok := strings.Cut(body, claudeMidTurnTail)
		if !ok {
			return nil
		}
		texts = append(texts, text)
		rest = strings.TrimPrefix(after, "\n\n")
	}
	return texts
}
