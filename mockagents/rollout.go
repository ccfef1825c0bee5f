package mockagents

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/mockagents/script"
)

// rollout writes the mock codex's rollout transcript as Codex 0.169 does:
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<thread>.jsonl
// (CODEX_HOME defaults to ~/.codex), created at the first prompt and held
// open while the agent runs, one {"timestamp","ordinal","type","payload"}
// record per line, ordinal counting the file's records from 0. It writes
// the records party reads (wait.CodexRollout) and those that say what the
// model spent: session_meta, event_msg task_started, turn_context (the
// turn's model), item_completed UserMessage, per model response its
// item_completed AgentMessage (its text), the tool call that ended it
// (response_item function_call: exec_command, with sandbox_permissions
// "require_escalated" for the approval prompt; custom_tool_call
// apply_patch for a write), a token_usage_record (the response's usage,
// the turn's and the thread's sums) and an event_msg token_count (the
// thread's sums and the response's; after a tool call, once its output is
// in), then task_complete (last_agent_message, or error on a failed turn)
// or turn_aborted (Esc, a refused approval). Only codex has one (a nil
// rollout writes nothing).
type rollout struct {
	thread  string
	turn    string // the running turn's id
	call    string // the last tool call's id
	patch   bool   // it is an apply_patch custom tool call
	model   string // the model the last turn_context named
	ordinal int    // the next record's
	f       *os.File
	failed  bool // the file could not be made; stop trying

	turnUsage, threadUsage codexUsage
	count                  *codexTokenCount // the token_count to write once the tool call's output is in
}

// codexModel is the mock codex's model, when no usage step names one.
const codexModel = "gpt-mock"

// codexContextWindow is the model_context_window Codex 0.169 records.
const codexContextWindow = 258400

// codexUsage is token usage as Codex 0.169 records it (the fields in its
// order): the input counts the cached input, the output the reasoning,
// the total the two.
type codexUsage struct {
	Input      int64 `json:"input_tokens"`
	Cached     int64 `json:"cached_input_tokens"`
	CacheWrite int64 `json:"cache_write_input_tokens"`
	Output     int64 `json:"output_tokens"`
	Reasoning  int64 `json:"reasoning_output_tokens"`
	Total      int64 `json:"total_tokens"`
}

func newCodexUsage(t script.Tokens) codexUsage {
	return codexUsage{Input: t.Input, Cached: t.CacheRead, CacheWrite: t.CacheWrite, Output: t.Output,
		Reasoning: t.Reasoning, Total: t.Input + t.Output}
}

func (u *codexUsage) add(v codexUsage) {
	u.Input += v.Input
	u.Cached += v.Cached
	u.CacheWrite += v.CacheWrite
	u.Output += v.Output
	u.Reasoning += v.Reasoning
	u.Total += v.Total
}

// codexUsageRecord is a token_usage_record's payload (Codex 0.169's
// fields in its order).
type codexUsageRecord struct {
	ThreadID   string     `json:"thread_id"`
	TurnID     string     `json:"turn_id"`
	SessionID  string     `json:"session_id"`
	RootTurnID string     `json:"root_turn_id"`
	ResponseID string     `json:"response_id"`
	Usage      codexUsage `json:"usage"`
	Turn       codexUsage `json:"turn_token_usage"`
	Thread     codexUsage `json:"thread_token_usage"`
}

// codexTokenCount is an event_msg token_count's payload.
type codexTokenCount struct {
	Type string `json:"type"`
	Info struct {
		Total                 codexUsage `json:"total_token_usage"`
		Last                  codexUsage `json:"last_token_usage"`
		LastIncludesReasoning bool       `json:"last_usage_includes_reasoning"`
		ContextWindow         int        `json:"model_context_window"`
	} `json:"info"`
	RateLimits struct {
		LimitID              string `json:"limit_id"`
		LimitName            any    `json:"limit_name"`
		Primary              any    `json:"primary"`
		Secondary            any    `json:"secondary"`
		Credits              any    `json:"credits"`
		IndividualLimit      any    `json:"individual_limit"`
		SpendControlReached  any    `json:"spend_control_reached"`
		PlanType             any    `json:"plan_type"`
		RateLimitReachedType any    `json:"rate_limit_reached_type"`
	} `json:"rate_limits"`
}

// codexTurnContext is a turn_context's payload: what of it the mock
// keeps.
type codexTurnContext struct {
	TurnID         string `json:"turn_id"`
	RootTurnID     string `json:"root_turn_id"`
	Cwd            string `json:"cwd"`
	ApprovalPolicy string `json:"approval_policy"`
	Model          string `json:"model"`
	Summary        string `json:"summary"`
}

// rolloutRecord is one line of a rollout.
type rolloutRecord struct {
	Timestamp string `json:"timestamp"`
	Ordinal   int    `json:"ordinal"`
	Type      string `json:"type"`
	Payload   any    `json:"payload"`
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
func (r *rollout) write(typ string, payload any) {
	if r == nil || r.failed {
		return
	}
	now := time.Now()
	if r.f == nil && !r.open(now) {
		return
	}
	r.record(now, typ, payload)
}

// record appends one record to the open file.
func (r *rollout) record(now time.Time, typ string, payload any) {
	b, _ := json.Marshal(rolloutRecord{Timestamp: now.UTC().Format("2006-01-02T15:04:05.000Z"), Ordinal: r.ordinal, Type: typ, Payload: payload})
	r.ordinal++
	_, _ = r.f.Write(append(b, '\n'))
}

func (r *rollout) open(now time.Time) bool {
	home := codexHome()
	// A resumed thread goes on in its rollout, as the real codex's does:
	// its records' ordinals and its thread's token sums go on.
	if path := agent.CodexRollout(home, r.thread); path != "" {
		b, err := os.ReadFile(path)
		if err == nil {
			r.f, err = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o600)
		}
		if err != nil {
			r.failed = true
			return false
		}
		r.resume(b)
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
	r.record(now, "session_meta", map[string]any{"id": r.thread, "session_id": r.thread, "timestamp": now.UTC().Format(time.RFC3339Nano),
		"cwd": cwd, "originator": "codex-tui", "cli_version": "0.169.0", "source": "cli", "model_provider": "mock"})
	return true
}

// resume takes up a rollout whose records are b: the next ordinal, and
// the thread's token sums its last token_usage_record gave.
func (r *rollout) resume(b []byte) {
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		r.ordinal++
		var rec struct {
			Type    string `json:"type"`
			Payload struct {
				Thread codexUsage `json:"thread_token_usage"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Type == "token_usage_record" {
			r.threadUsage = rec.Payload.Thread
		}
	}
}

// turnStarted records a new turn, its model (model, or the mock's own
// when "") and its user messages.
func (r *rollout) turnStarted(msgs []string, model string) {
	if r == nil {
		return
	}
	r.turn, r.turnUsage, r.count = newUUID(), codexUsage{}, nil
	r.write("event_msg", map[string]any{"type": "task_started", "turn_id": r.turn, "root_turn_id": r.turn,
		"model_context_window": codexContextWindow, "collaboration_mode_kind": "default"})
	r.turnContext(model)
	for _, m := range msgs {
		r.userMessage(m)
	}
}

// turnContext records the running turn's settings: its model.
func (r *rollout) turnContext(model string) {
	if model == "" {
		model = codexModel
	}
	r.model = model
	cwd, _ := os.Getwd()
	r.write("turn_context", codexTurnContext{TurnID: r.turn, RootTurnID: r.turn, Cwd: cwd, ApprovalPolicy: "on-request",
		Model: model, Summary: "none"})
}

// response records a model response of the running turn: its text, the
// tool call that ended it, and its usage. The token_count of a response
// that called a tool waits for the tool's output (toolOutput).
func (r *rollout) response(resp modelResponse) {
	if r == nil {
		return
	}
	if model := cmp.Or(resp.model, codexModel); model != r.model {
		r.turnContext(model) // Codex records a model change as a new turn context
	}
	if resp.text != "" {
		r.write("event_msg", map[string]any{"type": "item_completed", "thread_id": r.thread, "turn_id": r.turn,
			"item": map[string]any{"type": "AgentMessage", "id": "msg_" + strings.ReplaceAll(newUUID(), "-", "")[:16],
				"content": []map[string]any{{"type": "Text", "text": resp.text}}}})
	}
	if resp.tool != nil {
		r.toolCall(*resp.tool)
	}
	usage := newCodexUsage(resp.tokens)
	r.turnUsage.add(usage)
	r.threadUsage.add(usage)
	r.write("token_usage_record", codexUsageRecord{ThreadID: r.thread, TurnID: r.turn, SessionID: r.thread, RootTurnID: r.turn,
		ResponseID: "resp_" + strings.ReplaceAll(newUUID(), "-", "")[:16], Usage: usage, Turn: r.turnUsage, Thread: r.threadUsage})
	count := &codexTokenCount{Type: "token_count"}
	count.Info.Total, count.Info.Last, count.Info.ContextWindow = r.threadUsage, usage, codexContextWindow
	count.RateLimits.LimitID = "codex"
	r.count = count
	if resp.tool == nil {
		r.flushCount()
	}
}

// flushCount writes the token_count that waits, if one does.
func (r *rollout) flushCount() {
	if r == nil || r.count == nil {
		return
	}
	r.write("event_msg", r.count)
	r.count = nil
}

// toolCall records the tool call that ended a response: the shell
// (exec_command; sandbox_permissions "require_escalated" opens the
// approval prompt) or a file write (apply_patch).
func (r *rollout) toolCall(t toolCall) {
	r.call = "call_" + strings.ReplaceAll(newUUID(), "-", "")[:16]
	r.patch = t.name == "Write"
	if r.patch {
		path, _ := t.input["file_path"].(string)
		text, _ := t.input["content"].(string)
		patch := "*** Begin Patch\n*** Add File: " + path + "\n+" + strings.ReplaceAll(strings.TrimSuffix(text, "\n"), "\n", "\n+") + "\n*** End Patch\n"
		r.write("response_item", map[string]any{"type": "custom_tool_call", "status": "completed", "call_id": r.call,
			"name": "apply_patch", "input": patch})
		return
	}
	cmd, _ := t.input["command"].(string)
	params := map[string]any{"cmd": cmd}
	if t.permission {
		params = map[string]any{"cmd": cmd, "justification": "the script asked for it", "sandbox_permissions": "require_escalated"}
	}
	args, _ := json.Marshal(params)
	r.write("response_item", map[string]any{"type": "function_call", "name": "exec_command", "arguments": string(args),
		"call_id": r.call, "status": "completed"})
}

// toolOutput records the output of the last tool call, then its
// response's token_count.
func (r *rollout) toolOutput(out string) {
	if r == nil {
		return
	}
	typ := "function_call_output"
	if r.patch {
		typ = "custom_tool_call_output"
	}
	r.write("response_item", map[string]any{"type": typ, "call_id": r.call, "output": out})
	r.flushCount()
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
	r.toolOutput(out)
	if !yes {
		r.aborted()
	}
}

// completed records the end of a turn: its answer, or an error.
func (r *rollout) completed(answer string, errMsg string) {
	if r == nil {
		return
	}
	r.flushCount()
	p := map[string]any{"type": "task_complete", "turn_id": r.turn, "last_agent_message": answer}
	if errMsg != "" {
		p["last_agent_message"] = nil
		p["error"] = map[string]any{"message": errMsg, "codex_error_info": "other"}
	}
	r.write("event_msg", p)
}

// aborted records an interrupted turn. A response's token_count still
// waiting is written first: every token_usage_record has its token_count.
func (r *rollout) aborted() {
	if r == nil {
		return
	}
	r.flushCount()
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
