package mockagents

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/partyhq/party/core/agent"
)

// rollout writes the mock codex's rollout transcript as Codex 0.169 does:
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<thread>.jsonl
// (CODEX_HOME defaults to ~/.codex), created at the first prompt and held
// open while the agent runs, one {"timestamp","type","payload"} record per
// line. It writes the records party reads (wait.CodexRollout): session_meta,
// event_msg task_started, item_completed UserMessage, task_complete
// (last_agent_message, or error on a failed turn), turn_aborted (Esc, a
// refused approval), and response_item function_call with
// sandbox_permissions "require_escalated" (the approval prompt) and its
// function_call_output. Only codex has one (a nil
// rollout writes nothing).
type rollout struct {
	thread string
	turn   string // the running turn's id
	call   string // the call the approval prompt asks about
	f      *os.File
	failed bool // the file could not be made; stop trying
}

func newRollout(thread string) *rollout {
	return &rollout{thread: thread}
}

// codexHome is the mock codex's CODEX_HOME, else ~/.codex.
func codexHome() string {
	if home := os.Getenv("CODEX_HOME"); home != "" {
		return home
	}
	return filepath.Join(os.Getenv("HOME"), ".codex")
}

// write appends one record, making the file first.
func (r *rollout) write(typ string, payload map[string]any) {
	if r == nil || r.failed {
		return
	}
	now := time.Now()
	if r.f == nil && !r.open(now) {
		return
	}
	b, _ := json.Marshal(map[string]any{"timestamp": now.UTC().Format("2006-01-02T15:04:05.000Z"), "type": typ, "payload": payload})
	_, _ = r.f.Write(append(b, '\n'))
}

func (r *rollout) open(now time.Time) bool {
	home := codexHome()
	// A resumed thread goes on in its rollout, as the real codex's does.
	if path := agent.CodexRollout(home, r.thread); path != "" {
		var err error
		if r.f, err = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o600); err != nil {
			r.failed = true
			return false
		}
		holdThread(home, r.thread)
		return true
	}
	dir := filepath.Join(home, "sessions", now.Format("2006"), now.Format("01"), now.Format("02"))
	path := filepath.Join(dir, fmt.Sprintf("rollout-%s-%s.jsonl", now.Format("2006-01-02T15-04-05"), r.thread))
	err := os.MkdirAll(dir, 0o700)
	if err == nil {
		r.f, err = os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	}
	if err != nil {
		r.failed = true
		return false
	}
	holdThread(home, r.thread)
	cwd, _ := os.Getwd()
	b, _ := json.Marshal(map[string]any{"timestamp": now.UTC().Format("2006-01-02T15:04:05.000Z"), "type": "session_meta",
		"payload": map[string]any{"id": r.thread, "session_id": r.thread, "timestamp": now.UTC().Format(time.RFC3339Nano),
			"cwd": cwd, "originator": "codex-tui", "cli_version": "0.169.0", "source": "cli", "model_provider": "mock"}})
	_, _ = r.f.Write(append(b, '\n'))
	return true
}

// turnStarted records a new turn and its user messages.
func (r *rollout) turnStarted(msgs []string) {
	if r == nil {
		return
	}
	r.turn = newUUID()
	r.write("event_msg", map[string]any{"type": "task_started", "turn_id": r.turn})
	for _, m := range msgs {
		r.userMessage(m)
	}
}

// userMessage records a message of the running turn (a steer joins it).
func (r *rollout) userMessage(text string) {
	if r == nil {
		return
	}
	r.write("event_msg", map[string]any{"type": "item_completed", "thread_id": r.thread, "turn_id": r.turn,
		"item": map[string]any{"type": "UserMessage", "id": newUUID(),
			"content": []map[string]any{{"type": "text", "text": strings.TrimSpace(text), "text_elements": []any{}}}}})
}

// askPermission records the shell call that opens the approval prompt.
func (r *rollout) askPermission(cmd string) {
	if r == nil {
		return
	}
	r.call = "call_" + strings.ReplaceAll(newUUID(), "-", "")[:16]
	args, _ := json.Marshal(map[string]any{"cmd": cmd, "justification": "the script asked for it", "sandbox_permissions": "require_escalated"})
	r.write("response_item", map[string]any{"type": "function_call", "name": "exec_command", "arguments": string(args),
		"call_id": r.call, "status": "completed"})
}

// answered records the approval prompt's answer: the call's output (a
// refusal's too), then a refusal aborts the turn.
func (r *rollout) answered(yes bool) {
	if r == nil {
		return
	}
	out := "approved"
	if !yes {
		out = "aborted by user"
	}
	r.write("response_item", map[string]any{"type": "function_call_output", "call_id": r.call, "output": out})
	if !yes {
		r.aborted()
	}
}

// completed records the end of a turn: its answer, or an error.
func (r *rollout) completed(answer string, errMsg string) {
	if r == nil {
		return
	}
	p := map[string]any{"type": "task_complete", "turn_id": r.turn, "last_agent_message": answer}
	if errMsg != "" {
		p["last_agent_message"] = nil
		p["error"] = map[string]any{"message": errMsg, "codex_error_info": "other"}
	} else {
		r.write("event_msg", map[string]any{"type": "item_completed", "thread_id": r.thread, "turn_id": r.turn,
			"item": map[string]any{"type": "AgentMessage", "content": []map[string]any{{"type": "Text", "text": answer}}}})
	}
	r.write("event_msg", p)
}

// aborted records an interrupted turn.
func (r *rollout) aborted() {
	if r == nil {
		return
	}
	r.write("event_msg", map[string]any{"type": "turn_aborted", "turn_id": r.turn, "reason": "interrupted"})
}

// A codex that runs a thread is its only writer: the real codex refuses a
// second one ("thread-store conflict: thread … already has an active
// writer"), so codex exec resume fails while the interactive codex of the
// same thread runs. The mock marks its thread with its pid.
func writerPath(home, thread string) string {
	return filepath.Join(home, "sessions", ".writers", thread)
}

func holdThread(home, thread string) {
	p := writerPath(home, thread)
	if os.MkdirAll(filepath.Dir(p), 0o700) == nil {
		_ = os.WriteFile(p, []byte(strconv.Itoa(os.Getpid())), 0o600)
	}
}

// threadWriter is the pid of a live codex that holds thread, or 0.
func threadWriter(thread string) int {
	home := os.Getenv("CODEX_HOME")
	if home == "" {
		home = filepath.Join(os.Getenv("HOME"), ".codex")
	}
	b, err := os.ReadFile(writerPath(home, thread))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 || pid == os.Getpid() || syscall.Kill(pid, 0) != nil {
		return 0
	}
	return pid
}
