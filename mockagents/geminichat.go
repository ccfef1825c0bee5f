package mockagents

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/partyhq/party/core/hook"
)

// geminiChat writes the mock gemini's chat file as Gemini CLI 0.61 does:
// ~/.gemini/tmp/<project>/chats/session-<start, to the minute>-<first 8
// of the session id>.jsonl, <project> being the working directory's name
// made a slug. Its first line is the session's metadata; then one JSON
// record a line: a user record per prompt, and per model response a
// "gemini" record {id, timestamp, type, content, thoughts, tokens {input,
// output, cached, thoughts, tool, total}, model}, each followed by a
// {"$set": {"lastUpdated"}} line. A response that called a tool is written
// again, the same id, with its toolCalls once the tool's result is in,
// then the result as a user record (a reader must take a record id once).
// The hooks name it as transcript_path. Only gemini has one (a nil one
// writes nothing). Used from the run loop only.
type geminiChat struct {
	session string
	// call is the gemini record of the response whose tool call awaits
	// its result, with the call.
	call     *geminiRecord
	callID   string
	callName string
	callArgs map[string]any
}

// geminiModel is the mock gemini's model, when no usage step names one.
const geminiModel = "gemini-mock"

// geminiTokens are a response's tokens as Gemini CLI 0.61 records them
// (the fields in its order): the input counts the cached input, the
// total counts the thoughts.
type geminiTokens struct {
	Input    int64 `json:"input"`
	Output   int64 `json:"output"`
	Cached   int64 `json:"cached"`
	Thoughts int64 `json:"thoughts"`
	Tool     int64 `json:"tool"`
	Total    int64 `json:"total"`
}

func newGeminiChat(session string) *geminiChat { return &geminiChat{session: session} }

// geminiChats are the chat files this mock named, by directory and
// session: the hooks name one before it exists, and it must be the one
// then made.
var geminiChats = struct {
	sync.Mutex
	paths map[string]string
}{paths: map[string]string{}}

var slugRun = regexp.MustCompile(`[^a-z0-9]+`)

// geminiProject is the working directory's name as Gemini CLI 0.61 makes
// it the project's directory name under tmp/ (a name it already gave
// another directory gets -1, -2, …: the mock does not keep that registry).
func geminiProject() string {
	cwd, _ := os.Getwd()
	slug := strings.Trim(slugRun.ReplaceAllString(strings.ToLower(filepath.Base(cwd)), "-"), "-")
	return cmp.Or(slug, "project")
}

// geminiChatPath is the chat file of session: the one there is (a resumed
// session's), else the one a new session makes now.
func geminiChatPath(session string) string {
	dir := filepath.Join(hook.GeminiHome(os.Getenv), ".gemini", "tmp", geminiProject(), "chats")
	key := filepath.Join(dir, session)
	geminiChats.Lock()
	defer geminiChats.Unlock()
	if p, ok := geminiChats.paths[key]; ok {
		return p
	}
	short := session[:min(8, len(session))]
	found, _ := filepath.Glob(filepath.Join(dir, "session-*-"+short+".jsonl"))
	p := filepath.Join(dir, "session-"+time.Now().UTC().Format("2006-01-02T15-04")+"-"+short+".jsonl")
	if len(found) > 0 {
		p = found[len(found)-1]
	}
	geminiChats.paths[key] = p
	return p
}

// append writes records, making the file (its metadata first) when
// there is none.
func (c *geminiChat) append(records ...any) {
	if c == nil {
		return
	}
	path := geminiChatPath(c.session)
	if os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() == 0 {
		cwd, _ := os.Getwd()
		sum := sha256.Sum256([]byte(cwd))
		now := geminiNow()
		records = append([]any{struct {
			SessionID   string `json:"sessionId"`
			ProjectHash string `json:"projectHash"`
			StartTime   string `json:"startTime"`
			LastUpdated string `json:"lastUpdated"`
			Kind        string `json:"kind"`
		}{c.session, hex.EncodeToString(sum[:]), now, now, "main"}}, records...)
	}
	for _, r := range records {
		b, _ := json.Marshal(r)
		_, _ = f.Write(append(b, '\n'))
	}
}

func geminiNow() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

func lastUpdated() map[string]any {
	return map[string]any{"$set": map[string]any{"lastUpdated": geminiNow()}}
}

// user records the prompts sent to the model.
func (c *geminiChat) user(msgs []string) {
	for _, m := range msgs {
		c.append(&geminiRecord{ID: newUUID(), Timestamp: geminiNow(), Type: "user", Content: []map[string]string{{"text": m}}},
			lastUpdated())
	}
}

// response records a model response; one that called a tool waits for
// the tool's result (toolResult) to be written again with it.
func (c *geminiChat) response(r modelResponse) {
	if c == nil {
		return
	}
	t := r.tokens
	rec := &geminiRecord{ID: newUUID(), Timestamp: geminiNow(), Type: "gemini", Content: r.text, Thoughts: json.RawMessage("[]"),
		Tokens: &geminiTokens{Input: t.Input, Output: t.Output, Cached: t.CacheRead, Thoughts: t.Reasoning, Total: t.Input + t.Output + t.Reasoning},
		Model:  cmp.Or(r.model, geminiModel)}
	c.append(rec, lastUpdated())
	c.call = nil
	if r.tool == nil {
		return
	}
	c.call, c.callName, c.callArgs = rec, "run_shell_command", map[string]any{"command": r.tool.input["command"], "description": r.tool.input["description"]}
	if r.tool.name == "Write" {
		c.callName, c.callArgs = "write_file", map[string]any{"file_path": r.tool.input["file_path"], "content": r.tool.input["content"]}
	}
	c.callID = c.callName + "__" + strings.ReplaceAll(newUUID(), "-", "")[:16]
}

// geminiRecord is a record of the chat file (Gemini CLI 0.61's fields in
// its order).
type geminiRecord struct {
	ID        string           `json:"id"`
	Timestamp string           `json:"timestamp"`
	Type      string           `json:"type"`
	Content   any              `json:"content"`
	Thoughts  json.RawMessage  `json:"thoughts,omitempty"` // [] on a gemini record
	Tokens    *geminiTokens    `json:"tokens,omitempty"`
	Model     string           `json:"model,omitempty"`
	ToolCalls []map[string]any `json:"toolCalls,omitempty"`
}

// toolResult records the result of the tool call the last response made:
// that response again with its toolCalls, then the result the model gets.
func (c *geminiChat) toolResult(out string) {
	if c == nil || c.call == nil {
		return
	}
	result := []map[string]any{{"functionResponse": map[string]any{"id": c.callID, "name": c.callName, "response": map[string]any{"output": out}}}}
	rec := c.call
	rec.ToolCalls = []map[string]any{{"id": c.callID, "name": c.callName, "args": c.callArgs, "result": result,
		"status": "success", "timestamp": geminiNow()}}
	c.append(rec, &geminiRecord{ID: newUUID(), Timestamp: geminiNow(), Type: "user", Content: result}, lastUpdated())
	c.call = nil
}
