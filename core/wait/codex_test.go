package wait

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Records as Codex 0.169 writes them (trimmed to the fields that matter).
func rec(ts time.Time, typ string, payload map[string]any) string {
	b, _ := json.Marshal(map[string]any{"timestamp": ts.UTC().Format("2006-01-02T15:04:05.000Z"), "type": typ, "payload": payload})
	return string(b) + "\n"
}

func userMsg(ts time.Time, turn, text string) string {
	return rec(ts, "event_msg", map[string]any{"type": "item_completed", "thread_id": "th", "turn_id": turn,
		"item": map[string]any{"type": "UserMessage", "id": "u", "content": []map[string]any{{"type": "text", "text": text, "text_elements": []any{}}}}})
}

func started(ts time.Time, turn string) string {
	return rec(ts, "event_msg", map[string]any{"type": "task_started", "turn_id": turn})
}

func complete(ts time.Time, turn, answer string) string {
	return rec(ts, "event_msg", map[string]any{"type": "task_complete", "turn_id": turn, "last_agent_message": answer})
}

func completeErr(ts time.Time, turn, msg string) string {
	return rec(ts, "event_msg", map[string]any{"type": "task_complete", "turn_id": turn, "last_agent_message": nil,
		"error": map[string]any{"message": msg, "codex_error_info": "internal_server_error"}})
}

func aborted(ts time.Time, turn string) string {
	return rec(ts, "event_msg", map[string]any{"type": "turn_aborted", "turn_id": turn, "reason": "interrupted"})
}

func escalated(ts time.Time, call, cmd string) string {
	args, _ := json.Marshal(map[string]any{"cmd": cmd, "justification": "why", "sandbox_permissions": "require_escalated"})
	return rec(ts, "response_item", map[string]any{"type": "function_call", "name": "exec_command", "arguments": string(args), "call_id": call})
}

func callOutput(ts time.Time, call string) string {
	return rec(ts, "response_item", map[string]any{"type": "function_call_output", "call_id": call, "output": "ok"})
}

func meta(ts time.Time) string {
	return rec(ts, "session_meta", map[string]any{"id": "th", "cwd": "/w", "originator": "codex-tui", "cli_version": "0.169.0"})
}

func TestCodexRollout(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)
	sent := t0.Add(time.Minute) // when the source is made
	at := func(s int) time.Time { return sent.Add(time.Duration(s) * time.Second) }
	big := strings.Repeat("x", 1<<20)
	tests := []struct {
		name    string
		before  string // the file when the source is made ("" with fresh: no file)
		fresh   bool   // the file appears after the source is made
		after   string // what Codex writes after the prompt
		dialog  *bool
		done    bool
		answer  string
		err     error
		errText string
	}{
		{name: "answer of our turn", before: meta(t0),
			after: started(at(1), "t1") + userMsg(at(1), "t1", "q") + complete(at(2), "t1", " the answer\n"),
			done:  true, answer: "the answer"},
		{name: "Codex trims the prompt", before: meta(t0),
			after: userMsg(at(1), "t1", "q") + complete(at(2), "t1", "a"), done: true, answer: "a"},
		{name: "keys typed before Enter went with the prompt", before: meta(t0),
			after: userMsg(at(1), "t1", "qoperator") + complete(at(2), "t1", "a"), done: true, answer: "a"},
		{name: "the same text asked before is not our turn", before: meta(t0) + userMsg(t0, "t0", "q") + complete(t0, "t0", "old"),
			after: userMsg(at(1), "t1", "q"), done: false},
		{name: "the same text asked before; ours answers", before: meta(t0) + userMsg(t0, "t0", "q") + complete(t0, "t0", "old"),
			after: userMsg(at(1), "t1", "q") + complete(at(2), "t1", "new"), done: true, answer: "new"},
		{name: "a megabyte of history before the prompt", before: meta(t0) + userMsg(t0, "t0", big) + complete(t0, "t0", "old"),
			after: userMsg(at(1), "t1", "q") + complete(at(2), "t1", "a"), done: true, answer: "a"},
		{name: "the end of an earlier turn is not ours", before: meta(t0) + userMsg(t0, "t0", "earlier"),
			after: userMsg(at(1), "t1", "q") + complete(at(1), "t0", "earlier answer"), done: false},
		{name: "a completion with no prompt of ours", before: meta(t0),
			after: userMsg(at(1), "t1", "someone else") + complete(at(2), "t1", "x"), done: false},
		{name: "the last of several messages with our text", before: meta(t0),
			after: userMsg(at(1), "t1", "q") + userMsg(at(2), "t2", "q") + complete(at(3), "t2", "second"), done: true, answer: "second"},
		{name: "a steering message joins our turn", before: meta(t0),
			after: userMsg(at(1), "t1", "q") + userMsg(at(2), "t1", "also this") + complete(at(3), "t1", "both"), done: true, answer: "both"},
		{name: "HTTP 500 after the retries", before: meta(t0),
			after: userMsg(at(1), "t1", "q") + completeErr(at(25), "t1", "We’re currently experiencing high demand"),
			done:  true, err: ErrTurnFailed, errText: "high demand"},
		{name: "Esc", before: meta(t0),
			after: userMsg(at(1), "t1", "q") + aborted(at(2), "t1"), done: true, err: ErrInterrupted, errText: "interrupted"},
		{name: "an older Codex's error event", before: meta(t0),
			after: userMsg(at(1), "t1", "q") + rec(at(2), "event_msg", map[string]any{"type": "error", "message": "boom"}),
			done:  true, err: ErrTurnFailed, errText: "boom"},
		{name: "an older Codex's user_message and approval request", before: meta(t0),
			after: rec(at(1), "event_msg", map[string]any{"type": "user_message", "message": "q"}) +
				rec(at(2), "event_msg", map[string]any{"type": "exec_approval_request", "call_id": "c", "command": []string{"touch", "x"}}),
			done: true, err: ErrPermission},
		{name: "an escalated call with the prompt on screen", before: meta(t0), dialog: ptr(true),
			after: userMsg(at(1), "t1", "q") + escalated(at(2), "c1", "touch x"), done: true, err: ErrPermission, errText: "touch x"},
		{name: "an escalated call with no dialog on screen", before: meta(t0), dialog: ptr(false),
			after: userMsg(at(1), "t1", "q") + escalated(at(2), "c1", "touch x"), done: false},
		{name: "an escalated call that ran", before: meta(t0), dialog: ptr(true),
			after: userMsg(at(1), "t1", "q") + escalated(at(2), "c1", "touch x") + callOutput(at(3), "c1"), done: false},
		{name: "a file Codex creates at the first prompt", fresh: true,
			after: meta(at(1)) + userMsg(at(1), "t1", "q") + complete(at(2), "t1", "a"), done: true, answer: "a"},
		{name: "a file that appears later keeps its old turns (resume)", fresh: true,
			after: meta(t0) + userMsg(t0, "t0", "q") + complete(t0, "t0", "old"), done: false},
		{name: "a torn last line waits for its end", before: meta(t0),
			after: userMsg(at(1), "t1", "q") + complete(at(2), "t1", "a")[:20], done: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sessions", "2026", "11", "23", "rollout-2026-11-23T17-00-00-th.jsonl")
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			if !tc.fresh {
				require.NoError(t, os.WriteFile(path, []byte(tc.before), 0o644))
			}
			var files []string
			if !tc.fresh {
				files = []string{path}
			}
			now := sent
			src := NewCodexRollout("q", func() []string { return files }, func() time.Time { return now })
			if tc.dialog != nil {
				src.Dialog = func() bool { return *tc.dialog }
			}
			files = []string{path}
			f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			require.NoError(t, err)
			_, err = f.WriteString(tc.after)
			require.NoError(t, err)
			require.NoError(t, f.Close())

			res, done, err := src.Check()
			assert.Equal(t, tc.done, done, "done")
			assert.Equal(t, tc.answer, res.Answer)
			if tc.err == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tc.err)
				assert.Contains(t, err.Error(), tc.errText)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// A pending escalated call is a permission prompt after Grace when nothing
// can look at the screen; lines come in pieces across looks.
func TestCodexRolloutOverTime(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "rollout-x.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(meta(t0)), 0o644))
	now := t0
	src := NewCodexRollout("q", func() []string { return []string{path} }, func() time.Time { return now })
	write := func(s string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		_, err = f.WriteString(s)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	line := userMsg(t0.Add(time.Second), "t1", "q") + escalated(t0.Add(time.Second), "c1", "rm -rf build")
	write(line[:30])
	_, done, err := src.Check()
	require.False(t, done)
	require.NoError(t, err)
	write(line[30:])
	_, done, err = src.Check()
	require.False(t, done, "the call is not a prompt before Grace")
	require.NoError(t, err)
	now = now.Add(src.Grace)
	_, done, err = src.Check()
	assert.True(t, done)
	assert.ErrorIs(t, err, ErrPermission)
	assert.Contains(t, err.Error(), "rm -rf build")
}

// The title thread and other panes' threads are other files; only the one
// that carried our prompt counts once found.
func TestCodexRolloutOtherFiles(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	mine, other := filepath.Join(dir, "rollout-a.jsonl"), filepath.Join(dir, "rollout-b.jsonl")
	require.NoError(t, os.WriteFile(mine, []byte(meta(t0)), 0o644))
	require.NoError(t, os.WriteFile(other, []byte(meta(t0)), 0o644))
	src := NewCodexRollout("q", func() []string { return []string{other, mine} }, func() time.Time { return t0 })
	appendTo := func(path, s string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		_, err = f.WriteString(s)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	appendTo(other, userMsg(t0.Add(time.Second), "x1", "Generate a concise title for: q")+complete(t0.Add(time.Second), "x1", "Title"))
	appendTo(mine, userMsg(t0.Add(time.Second), "t1", "q"))
	_, done, err := src.Check()
	require.False(t, done)
	require.NoError(t, err)
	appendTo(other, userMsg(t0.Add(2*time.Second), "x2", "q")+complete(t0.Add(2*time.Second), "x2", "wrong"))
	appendTo(mine, complete(t0.Add(3*time.Second), "t1", "right"))
	res, done, err := src.Check()
	assert.True(t, done)
	assert.NoError(t, err)
	assert.Equal(t, "right", res.Answer)
}

func TestOpenRollouts(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc")
	}
	dir := filepath.Join(t.TempDir(), "sessions", "2026", "11", "23")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	path := filepath.Join(dir, "rollout-2026-11-23T17-00-00-th.jsonl")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	got := openRollouts(os.Getpid())
	assert.Contains(t, got, path)
}

func TestCodexWorking(t *testing.T) {
	at := time.Date(2026, 11, 26, 16, 0, 0, 0, time.UTC)
	// A long record after the turn started (a tool's output): the turn's
	// start is further back than the first read.
	big := rec(at, "response_item", map[string]any{"type": "function_call_output", "output": strings.Repeat("o", 300<<10)})
	quoted := userMsg(at, "t2", `{"type":"task_complete"} is what it writes`)
	tests := []struct {
		name  string
		files []string // contents
		want  bool
	}{
		{"no file", nil, false},
		{"empty", []string{""}, false},
		{"streaming", []string{started(at, "t1") + userMsg(at, "t1", "first task")}, true},
		{"done", []string{started(at, "t1") + complete(at, "t1", "a")}, false},
		{"aborted", []string{started(at, "t1") + aborted(at, "t1")}, false},
		{"the next turn", []string{started(at, "t1") + complete(at, "t1", "a") + started(at, "t2")}, true},
		{"past a long record", []string{started(at, "t1") + big + userMsg(at, "t1", "x")}, true},
		{"a message quoting a record", []string{started(at, "t2") + quoted}, true},
		{"a line still being written", []string{started(at, "t1") + `{"timestamp":"2026-11-26T16:00:00.000Z","type":"event_msg","payload":{"type":"task_comp`}, true},
		{"one of two files", []string{started(at, "t1") + complete(at, "t1", "a"), started(at, "t9")}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var files []string
			for i, c := range tt.files {
				p := filepath.Join(dir, "rollout-"+string(rune('a'+i))+".jsonl")
				require.NoError(t, os.WriteFile(p, []byte(c), 0o600))
				files = append(files, p)
			}
			assert.Equal(t, tt.want, CodexWorking(files))
		})
	}
}

// TestHookRunning: a process `party hook AGENT` under the agent's is its
// hook at work; another child is not.
func TestHookRunning(t *testing.T) {
	sh, err := exec.LookPath("sh")
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Symlink(sh, filepath.Join(dir, "party")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hook"), []byte("read line\n"), 0o600))
	start := func(argv0 string, args ...string) *exec.Cmd {
		// sh runs the script "hook", which waits on its stdin: its
		// command line is argv0 and args, as the agent started it.
		cmd := &exec.Cmd{Path: filepath.Join(dir, "party"), Args: append([]string{argv0}, args...), Dir: dir}
		in, err := cmd.StdinPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = in.Close(); _ = cmd.Wait() })
		return cmd
	}
	assert.False(t, HookRunning(os.Getpid()), "no hook yet")
	start(filepath.Join(dir, "party"), "hook", "claude")
	assert.True(t, HookRunning(os.Getpid()), "party hook claude runs under this process")
	assert.False(t, HookRunning(0))
}

func TestHookRunningIgnoresOtherChildren(t *testing.T) {
	cmd := exec.Command("sleep", "5")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	assert.False(t, HookRunning(os.Getpid()))
}

// TestCodexTook: a rollout took a prompt when a user message holds its
// mark (either record Codex writes for one); the echo of the mark in an
// answer is not that. The thread is the file's.
func TestCodexTook(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	const thread = "019a7b2c-3d4e-7f60-8a9b-0c1d2e3f4a5b"
	answered := filepath.Join(dir, "rollout-2026-11-23T17-00-00-"+thread+".jsonl")
	took := meta(t0) + started(t0, "t1") + userMsg(t0, "t1", "[BRIDGE_TRIGGER id=tr-1 thread=default]\ndeploy") + complete(t0, "t1", "ok")
	require.NoError(t, os.WriteFile(answered, []byte(took), 0o600))
	echoed := filepath.Join(dir, "rollout-2026-11-23T17-01-00-019a7b2c-3d4e-7f60-8a9b-000000000000.jsonl")
	require.NoError(t, os.WriteFile(echoed, []byte(meta(t0)+complete(t0, "t2", "I saw [BRIDGE_TRIGGER id=tr-2")), 0o600))
	legacy := filepath.Join(dir, "rollout-x.jsonl")
	require.NoError(t, os.WriteFile(legacy, []byte(rec(t0, "event_msg", map[string]any{"type": "user_message", "message": "[BRIDGE_TRIGGER id=tr-3 x]"})), 0o600))

	got, ok := CodexTook([]string{echoed, answered}, "[BRIDGE_TRIGGER id=tr-1 ")
	assert.True(t, ok)
	assert.Equal(t, thread, got)
	_, ok = CodexTook([]string{echoed, answered}, "[BRIDGE_TRIGGER id=tr-2")
	assert.False(t, ok, "an answer that quotes the mark is no user message")
	got, ok = CodexTook([]string{legacy}, "[BRIDGE_TRIGGER id=tr-3 ")
	assert.True(t, ok, "event_msg user_message")
	assert.Empty(t, got, "a file name without a thread id")
}
