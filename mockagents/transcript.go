package mockagents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/partyhq/party/mockagents/script"
)

// claudeRefusal is the tool_result Claude Code 2.1.197 writes when the
// permission to run a tool is refused (3. No, or Esc).
const claudeRefusal = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed."

// claudeTranscriptPath is where Claude Code keeps a session's transcript:
// ~/.claude/projects/<cwd with / as ->/<session>.jsonl.
func claudeTranscriptPath(session string) string {
	cwd, _ := os.Getwd()
	return filepath.Join(os.Getenv("HOME"), ".claude", "projects", strings.ReplaceAll(cwd, "/", "-"), session+".jsonl")
}

// transcript writes claude's session transcript as Claude Code 2.1.197
// does, only the records party reads (docs/agents-reference.md §4.1): a user
// entry per prompt (a queued batch shares one promptId), assistant text
// and tool_use entries, the tool's tool_result, the API error message, the
// refused tool_result, "[Request interrupted by user]" (Esc once the answer
// began; an Esc before the first token writes nothing), "[Request
// interrupted by user for tool use]" after a refusal, and turn_duration when
// a turn ends. Like the real one, the file appears with the first prompt.
// Only claude has one (a nil one writes nothing). Used from the run loop
// only.
//
// A model response is written when it ends: one assistant entry per
// content block (each say a text block, then the tool_use that ended it),
// every one with the response's message id, stop_reason and usage, as the
// real one writes them (a reader must count a message id once). A response
// cut short (Esc, an API error) is one "<synthetic>" entry of the text so
// far, with no usage, as the real one writes it.
type transcript struct {
	path, session string
	parent        string   // uuid of the last entry
	turn          string   // promptId of the running turn
	tool          string   // id of the last tool_use: the one running or awaiting permission
	blocks        []string // the text blocks of the response being made
	answered      bool     // the running turn has had answer text or a tool call
	started       time.Time
}

// claudeMessage is an assistant entry's message as Claude Code 2.1.197
// writes it (the fields in its order).
type claudeMessage struct {
	Content      []map[string]any `json:"content"`
	ID           string           `json:"id"`
	Model        string           `json:"model"`
	Role         string           `json:"role"`
	StopReason   string           `json:"stop_reason"`
	StopSequence *string          `json:"stop_sequence"`
	Type         string           `json:"type"`
	Usage        claudeUsage      `json:"usage"`
	StopDetails  any              `json:"stop_details"`
}

// claudeUsage is an assistant entry's usage as Claude Code 2.1.197 writes
// it (the fields in its order).
type claudeUsage struct {
	Input         int64 `json:"input_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
	Output        int64 `json:"output_tokens"`
	ServerToolUse struct {
		WebSearch int64 `json:"web_search_requests"`
		WebFetch  int64 `json:"web_fetch_requests"`
	} `json:"server_tool_use"`
	ServiceTier string `json:"service_tier"`
	CacheSplit  struct {
		OneHour  int64 `json:"ephemeral_1h_input_tokens"`
		FiveMins int64 `json:"ephemeral_5m_input_tokens"`
	} `json:"cache_creation"`
	InferenceGeo string            `json:"inference_geo"`
	Iterations   []json.RawMessage `json:"iterations"`
	Speed        string            `json:"speed"`
}

func newClaudeUsage(t script.Tokens) claudeUsage {
	return claudeUsage{Input: t.Input, CacheCreation: t.CacheWrite, CacheRead: t.CacheRead, Output: t.Output,
		ServiceTier: "standard", Iterations: []json.RawMessage{}, Speed: "standard"}
}

// claudeModel is the mock claude's model, when no usage step names one.
const claudeModel = "claude-mock"

func newTranscript(session string) *transcript {
	return &transcript{path: claudeTranscriptPath(session), session: session}
}

// write appends one entry with the common fields.
func (t *transcript) write(typ string, fields map[string]any) {
	cwd, _ := os.Getwd()
	id := newUUID()
	fields["type"], fields["uuid"], fields["sessionId"], fields["cwd"] = typ, id, t.session, cwd
	fields["parentUuid"], fields["isSidechain"], fields["version"] = nilIfEmpty(t.parent), false, "mock"
	fields["timestamp"] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	t.parent = id
	b, _ := json.Marshal(fields)
	if os.MkdirAll(filepath.Dir(t.path), 0o700) != nil {
		return
	}
	f, err := os.OpenFile(t.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(append(b, '\n'))
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// prompts starts a turn: one user entry per message, sharing turnID.
func (t *transcript) prompts(msgs []string, turnID string) {
	if t == nil {
		return
	}
	t.turn, t.answered, t.tool, t.blocks, t.started = turnID, false, "", nil, time.Now()
	for _, m := range msgs {
		t.write("user", map[string]any{"promptId": turnID, "message": map[string]any{"role": "user", "content": m},
			"permissionMode": "default", "promptSource": "typed"})
	}
}

// text keeps an answer text for its response's entries.
func (t *transcript) text(s string) {
	if t == nil {
		return
	}
	t.answered = true
	t.blocks = append(t.blocks, s)
}

// response writes a model response that ended: an entry per text block,
// then its tool_use, all with its message id and usage.
func (t *transcript) response(r modelResponse) {
	if t == nil {
		return
	}
	id := "msg_mock" + strings.ReplaceAll(newUUID(), "-", "")[:20]
	model, stop := r.model, "end_turn"
	if model == "" {
		model = claudeModel
	}
	if r.tool != nil {
		stop = "tool_use"
	}
	entry := func(block map[string]any) {
		t.write("assistant", map[string]any{"message": claudeMessage{Content: []map[string]any{block}, ID: id, Model: model,
			Role: "assistant", StopReason: stop, Type: "message", Usage: newClaudeUsage(r.tokens)}})
	}
	for _, b := range t.blocks {
		entry(map[string]any{"type": "text", "text": b})
	}
	t.blocks = nil
	if r.tool != nil {
		t.answered = true
		t.tool = "toolu_" + strings.ReplaceAll(newUUID(), "-", "")[:24]
		entry(map[string]any{"type": "tool_use", "id": t.tool, "name": r.tool.name, "input": r.tool.input})
	}
}

// partial writes the text of a response cut short, as the real one does:
// one "<synthetic>" entry with no usage.
func (t *transcript) partial() {
	if t == nil || len(t.blocks) == 0 {
		return
	}
	zero := map[string]any{"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
		"server_tool_use": map[string]int{"web_search_requests": 0, "web_fetch_requests": 0}, "service_tier": nil,
		"cache_creation": map[string]int{"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
		"inference_geo":  nil, "iterations": nil, "speed": nil}
	t.write("assistant", map[string]any{"message": map[string]any{"id": newUUID(), "container": nil, "model": "<synthetic>",
		"role": "assistant", "stop_details": nil, "stop_reason": "stop_sequence", "stop_sequence": "", "type": "message",
		"usage": zero, "content": []map[string]any{{"type": "text", "text": strings.Join(t.blocks, "\n")}}, "context_management": nil},
		"isApiErrorMessage": false})
	t.blocks = nil
}

// toolResult writes the result of the last tool_use.
func (t *transcript) toolResult(content string, isError bool) {
	if t == nil {
		return
	}
	t.write("user", map[string]any{"promptId": t.turn, "message": map[string]any{"role": "user",
		"content": []map[string]any{{"tool_use_id": t.tool, "type": "tool_result", "content": content, "is_error": isError}}}})
}

// apiError writes the message of an API error that ended the turn.
func (t *transcript) apiError(kind, text string, status int) {
	if t == nil {
		return
	}
	t.partial()
	t.write("assistant", map[string]any{"message": map[string]any{"role": "assistant", "model": "<synthetic>",
		"content": []map[string]any{{"type": "text", "text": text}}}, "error": kind, "isApiErrorMessage": true, "apiErrorStatus": status})
	t.end()
}

// refused writes a refused permission: the rejected tool_result, then the
// interrupt for tool use.
func (t *transcript) refused() {
	if t == nil {
		return
	}
	t.write("user", map[string]any{"promptId": t.turn, "message": map[string]any{"role": "user",
		"content": []map[string]any{{"type": "tool_result", "content": claudeRefusal, "is_error": true, "tool_use_id": t.tool}}},
		"toolUseResult": "User rejected tool use"})
	t.interruptEntry("[Request interrupted by user for tool use]")
}

// interrupted is an Esc during the turn: nothing before the first token.
func (t *transcript) interrupted() {
	if t == nil || !t.answered {
		return
	}
	t.partial()
	t.interruptEntry("[Request interrupted by user]")
}

func (t *transcript) interruptEntry(text string) {
	t.write("user", map[string]any{"promptId": t.turn, "message": map[string]any{"role": "user",
		"content": []map[string]any{{"type": "text", "text": text}}}})
}

// end writes the turn's duration, as Claude does after its Stop hooks.
func (t *transcript) end() {
	if t == nil {
		return
	}
	t.write("system", map[string]any{"subtype": "turn_duration", "durationMs": time.Since(t.started).Milliseconds(), "isMeta": false})
}
