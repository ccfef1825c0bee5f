package mockagents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/partyhq/party/core/agent"
)

// refusal is what the agent prints, and its exit status, when it is
// started to resume a session it keeps no transcript of ("" when it
// resumes it or starts fresh). Measured on the pinned agents, each prints
// this within 1-3 s of its start and exits, its TUI never drawn (or only
// its banner): claude 2.1.197 (its transcript gone: status 1), codex
// 0.169.0 (no rollout of the thread: 1), gemini 0.61.0 (no chat file of
// the session: 42).
func refusal(opt Options) (string, int) {
	if opt.Resume == "" || opt.Replay != nil {
		return "", 0
	}
	switch opt.Persona {
	case "claude":
		if !exists(claudeTranscriptPath(opt.Resume)) {
			return fmt.Sprintf("No conversation found with session ID: %s\r\nResume this session with:\r\nclaude --resume %s\r\n", opt.Resume, opt.Resume), 1
		}
	case "codex":
		if agent.CodexRollout(codexHome(), opt.Resume) == "" {
			return fmt.Sprintf("ERROR: No saved session found with ID %s. Run `codex resume` without an ID to choose from existing sessions.\r\n", opt.Resume), 1
		}
	case "gemini":
		if path := geminiChatPath(opt.Resume); !exists(path) {
			return fmt.Sprintf("Error resuming session: Invalid session identifier %q.\r\nSearched for sessions in %s.\r\n"+
				"Use --list-sessions to see available sessions, then use --resume {number}, --resume {uuid}, or --resume latest.\r\n",
				opt.Resume, filepath.Dir(path)), 42
		}
	}
	return "", 0
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// pastTurn is a message of a resumed session: the user's or the model's.
type pastTurn struct {
	user bool
	text string
}

// past is the conversation of the session opt resumes, read from where the
// persona keeps it (claude's transcript, codex's rollout, gemini's chat
// file): the real agents show it on screen when they resume.
func past(opt Options) []pastTurn {
	if opt.Resume == "" {
		return nil
	}
	var path string
	switch opt.Persona {
	case "claude":
		path = claudeTranscriptPath(opt.Resume)
	case "codex":
		path = agent.CodexRollout(codexHome(), opt.Resume)
	case "gemini":
		path = geminiChatPath(opt.Resume)
	}
	b, err := os.ReadFile(path)
	if path == "" || err != nil {
		return nil
	}
	var out []pastTurn
	seen := map[string]bool{} // gemini writes a response again with its tool calls
	for _, line := range bytes.Split(b, []byte("\n")) {
		var r struct {
			ID      string          `json:"id"`
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
			Payload struct {
				Type string `json:"type"`
				Item struct {
					Type    string          `json:"type"`
					Content json.RawMessage `json:"content"`
				} `json:"item"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &r) != nil {
			continue
		}
		switch {
		case opt.Persona == "claude" && (r.Type == "user" || r.Type == "assistant"):
			if t := textOf(r.Message.Content); t != "" {
				out = append(out, pastTurn{user: r.Type == "user", text: t})
			}
		case opt.Persona == "codex" && r.Payload.Type == "item_completed" &&
			(r.Payload.Item.Type == "UserMessage" || r.Payload.Item.Type == "AgentMessage"):
			if t := textOf(r.Payload.Item.Content); t != "" {
				out = append(out, pastTurn{user: r.Payload.Item.Type == "UserMessage", text: t})
			}
		case opt.Persona == "gemini" && (r.Type == "user" || r.Type == "gemini") && !seen[r.ID]:
			seen[r.ID] = true
			if t := textOf(r.Content); t != "" {
				out = append(out, pastTurn{user: r.Type == "user", text: t})
			}
		}
	}
	return out
}

// textOf is a message's content as text: a string, or the text parts of a
// list of parts.
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}
