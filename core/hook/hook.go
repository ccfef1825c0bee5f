package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kinds of events, normalized across agents.
const (
	PromptSubmit = "prompt-submit" // the agent took a prompt
	TurnComplete = "turn-complete" // a turn ended normally
	TurnFailed   = "turn-failed"   // a turn ended with an API error
	Notification = "notification"  // e.g. waiting for permission
	SessionStart = "session-start"
	ToolUse      = "tool-use"  // about to run a tool (PreToolUse)
	ToolUsed     = "tool-used" // ran a tool (PostToolUse)
)

// Event is one line of a session's event log.
type Event struct {
	Time time.Time `json:"time"`
	Pane string    `json:"pane"`
	// Role is the party role of the agent's pane (PARTY_ROLE): a team
	// brought back after its server died has new pane ids.
	Role    string `json:"role,omitempty"`
	Agent   string `json:"agent"`
	Kind    string `json:"kind"`
	Raw     string `json:"raw_event,omitempty"` // the agent's own event name
	Session string `json:"agent_session,omitempty"`
	// Prompts the turn was given (UserPromptSubmit's prompt, Codex's
	// input-messages).
	Prompts []string `json:"prompts,omitempty"`
	// Answer is the last assistant message of a completed turn.
	Answer string `json:"answer,omitempty"`
	// Type is the notification type (permission_prompt, idle_prompt) or
	// the error type of a failed turn.
	Type    string `json:"type,omitempty"`
	Message string `json:"message,omitempty"`
	// Tool is the tool of a tool event, with its command (Bash) or file
	// (Edit, Write).
	Tool    string `json:"tool,omitempty"`
	Command string `json:"command,omitempty"`
	File    string `json:"file,omitempty"`
	// Transcript is the agent's transcript file (transcript_path).
	Transcript string `json:"transcript,omitempty"`
}

// ErrPayload is a hook payload that cannot be read.
var ErrPayload = errors.New("bad hook payload")

// claudePayload is the JSON Claude Code gives every hook.
type claudePayload struct {
	SessionID     string `json:"session_id"`
	Transcript    string `json:"transcript_path"`
	HookEventName string `json:"hook_event_name"`
	Prompt        string `json:"prompt"`
	LastMessage   string `json:"last_assistant_message"`
	Message       string `json:"message"`
	NotifType     string `json:"notification_type"`
	Error         any    `json:"error"`
	ErrorType     string `json:"error_type"`
	ToolName      string `json:"tool_name"`
	ToolInput     struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
		Notebook string `json:"notebook_path"`
	} `json:"tool_input"`
}

// FromClaude reads a Claude Code hook payload.
func FromClaude(payload []byte) (Event, error) {
	var p claudePayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return Event{}, fmt.Errorf("claude hook: %w: %v", ErrPayload, err)
	}
	e := Event{Agent: "claude", Raw: p.HookEventName, Session: p.SessionID, Transcript: p.Transcript}
	switch p.HookEventName {
	case "UserPromptSubmit":
		e.Kind, e.Prompts = PromptSubmit, []string{p.Prompt}
	case "Stop", "SubagentStop":
		e.Kind, e.Answer = TurnComplete, p.LastMessage
	case "StopFailure":
		// Claude 2.1 sends error ("unknown", "server_error"…) and the
		// text it showed ("API Error: 500 …") as last_assistant_message;
		// older ones error_type and an error object.
		e.Kind, e.Type, e.Message = TurnFailed, p.ErrorType, p.LastMessage
		if e.Type == "" {
			e.Type = errorText(p.Error)
		}
		if e.Message == "" {
			e.Message = errorText(p.Error)
		}
		if e.Type == "" {
			e.Type = "error"
		}
	case "PermissionRequest":
		// Comes ~0.2 s after the dialog opens; the Notification ~6 s later.
		e.Kind, e.Type, e.Tool, e.Command = Notification, PermissionPrompt, p.ToolName, p.ToolInput.Command
		e.Message = "Claude asks permission to use " + p.ToolName
	case "Notification":
		e.Kind, e.Type, e.Message = Notification, p.NotifType, p.Message
	case "SessionStart":
		e.Kind = SessionStart
	case "PreToolUse", "PostToolUse":
		e.Kind = ToolUse
		if p.HookEventName == "PostToolUse" {
			e.Kind = ToolUsed
		}
		e.Tool, e.Command, e.File = p.ToolName, p.ToolInput.Command, p.ToolInput.FilePath
		if e.File == "" {
			e.File = p.ToolInput.Notebook
		}
	case "":
		return Event{}, fmt.Errorf("claude hook: %w: no hook_event_name", ErrPayload)
	default:
		e.Kind = strings.ToLower(p.HookEventName)
	}
	return e, nil
}

func errorText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// codexPayload is what Codex's notify program gets as its last argument.
type codexPayload struct {
	Type        string   `json:"type"`
	ThreadID    string   `json:"thread-id"`
	TurnID      any      `json:"turn-id"` // a string; tolerate a number
	Input       []string `json:"input-messages"`
	LastMessage string   `json:"last-assistant-message"`
}

// FromCodex reads a Codex notify payload.
func FromCodex(payload []byte) (Event, error) {
	var p codexPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return Event{}, fmt.Errorf("codex notify: %w: %v", ErrPayload, err)
	}
	if p.Type != "agent-turn-complete" {
		return Event{Agent: "codex", Raw: p.Type, Kind: p.Type}, nil
	}
	return Event{Agent: "codex", Raw: p.Type, Kind: TurnComplete, Session: p.ThreadID,
		Prompts: p.Input, Answer: p.LastMessage}, nil
}

// ClaudeSettings returns the settings JSON that makes Claude Code run
// command for the hooks party listens to. command is run by Claude's shell.
func ClaudeSettings(command string) []byte {
	entry := []map[string]any{{"hooks": []map[string]any{{"type": "command", "command": command, "timeout": 10}}}}
	hooks := map[string]any{}
	for _, ev := range []string{"UserPromptSubmit", "Stop", "StopFailure", "Notification", "PermissionRequest", "SessionStart"} {
		hooks[ev] = entry
	}
	// The review gate and the edit trace: Bash commands are checked before
	// they run, every tool is logged after.
	hooks["PreToolUse"] = []map[string]any{{"matcher": "Bash", "hooks": entry[0]["hooks"]}}
	hooks["PostToolUse"] = []map[string]any{{"matcher": "*", "hooks": entry[0]["hooks"]}}
	b, _ := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
	return b
}

// CodexNotify returns the -c override that makes Codex run argv (with the
// JSON appended) after each turn.
func CodexNotify(argv []string) string {
	b, _ := json.Marshal(argv) // a JSON array of strings is a valid TOML array
	return "notify=" + string(b)
}

// ShellQuote quotes s for a POSIX shell (Claude runs hook commands with one).
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
