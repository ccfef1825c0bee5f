package mockagents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"
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
// and tool_use entries, the API error message, the refused tool_result,
// "[Request interrupted by user]" (Esc once the answer began; an Esc
// before the first token writes nothing), "[Request interrupted by user
// for tool use]" after a refusal, and turn_duration when a turn ends. Like
// the real one, the file appears with the first prompt. Only claude has one
// (a nil one writes nothing). Used from the run loop only.
type transcript struct {
	path, session string
	parent        string // uuid of the last entry
	turn          string // promptId of the running turn
	tool          string // id of the tool_use awaiting permission
	answered      bool   // the running turn has written answer text or a tool call
	started       time.Time
}

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
	t.turn, t.answered, t.tool, t.started = turnID, false, "", time.Now()
	for _, m := range msgs {
		t.write("user", map[string]any{"promptId": turnID, "message": map[string]any{"role": "user", "content": m},
			"permissionMode": "default", "promptSource": "typed"})
	}
}

// assistant writes one answer text.
func (t *transcript) assistant(text string) {
	if t == nil {
		return
	}
	t.answered = true
	t.write("assistant", map[string]any{"message": map[string]any{"role": "assistant", "model": "claude-mock",
		"content": []map[string]any{{"type": "text", "text": text}}}, "isApiErrorMessage": false})
}

// apiError writes the message of an API error that ended the turn.
func (t *transcript) apiError(kind, text string, status int) {
	if t == nil {
		return
	}
	t.write("assistant", map[string]any{"message": map[string]any{"role": "assistant", "model": "<synthetic>",
		"content": []map[string]any{{"type": "text", "text": text}}}, "error": kind, "isApiErrorMessage": true, "apiErrorStatus": status})
	t.end()
}

// toolUse writes the tool call that asks for permission.
func (t *transcript) toolUse(name string, input map[string]any) {
	if t == nil {
		return
	}
	t.answered = true
	t.tool = "toolu_" + strings.ReplaceAll(newUUID(), "-", "")[:24]
	t.write("assistant", map[string]any{"message": map[string]any{"role": "assistant", "model": "claude-mock",
		"content": []map[string]any{{"type": "tool_use", "id": t.tool, "name": name, "input": input}}}})
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
