package wait

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// CodexRollout is the Source of a Codex turn: the rollout transcript
// Codex writes for its thread, $CODEX_HOME/sessions/YYYY/MM/DD/
// rollout-<ts>-<thread>.jsonl, one JSON record per line. Unlike notify it
// has no size limit (notify passes every user message of the thread as one
// argv string and fails with E2BIG past 128 KiB), it tells one turn from
// another by its turn_id, and it records how a turn ended when notify is
// silent (errors, interrupts).
//
// Which file: Files lists the rollout files that may hold the pane's
// thread (CodexRolloutFiles: those its processes hold open). A file known
// when the source was made is read from its size then; a file that appears
// later (Codex creates it at the first prompt, or on /new) is read from
// its start, counting only user messages stamped after the source was
// made. The turn is the one whose user message equals the prompt (Codex
// trims it); when several do, the last one seen is ours.
//
// What ends it (Codex 0.169's records, measured):
//
//   - event_msg task_complete {turn_id, last_agent_message}: the answer;
//     with error {message} (HTTP 5xx after retries, response.failed) an
//     error wrapping ErrTurnFailed.
//   - event_msg turn_aborted {turn_id, reason}: ErrInterrupted (Esc, or a
//     declined approval).
//   - event_msg error {message} (older Codex): ErrTurnFailed.
//   - event_msg exec_approval_request, apply_patch_approval_request,
//     request_permissions (older Codex, not persisted by 0.169):
//     ErrPermission.
//   - response_item function_call whose arguments ask
//     sandbox_permissions "require_escalated", with no function_call_output
//     for its call_id yet: Codex shows its approval prompt. ErrPermission
//     once Dialog confirms it (the screen shows the prompt), or, without
//     Dialog, once it has been pending for Grace.
//
// stream_error records (a retry notice; 0.169 does not persist them) do
// not end the turn: the task_complete with error after the last retry does.
type CodexRollout struct {
	// Dialog, when set, says whether the pane shows a dialog now: a
	// pending escalated call is a permission prompt only then.
	Dialog func() bool
	// Grace is how long an escalated call must stay pending when there is
	// no Dialog (a command approved for the session runs without a prompt).
	Grace time.Duration

	prompt string
	since  time.Time
	files  func() []string
	now    func() time.Time
	start  map[string]int64 // sizes when the source was made
	open   map[string]*rolloutReader
	bound  *rolloutReader // the file that carried the prompt
}

// NewCodexRollout returns the source of the turn that prompt starts,
// noting where each of files() stands now. Make it before the prompt is
// sent.
func NewCodexRollout(prompt string, files func() []string, now func() time.Time) *CodexRollout {
	return CodexRolloutFrom(prompt, files, now, now(), CodexMarks(files))
}

// CodexMarks are the sizes of files() now: where a CodexRollout made
// later for a prompt sent after now starts reading (CodexRolloutFrom).
func CodexMarks(files func() []string) map[string]int64 {
	marks := map[string]int64{}
	for _, f := range files() {
		if st, err := os.Stat(f); err == nil {
			marks[f] = st.Size()
		}
	}
	return marks
}

// CodexRolloutFrom is the source of the turn that prompt started, sent
// after since, when the files stood at marks (CodexMarks): a wait taken
// up again after a restart.
func CodexRolloutFrom(prompt string, files func() []string, now func() time.Time, since time.Time, marks map[string]int64) *CodexRollout {
	c := &CodexRollout{prompt: prompt, since: since, files: files, now: now, Grace: 2 * time.Second,
		start: map[string]int64{}, open: map[string]*rolloutReader{}}
	for f, size := range marks {
		c.start[f] = size
	}
	return c
}

// Check reads what the files gained since the last look.
func (c *CodexRollout) Check() (Result, bool, error) {
	readers := []*rolloutReader{c.bound}
	if c.bound == nil {
		readers = readers[:0]
		for _, f := range c.files() {
			r, ok := c.open[f]
			if !ok {
				r = &rolloutReader{path: f, turn: codexTurn{prompt: c.prompt}}
				if size, known := c.start[f]; known {
					r.offset = size
				} else {
					r.turn.since = c.since
				}
				c.open[f] = r
			}
			readers = append(readers, r)
		}
	}
	now := c.now()
	for _, r := range readers {
		recs, err := r.read()
		if err != nil {
			continue // the file went away (rotated, or the pane moved on)
		}
		for _, rec := range recs {
			if res, done, err := r.turn.see(rec, now); done || err != nil {
				return res, true, err
			}
		}
		if r.turn.mine {
			c.bound = r
		}
		if msg, ok := r.turn.asking(now, c.Grace, c.Dialog); ok {
			return Result{}, true, fmt.Errorf("%s: %w", msg, ErrPermission)
		}
	}
	return Result{}, false, nil
}

// RolloutThread is the thread id in a rollout file's name,
// rollout-<time>-<thread uuid>.jsonl, or "".
func RolloutThread(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if len(name) < 36 {
		return ""
	}
	id := name[len(name)-36:]
	for i, r := range id {
		dash := i == 8 || i == 13 || i == 18 || i == 23
		if dash != (r == '-') || !dash && !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return ""
		}
	}
	return id
}

// CodexTook says whether one of Codex's rollout files records a user
// message whose text holds mark, and the thread (Codex's session) of the
// file that does.
func CodexTook(files []string, mark string) (thread string, ok bool) {
	for _, f := range files {
		if rolloutHasUserMessage(f, mark) {
			return RolloutThread(f), true
		}
	}
	return "", false
}

// rolloutHasUserMessage says whether the rollout file at path has a user
// message record (userText) whose text holds mark. Only the lines that
// hold mark are decoded: a rollout grows to megabytes.
func rolloutHasUserMessage(path, mark string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if bytes.Contains(line, []byte(mark)) {
			var rec rolloutRecord
			if json.Unmarshal(line, &rec) == nil {
				if text, ok := userText(rec); ok && strings.Contains(text, mark) {
					return true
				}
			}
		}
		if err != nil {
			return false
		}
	}
}

// rolloutReader follows one rollout file from an offset, line by line. from an offset, line by line.
type rolloutReader struct {
	path    string
	offset  int64
	partial []byte // a line not yet ended by a newline
	turn    codexTurn
}

func (r *rolloutReader) read() ([]rolloutRecord, error) {
	f, err := os.Open(r.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(r.offset, io.SeekStart); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	r.offset += int64(len(b))
	b = append(r.partial, b...)
	end := bytes.LastIndexByte(b, '\n')
	r.partial = append([]byte(nil), b[end+1:]...)
	var recs []rolloutRecord
	for _, line := range bytes.Split(b[:end+1], []byte("\n")) {
		var rec rolloutRecord
		if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &rec) != nil {
			continue
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// rolloutRecord is one line of a rollout file: {timestamp, type, payload}.
type rolloutRecord struct {
	Time    time.Time      `json:"timestamp"`
	Type    string         `json:"type"` // session_meta, event_msg, response_item, turn_context…
	Payload rolloutPayload `json:"payload"`
}

// rolloutPayload holds the payload fields the turn needs, of every record
// type it reads.
type rolloutPayload struct {
	Type   string `json:"type"`
	TurnID string `json:"turn_id"`
	// task_complete
	LastAgentMessage *string         `json:"last_agent_message"`
	Error            json.RawMessage `json:"error"` // {message, codex_error_info}
	// turn_aborted
	Reason string `json:"reason"`
	// user_message, error (older Codex)
	Message string `json:"message"`
	// item_completed
	Item *struct {
		Type    string `json:"type"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"item"`
	// exec_approval_request
	Command json.RawMessage `json:"command"`
	// response_item function_call, function_call_output
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
}

// codexTurn follows the records of one file for the turn of prompt.
type codexTurn struct {
	prompt  string
	since   time.Time // user messages before this are not ours (zero: all are)
	mine    bool
	turnID  string
	pending map[string]pendingCall // escalated calls without output, by call_id
}

type pendingCall struct {
	what string
	seen time.Time
}

// userText is the text of a user message record, and whether rec is one.
func userText(rec rolloutRecord) (string, bool) {
	p := rec.Payload
	switch {
	case rec.Type != "event_msg":
	case p.Type == "user_message":
		return p.Message, true
	case p.Type == "item_completed" && p.Item != nil && p.Item.Type == "UserMessage":
		var parts []string
		for _, c := range p.Item.Content {
			if c.Type == "text" {
				parts = append(parts, c.Text)
			}
		}
		return strings.Join(parts, "\n"), true
	}
	return "", false
}

// ours says whether a record of turn id belongs to our turn.
func (t *codexTurn) ours(id string) bool {
	return t.mine && (t.turnID == "" || id == "" || id == t.turnID)
}

func (t *codexTurn) see(rec rolloutRecord, now time.Time) (Result, bool, error) {
	p := rec.Payload
	if text, ok := userText(rec); ok {
		if samePrompt(strings.ReplaceAll(text, "\r\n", "\n"), strings.ReplaceAll(t.prompt, "\r\n", "\n")) &&
			(t.since.IsZero() || !rec.Time.Before(t.since)) {
			t.mine, t.turnID, t.pending = true, p.TurnID, nil
		}
		return Result{}, false, nil
	}
	switch rec.Type {
	case "event_msg":
		if !t.ours(p.TurnID) {
			return Result{}, false, nil
		}
		switch p.Type {
		case "task_complete":
			if msg, failed := errorMessage(p.Error); failed {
				return Result{}, true, fmt.Errorf("codex: %s: %w", msg, ErrTurnFailed)
			}
			answer := ""
			if p.LastAgentMessage != nil {
				answer = strings.TrimSpace(*p.LastAgentMessage)
			}
			// Via stays "hook": the transcript is how party's hook wiring of
			// Codex answers (--json's via is hook or marker).
			return Result{Answer: answer, Via: "hook"}, true, nil
		case "turn_aborted":
			return Result{}, true, fmt.Errorf("codex: turn aborted (%s): %w", orUnknown(p.Reason), ErrInterrupted)
		case "error":
			return Result{}, true, fmt.Errorf("codex: %s: %w", p.Message, ErrTurnFailed)
		case "exec_approval_request", "apply_patch_approval_request", "request_permissions":
			return Result{}, true, fmt.Errorf("codex asks permission (%s): %w", p.Type, ErrPermission)
		}
	case "response_item":
		if !t.mine {
			return Result{}, false, nil
		}
		switch p.Type {
		case "function_call":
			var args struct {
				Cmd         any    `json:"cmd"`
				Command     any    `json:"command"`
				Permissions string `json:"sandbox_permissions"`
			}
			if json.Unmarshal([]byte(p.Arguments), &args) == nil && args.Permissions == "require_escalated" {
				if t.pending == nil {
					t.pending = map[string]pendingCall{}
				}
				cmd := args.Cmd
				if cmd == nil {
					cmd = args.Command
				}
				t.pending[p.CallID] = pendingCall{what: fmt.Sprintf("codex asks permission to run %v", cmd), seen: now}
			}
		case "function_call_output", "custom_tool_call_output":
			delete(t.pending, p.CallID)
		}
	}
	return Result{}, false, nil
}

// asking reports a permission prompt: an escalated call still pending,
// confirmed by dialog, or pending for grace without one.
func (t *codexTurn) asking(now time.Time, grace time.Duration, dialog func() bool) (string, bool) {
	for _, c := range t.pending {
		if dialog != nil && dialog() || dialog == nil && now.Sub(c.seen) >= grace {
			return c.what, true
		}
	}
	return "", false
}

// errorMessage reads task_complete's error: an object with a message, or a
// string; null or absent is no error.
func errorMessage(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	var e struct {
		Message string `json:"message"`
		Info    any    `json:"codex_error_info"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		return e.Message, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return s, true
	}
	return string(raw), true
}

// CodexRolloutFiles returns the lister of the rollout files of the Codex
// running in the pane whose process is pid: on Linux, the rollout-*.jsonl
// files under a sessions directory that pid or one of its descendants
// holds open (Codex keeps its thread's file open while it runs; the title
// thread has none). Where /proc is missing it falls back to the rollout
// files of today and yesterday under codexHome/sessions, newest first: the
// prompt and its time then pick the file.
func CodexRolloutFiles(pid int, codexHome string, now func() time.Time) func() []string {
	if _, err := os.Stat("/proc/self/fd"); err != nil || pid <= 0 {
		return func() []string { return recentRollouts(codexHome, now()) }
	}
	return func() []string { return openRollouts(pid) }
}

// openRollouts lists the rollout files open in pid and its descendants.
func openRollouts(pid int) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range processTree(pid) {
		fds, _ := os.ReadDir(filepath.Join("/proc", strconv.Itoa(p), "fd"))
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(p), "fd", fd.Name()))
			if err != nil || seen[target] || !isRollout(target) {
				continue
			}
			seen[target] = true
			out = append(out, target)
		}
	}
	return out
}

func isRollout(path string) bool {
	base := filepath.Base(path)
	return strings.HasPrefix(base, "rollout-") && strings.HasSuffix(base, ".jsonl") &&
		strings.Contains(filepath.ToSlash(path), "/sessions/")
}

// processTree returns pid and its descendants, read from /proc/*/stat.
// HookRunning says whether a hook party installed (party hook AGENT, as
// hook.IsPartyCommand reads it) runs under the agent of process pid: the
// agent took a prompt and runs its submit hook (Claude's UserPromptSubmit,
// Gemini's BeforeAgent) before it clears its box and reads further keys.
func HookRunning(pid int) bool {
	if pid <= 0 {
		return false
	}
	for _, p := range processTree(pid)[1:] {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "cmdline"))
		if err != nil {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(argv) >= 2 && filepath.Base(argv[0]) == "party" && argv[1] == "hook" {
			return true
		}
	}
	return false
}

func processTree(pid int) []int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		if pp, err := strconv.Atoi(f[1]); err == nil {
			parent[n] = pp
		}
	}
	tree := []int{pid}
	for i := 0; i < len(tree); i++ {
		for c, pp := range parent {
			if pp == tree[i] {
				tree = append(tree, c)
			}
		}
	}
	return tree
}

// recentRollouts lists the rollout files of the date directories of t and
// the day before.
func recentRollouts(codexHome string, t time.Time) []string {
	var out []string
	for _, day := range []time.Time{t, t.AddDate(0, 0, -1)} {
		dir := filepath.Join(codexHome, "sessions", day.Format("2006"), day.Format("01"), day.Format("02"))
		m, _ := filepath.Glob(filepath.Join(dir, "rollout-*.jsonl"))
		out = append(out, m...)
	}
	return out
}

// CodexWorking says whether a Codex whose rollout files are files is in a
// turn: the last task_started of one has no task_complete nor
// turn_aborted after it. Codex shows no busy line while an answer streams
// (only the text, line by line), where an Enter would steer the running
// turn (the request starts over with both texts and the answer so far is
// lost); its rollout says the turn runs (measured on 0.169).
func CodexWorking(files []string) bool {
	for _, f := range files {
		if kind, ok := lastTurnRecord(f); ok && kind == "task_started" {
			return true
		}
	}
	return false
}

// turnRecords are the rollout records that start and end a turn.
var turnRecords = [][]byte{[]byte(`"type":"task_started"`), []byte(`"type":"task_complete"`), []byte(`"type":"turn_aborted"`)}

// lastTurnRecord is the kind of the last record of the rollout file at
// path that starts or ends a turn, read back from its end: 64 KiB first,
// four times as much each time none is there (a long tool output).
func lastTurnRecord(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", false
	}
	size := st.Size()
	for n := min(size, 64<<10); n > 0; n = min(size, n*4) {
		tail := make([]byte, n)
		if _, err := f.ReadAt(tail, size-n); err != nil {
			return "", false
		}
		if n < size {
			// The first line may be cut: from the next one.
			if i := bytes.IndexByte(tail, '\n'); i >= 0 {
				tail = tail[i+1:]
			} else {
				tail = nil
			}
		}
		lines := bytes.Split(tail, []byte("\n"))
		for i := len(lines) - 1; i >= 0; i-- {
			if !slices.ContainsFunc(turnRecords, func(t []byte) bool { return bytes.Contains(lines[i], t) }) {
				continue
			}
			var rec rolloutRecord
			if json.Unmarshal(lines[i], &rec) == nil && rec.Type == "event_msg" {
				switch rec.Payload.Type {
				case "task_started", "task_complete", "turn_aborted":
					return rec.Payload.Type, true
				}
			}
		}
		if n == size {
			break
		}
	}
	return "", false
}
