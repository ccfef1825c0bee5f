package mockagents

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/partyhq/party/core/hook"
)

// hooks runs an agent's hooks the way the real agent does, in order, on a
// goroutine of their own so the screen never waits for them.
type hooks struct {
	claude map[string][]claudeHook // event -> command hooks of every settings file
	// geminiCmds are gemini's command hooks (their matchers are ignored:
	// party's Gemini events have none).
	geminiCmds map[string][]claudeHook
	notify     []string // codex notify argv
	session    string   // claude's session id
	queue      chan func()
}

// claudeHook is one command hook; matcher selects tools (tool events only).
type claudeHook struct {
	matcher *regexp.Regexp
	command string
}

// newHooks reads claude's hooks as Claude Code does: user settings, the
// project's settings and local settings, then --settings FILE; the hooks
// of all of them run.
func newHooks(settingsFile string, notify []string) *hooks {
	h := &hooks{notify: notify, queue: make(chan func(), 64), claude: map[string][]claudeHook{}, session: sessionID(), geminiCmds: geminiHooks()}
	cwd, _ := os.Getwd()
	files := []string{filepath.Join(os.Getenv("HOME"), ".claude", "settings.json"),
		filepath.Join(cwd, ".claude", "settings.json"), filepath.Join(cwd, ".claude", "settings.local.json")}
	if settingsFile != "" {
		files = append(files, settingsFile)
	}
	for _, f := range files {
		for ev, hs := range readClaudeHooks(f) {
			h.claude[ev] = append(h.claude[ev], hs...)
		}
	}
	if os.Getenv("PARTY_MOCK_CLAUDE_PERMISSION_HOOK") == "0" {
		delete(h.claude, "PermissionRequest") // a Claude Code that has none
	}
	go func() {
		for f := range h.queue {
			f()
		}
	}()
	return h
}

// sessionID is $PARTY_MOCK_SESSION_ID, else a new random id.
func sessionID() string {
	if id := os.Getenv("PARTY_MOCK_SESSION_ID"); id != "" {
		return id
	}
	return newUUID()
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// readClaudeHooks reads the command hooks of a Claude Code settings file.
func readClaudeHooks(path string) map[string][]claudeHook {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return parseHooks(b)
}

// parseHooks reads the command hooks of a settings document, Claude's or
// Gemini's (the same shape).
func parseHooks(b []byte) map[string][]claudeHook {
	var s struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	out := map[string][]claudeHook{}
	for ev, groups := range s.Hooks {
		for _, g := range groups {
			var m *regexp.Regexp
			if g.Matcher != "" && g.Matcher != "*" {
				var err error
				if m, err = regexp.Compile("^(" + g.Matcher + ")$"); err != nil {
					continue
				}
			}
			for _, hk := range g.Hooks {
				if hk.Type == "command" && hk.Command != "" {
					out[ev] = append(out[ev], claudeHook{matcher: m, command: hk.Command})
				}
			}
		}
	}
	return out
}

// payload adds the fields every claude hook gets. transcript_path is
// where Claude Code keeps the session's transcript (transcript.go).
func (h *hooks) payload(event string, fields map[string]any) []byte {
	cwd, _ := os.Getwd()
	fields["session_id"] = h.session
	fields["transcript_path"] = claudeTranscriptPath(h.session)
	fields["cwd"] = cwd
	fields["hook_event_name"] = event
	if event != "SessionStart" && event != "Notification" {
		fields["permission_mode"] = "default"
	}
	b, _ := json.Marshal(fields)
	return b
}

// claudeTool runs the PreToolUse or PostToolUse hooks whose matcher
// selects tool, and waits for them. For PreToolUse it returns the reason
// of a denial: a hook that printed permissionDecision "deny", or exited 2
// (its stderr is the reason); "" allows the tool.
func (h *hooks) claudeTool(event, tool string, fields map[string]any) string {
	var cmds []string
	for _, hk := range h.claude[event] {
		if hk.matcher == nil || hk.matcher.MatchString(tool) {
			cmds = append(cmds, hk.command)
		}
	}
	if len(cmds) == 0 {
		return ""
	}
	fields["tool_name"] = tool
	b := h.payload(event, fields)
	deny := make(chan string, 1)
	h.queue <- func() {
		reason := ""
		for _, c := range cmds {
			cmd := exec.Command("sh", "-c", c)
			cmd.Stdin = bytes.NewReader(b)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() == 2 && reason == "" {
				reason = strings.TrimSpace(errb.String())
			}
			var d struct {
				Out struct {
					Decision string `json:"permissionDecision"`
					Reason   string `json:"permissionDecisionReason"`
				} `json:"hookSpecificOutput"`
			}
			if json.Unmarshal(out.Bytes(), &d) == nil && d.Out.Decision == "deny" && reason == "" {
				reason = d.Out.Reason
			}
		}
		deny <- reason
	}
	return <-deny
}

// claudeEvent runs the hooks of event with payload (the common fields are
// added), off the caller's goroutine.
func (h *hooks) claudeEvent(event string, payload map[string]any) {
	h.claudeEach(event, []map[string]any{payload}, func() {})
}

// claudeProgress runs the hooks of event one after the other, off the
// caller's goroutine, calling progress with how many have finished after
// each; it returns how many there are (0: progress is never called).
func (h *hooks) claudeProgress(event string, payload map[string]any, progress func(done int)) int {
	cmds := h.claude[event]
	if len(cmds) == 0 {
		return 0
	}
	b := h.payload(event, payload)
	h.queue <- func() {
		for i, hk := range cmds {
			cmd := exec.Command("sh", "-c", hk.command)
			cmd.Stdin = bytes.NewReader(b)
			_ = cmd.Run()
			progress(i + 1)
		}
	}
	return len(cmds)
}

// claudeEach runs the hooks of event once per payload, in order, off the
// caller's goroutine, then calls done (on the hooks' goroutine). It
// reports false, calling nothing, when event has no hooks.
func (h *hooks) claudeEach(event string, payloads []map[string]any, done func()) bool {
	cmds := h.claude[event]
	if len(cmds) == 0 {
		return false
	}
	var bs [][]byte
	for _, p := range payloads {
		bs = append(bs, h.payload(event, p))
	}
	h.queue <- func() {
		for _, b := range bs {
			for _, hk := range cmds {
				cmd := exec.Command("sh", "-c", hk.command)
				cmd.Stdin = bytes.NewReader(b)
				_ = cmd.Run()
			}
		}
		done()
	}
	return true
}

// codexNotify is the JSON codex gives its notify program, in its order.
type codexNotify struct {
	Type          string   `json:"type"`
	ThreadID      string   `json:"thread-id"`
	TurnID        string   `json:"turn-id"`
	Cwd           string   `json:"cwd"`
	Client        string   `json:"client"`
	InputMessages []string `json:"input-messages"`
	LastMessage   string   `json:"last-assistant-message"`
}

// codexTurn runs codex's notify program after a turn, with the JSON as its
// last argument.
func (h *hooks) codexTurn(thread, turn string, inputs []string, answer string) {
	if len(h.notify) == 0 {
		return
	}
	cwd, _ := os.Getwd()
	b, _ := json.Marshal(codexNotify{Type: "agent-turn-complete", ThreadID: thread, TurnID: turn, Cwd: cwd,
		Client: "codex-tui", InputMessages: append([]string{}, inputs...), LastMessage: answer})
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

// geminiHooks reads Gemini CLI's command hooks as Gemini 0.61 does: the
// project's .gemini/settings.json, then the user's (the arrays of both
// run), none at all when Gemini does not trust the folder
// (~/.gemini/trustedFolders.json and the rest, see hook.GeminiTrust).
func geminiHooks() map[string][]claudeHook {
	cwd, _ := os.Getwd()
	if ok, _ := hook.GeminiTrust(cwd, os.Getenv); !ok {
		return nil
	}
	user := filepath.Join(hook.GeminiHome(os.Getenv), ".gemini", "settings.json")
	files := []string{filepath.Join(cwd, ".gemini", "settings.json"), user}
	if files[0] == user {
		files = files[1:] // in the home folder there are only user settings
	}
	out := map[string][]claudeHook{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for ev, hs := range parseHooks(hook.StripJSONComments(b)) {
			out[ev] = append(out[ev], hs...)
		}
	}
	return out
}

// gemini runs the Gemini hooks of event with fields (the common fields
// are added) off the caller's goroutine, then calls done there; it
// reports false, calling nothing, when there is no such hook. Gemini
// waits for its hooks: the caller goes on in done.
func (h *hooks) gemini(event string, fields map[string]any, done func()) bool {
	cmds := h.geminiCmds[event]
	if len(cmds) == 0 {
		return false
	}
	cwd, _ := os.Getwd()
	fields["session_id"] = h.session
	fields["transcript_path"] = geminiChatPath(h.session)
	fields["cwd"] = cwd
	fields["hook_event_name"] = event
	fields["timestamp"] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	b, _ := json.Marshal(fields)
	h.queue <- func() {
		for _, hk := range cmds {
			cmd := exec.Command("bash", "-c", hk.command)
			cmd.Stdin = bytes.NewReader(b)
			cmd.Env = append(os.Environ(), "GEMINI_PROJECT_DIR="+cwd, "GEMINI_CWD="+cwd, "GEMINI_SESSION_ID="+h.session, "CLAUDE_PROJECT_DIR="+cwd)
			_ = cmd.Run()
		}
		done()
	}
	return true
}

// geminiPermission is the ToolPermission Notification of Gemini's shell
// confirmation box.
func (h *hooks) geminiPermission(command string) {
	root, _, _ := strings.Cut(strings.TrimSpace(command), " ")
	h.gemini("Notification", map[string]any{"notification_type": "ToolPermission",
		"message": "Tool Confirm Shell Command requires execution",
		"details": map[string]any{"type": "exec", "title": "Confirm Shell Command", "command": command, "rootCommand": root}}, func() {})
}
