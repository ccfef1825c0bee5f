package mockagents

import (
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// hooks runs an agent's hooks the way the real agent does, in order, on a
// goroutine of their own so the screen never waits for them.
type hooks struct {
	claude map[string][]string // event -> shell commands (claude --settings)
	notify []string            // codex notify argv
	queue  chan func()
}

func newHooks(settingsFile string, notify []string) *hooks {
	h := &hooks{notify: notify, queue: make(chan func(), 64)}
	if settingsFile != "" {
		h.claude = readClaudeHooks(settingsFile)
	}
	go func() {
		for f := range h.queue {
			f()
		}
	}()
	return h
}

// readClaudeHooks reads the command hooks of a Claude Code settings file.
func readClaudeHooks(path string) map[string][]string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	out := map[string][]string{}
	for ev, groups := range s.Hooks {
		for _, g := range groups {
			for _, hk := range g.Hooks {
				if hk.Type == "command" && hk.Command != "" {
					out[ev] = append(out[ev], hk.Command)
				}
			}
		}
	}
	return out
}

// claudeEvent runs the hooks of event with payload (the common fields are
// added) and waits for them, as claude does for UserPromptSubmit.
func (h *hooks) claudeEvent(event string, payload map[string]any, wait bool) {
	cmds := h.claude[event]
	if len(cmds) == 0 {
		return
	}
	cwd, _ := os.Getwd()
	payload["session_id"] = "mock-session"
	payload["transcript_path"] = ""
	payload["cwd"] = cwd
	payload["permission_mode"] = "default"
	payload["hook_event_name"] = event
	b, _ := json.Marshal(payload)
	done := make(chan struct{})
	h.queue <- func() {
		defer close(done)
		for _, c := range cmds {
			cmd := exec.Command("sh", "-c", c)
			cmd.Stdin = strings.NewReader(string(b))
			_ = cmd.Run()
		}
	}
	if wait {
		<-done
	}
}

// codexTurn runs codex's notify program after a turn.
func (h *hooks) codexTurn(prompt, answer string, turn int) {
	if len(h.notify) == 0 {
		return
	}
	cwd, _ := os.Getwd()
	b, _ := json.Marshal(map[string]any{
		"type": "agent-turn-complete", "thread-id": "mock-thread", "turn-id": strconv.Itoa(turn), "cwd": cwd,
		"input-messages": []string{prompt}, "last-assistant-message": answer,
	})
	argv := append(append([]string{}, h.notify...), string(b))
	h.queue <- func() {
		cmd := exec.Command(argv[0], argv[1:]...)
		_ = cmd.Run()
	}
}

// parseNotify reads codex's -c notify=[...] override.
func parseNotify(v string) []string {
	key, val, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(key) != "notify" {
		return nil
	}
	var argv []string
	if json.Unmarshal([]byte(strings.TrimSpace(val)), &argv) != nil {
		return nil
	}
	return argv
}
