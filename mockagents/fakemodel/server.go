package fakemodel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/partyhq/party/mockagents/mocklog"
	"github.com/partyhq/party/mockagents/script"
)

// Options configure a Server.
type Options struct {
	// ScriptPath is the answer script; it is read again when it changes.
	// Empty means the default answers.
	ScriptPath string
	// LogPath receives one JSON line per request (see the package doc).
	LogPath string
	// UsageLogPath, when set, receives one JSON line per answer that
	// carried token usage (UsageEntry): what each request got.
	UsageLogPath string
	// DumpDir, when set, receives every request body as a file, for
	// studying what an agent sends.
	DumpDir string
	// Addr is the address to listen on; default 127.0.0.1:0.
	Addr string
}

// Server is a running fake model.
type Server struct {
	opt  Options
	ln   net.Listener
	http *http.Server
	// ctx ends when the server closes: hanging streams return.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	script   *script.Script
	stamp    string // size and mtime of the script file last read
	scriptE  error
	seq      int
	pending  map[string]resume // tool call id -> the steps after it
	lastTool map[string]string // agent -> its last tool call id
	// unanswered are the user texts of each agent's turns that got no
	// answer (failed, crashed, hung), white space trimmed: the agent keeps
	// them in its history and sends them again before its next new text.
	unanswered map[string]map[string]bool
}

// resume is what a turn does once its tool's result comes back.
type resume struct {
	steps  []script.Step
	groups []string
	prompt string
	// tool names the tool a tool step called: its result is logged.
	tool string
}

// Start listens and serves in the background until Close.
func Start(opt Options) (*Server, error) {
	addr := opt.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fakemodel: listen: %w", err)
	}
	s := &Server{opt: opt, ln: ln, pending: map[string]resume{}, lastTool: map[string]string{}, unanswered: map[string]map[string]bool{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if _, err := s.loadScript(); err != nil {
		ln.Close()
		return nil, err
	}
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.http.Serve(ln) }() // returns ErrServerClosed once Close ran
	return s, nil
}

// URL is the server's base URL, http://127.0.0.1:PORT.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server; hanging streams end.
func (s *Server) Close() error {
	s.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.http.Close()
	}
	return err
}

// SetScript replaces the script with text.
func (s *Server) SetScript(text string) error {
	sc, err := script.Parse("script", text)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script, s.stamp, s.opt.ScriptPath = sc, "", ""
	return nil
}

// loadScript returns the script, reading the file again when it changed.
func (s *Server) loadScript() (*script.Script, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opt.ScriptPath == "" {
		return s.script, nil
	}
	st, err := os.Stat(s.opt.ScriptPath)
	if err != nil {
		return nil, fmt.Errorf("fakemodel: script: %w", err)
	}
	stamp := fmt.Sprint(st.Size(), st.ModTime().UnixNano())
	if stamp == s.stamp {
		return s.script, s.scriptE
	}
	s.stamp = stamp
	s.script, s.scriptE = script.Load(s.opt.ScriptPath)
	return s.script, s.scriptE
}

// request is what an API's decoder makes of one HTTP request.
type request struct {
	agent  string   // claude, codex, gemini
	texts  []string // the user's new texts, in order
	side   string   // why it is a side request, "" for a turn
	toolID string   // the tool call whose result this request carries
	// toolResult is that result's content as the agent sent it (its
	// text, or its JSON).
	toolResult string
	// namespaces are the tool namespaces the request offers (OpenAI).
	namespaces []string
	stream     bool
	model      string
	schema     json.RawMessage // the JSON schema a side request asks for
	cwd        string          // the agent's working directory, when its request says it (Claude)
	// queued are texts the user typed while a tool of the turn ran, which
	// the request brings with the tool's result (Claude's mid-turn note):
	// the turn goes on, then answers them.
	queued []string
}

// prompt is the text the script's rules match: the new texts together.
func (r request) prompt() string { return strings.Join(r.texts, "\n\n") }

// api is one wire protocol.
type api interface {
	// decode reads a request body.
	decode(body []byte, r *http.Request) (request, error)
	// sideAnswer writes the complete answer to a side request.
	sideAnswer(w http.ResponseWriter, req request, body []byte) answer
	// errorStatus writes an HTTP error answer in the API's shape.
	errorStatus(w http.ResponseWriter, status int, msg string)
	// open starts an answer carrying usage u; its methods write the
	// pieces.
	open(w http.ResponseWriter, req request, u script.Usage) answer
}

// answer writes one model answer, streaming or not.
type answer interface {
	text(s string) error
	tool(id, cmd string) error // ask for the shell tool; ends the answer
	// call asks for the tool name with the arguments input; ends the
	// answer.
	call(id, name string, input map[string]any) error
	end() error             // a normal end of the answer
	fail(kind string) error // an error event mid-stream
	// usage is the token usage and the model the answer carries (at its
	// end: the counts its wire format has, the others 0).
	usage() (script.Tokens, string)
}

// fileWriter is an answer that can ask for the agent's own file-writing
// tool (Claude's Write); ends the answer.
type fileWriter interface {
	write(id, path, text string) error
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch {
	case path == "/" && (r.Method == http.MethodHead || r.Method == http.MethodGet):
		w.WriteHeader(http.StatusOK)
		return
	case path == "/fakemodel/script" && r.Method == http.MethodPut:
		b, _ := io.ReadAll(r.Body)
		if err := s.SetScript(string(b)); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	case strings.HasSuffix(path, "/count_tokens") || strings.HasSuffix(path, ":countTokens"):
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(path, ":countTokens") {
			_, _ = io.WriteString(w, `{"totalTokens": 12}`)
		} else {
			_, _ = io.WriteString(w, `{"input_tokens": 12}`)
		}
		return
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/v1beta/models"):
		geminiModels(w, path)
		return
	}
	var a api
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/v1/messages"):
		a = anthropic{}
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		a = openai{}
	case r.Method == http.MethodPost && (strings.HasSuffix(path, ":streamGenerateContent") || strings.HasSuffix(path, ":generateContent")):
		a = gemini{}
	default:
		http.Error(w, "fakemodel: no such endpoint: "+r.Method+" "+path, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	s.serve(w, r, a, body)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, a api, body []byte) {
	req, err := a.decode(body, r)
	if err != nil {
		a.errorStatus(w, http.StatusBadRequest, "fakemodel: "+err.Error())
		return
	}
	req.texts = s.newTexts(req.agent, req.texts)
	seq, mode := s.record(req, body)
	if req.side != "" {
		s.returned(req.agent, seq, mode, a.sideAnswer(w, req, body))
		return
	}
	sc, err := s.loadScript()
	if err != nil {
		a.errorStatus(w, http.StatusInternalServerError, err.Error())
		return
	}
	var steps []script.Step
	var groups []string
	prompt := req.prompt()
	if req.toolID != "" {
		// A tool's result goes on with the turn that asked for it, unless
		// the user wrote something new with it (a declined tool): then
		// that turn is over and the new text is answered.
		if rs, ok := s.takePending(req.agent, req.toolID); ok && len(req.texts) == 0 {
			steps, groups, prompt = rs.steps, rs.groups, rs.prompt
			if rs.tool != "" {
				_ = mocklog.Append(s.opt.LogPath, mocklog.Entry{Agent: req.agent, Seq: seq, Mode: "tool_result",
					Text: rs.tool + " " + req.toolResult, Time: time.Now().UTC()})
			}
			// Then each text typed meanwhile, as its own prompt.
			steps = slices.Clone(steps)
			for _, q := range req.queued {
				more, qgroups := plan(sc, q)
				steps = append(append(steps, regroup(qgroups, q)), more...)
			}
		}
	}
	if steps == nil && len(req.texts) == 0 {
		for _, q := range req.queued {
			more, qgroups := plan(sc, q)
			steps = append(append(steps, regroup(qgroups, q)), more...)
		}
	}
	if steps == nil {
		if len(req.texts) == 0 {
			// A tool result with no turn waiting for it: say it is done.
			steps = []script.Step{{Kind: "say", Arg: "Done."}}
		} else {
			steps, groups = plan(sc, prompt)
		}
	}
	t := &turn{s: s, w: w, a: a, req: req, seq: seq, mode: mode, prompt: prompt, groups: groups, ctx: r.Context(),
		usage: script.ResponseUsage(steps)}
	defer func() {
		// Also when the step crashed the connection (a panic).
		s.answered(req.agent, req.texts, t.answered)
	}()
	t.run(steps)
}

// newTexts are the texts of a request that are new: a text of an earlier
// turn that got no answer is history, not new, when a later text follows
// it. Claude keeps such a turn's message in its history and sends the
// next text merged into it (one user message, a text block each, each but
// the last ending in a newline, as it sends texts queued during a turn),
// and a resumed session sends it again before the resume's prompt: the
// rules, which match what the user submitted now, must not see it again.
// The last text is always new (the agent sending a failed request again
// sends the same turn again).
func (s *Server) newTexts(agent string, texts []string) []string {
	if len(texts) < 2 {
		return texts
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.unanswered[agent]
	var out []string
	for i, text := range texts {
		if i < len(texts)-1 && old[strings.TrimSpace(text)] {
			continue
		}
		out = append(out, text)
	}
	return out
}

// answered notes whether agent's turn of texts got its answer: the texts
// of one that did not are history when they come again before a new one.
func (s *Server) answered(agent string, texts []string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unanswered[agent] == nil {
		s.unanswered[agent] = map[string]bool{}
	}
	for _, text := range texts {
		if ok {
			delete(s.unanswered[agent], strings.TrimSpace(text))
		} else {
			s.unanswered[agent][strings.TrimSpace(text)] = true
		}
	}
}

// plan is the script's steps for prompt; the default answer quotes the
// prompt and prints the marker when asked for one.
func plan(sc *script.Script, prompt string) ([]script.Step, []string) {
	steps, groups := sc.Plan(prompt)
	if !sc.Matches(prompt) {
		steps = append(steps, script.Step{Kind: "marker"})
	}
	return steps, groups
}

// turn runs a rule's steps as one answer.
type turn struct {
	s      *Server
	w      http.ResponseWriter
	a      api
	req    request
	seq    int
	mode   string // the request's mode in the log
	prompt string
	groups []string
	ctx    context.Context
	usage  script.Usage // the usage steps of the answer (script.ResponseUsage)

	ans      answer // nil until the first byte
	wrote    int    // text pieces written
	answered bool   // the answer ended normally, or asked for a tool
}

func (t *turn) begin() answer {
	if t.ans == nil {
		t.ans = t.a.open(t.w, t.req, t.usage)
	}
	return t.ans
}

func (t *turn) say(text string) error {
	if t.wrote > 0 {
		text = "\n" + text
	}
	t.wrote++
	return t.begin().text(text)
}

func (t *turn) run(steps []script.Step) {
	for i, st := range steps {
		var err error
		switch st.Kind {
		case "think":
			select {
			case <-time.After(st.Dur):
			case <-t.ctx.Done():
				return
			case <-t.s.ctx.Done():
				return
			}
		case "say":
			err = t.say(script.Expand(st.Arg, t.groups))
		case "echo":
			err = t.say(t.prompt)
		case "marker":
			if nonce, ok := script.MarkerNonce(t.prompt); ok {
				err = t.say("PARTY_DONE_" + nonce)
			}
		case "permission", "run":
			id := randomHex(8)
			t.s.addPending(t.req.agent, id, resume{steps: steps[i+1:], groups: t.groups, prompt: t.prompt})
			t.answered = t.begin().tool(id, script.Expand(st.Arg, t.groups)) == nil
			t.logUsage(t.answered)
			return
		case "tool":
			id := randomHex(8)
			name, input := st.ToolArgs(t.groups)
			t.s.addPending(t.req.agent, id, resume{steps: steps[i+1:], groups: t.groups, prompt: t.prompt, tool: name})
			t.answered = t.begin().call(id, name, input) == nil
			t.logUsage(t.answered)
			return
		case "fail":
			if n, perr := strconv.Atoi(st.Arg); perr == nil && n >= 100 && n <= 599 && t.ans == nil {
				t.a.errorStatus(t.w, n, fmt.Sprintf("fakemodel: scripted failure %d", n))
				return
			}
			_ = t.begin().fail(st.Arg)
			return
		case regroupKind:
			var rg regrouped
			_ = json.Unmarshal([]byte(st.Arg), &rg)
			t.groups, t.prompt = rg.Groups, rg.Prompt
		case "hang":
			t.begin()
			flush(t.w)
			select {
			case <-t.ctx.Done():
			case <-t.s.ctx.Done():
			}
			return
		case "crash":
			panic(http.ErrAbortHandler)
		case "write":
			// Claude edits through its Write tool, which wants an absolute
			// path: the script's is relative to the working directory its
			// system prompt names. The other agents write with their shell.
			fw, ok := t.begin().(fileWriter)
			if !ok || t.req.cwd == "" {
				err = t.say("[fakemodel: the write step is for mock agents and claude only]")
				break
			}
			path, text := st.WriteArgs(t.groups)
			if !filepath.IsAbs(path) {
				path = filepath.Join(t.req.cwd, path)
			}
			id := randomHex(8)
			t.s.addPending(t.req.agent, id, resume{steps: steps[i+1:], groups: t.groups, prompt: t.prompt})
			t.logUsage(fw.write(id, path, text) == nil)
			return
		}
		if err != nil {
			return
		}
	}
	t.answered = t.begin().end() == nil
	t.logUsage(t.answered)
}

// logUsage logs the usage the answer carried when it ended well (ok).
func (t *turn) logUsage(ok bool) {
	if ok {
		t.s.returned(t.req.agent, t.seq, t.mode, t.ans)
	}
}

// regroupKind is the fake model's own step between a turn's steps and
// those of a text queued meanwhile: the latter's regexp groups and prompt
// apply from there on.
const regroupKind = "fakemodel.regroup"

type regrouped struct {
	Groups []string `json:"groups"`
	Prompt string   `json:"prompt"`
}

func regroup(groups []string, prompt string) script.Step {
	b, _ := json.Marshal(regrouped{Groups: groups, Prompt: prompt})
	return script.Step{Kind: regroupKind, Arg: string(b)}
}

// record logs req and returns its request number and its mode in the
// log.
func (s *Server) record(req request, body []byte) (int, string) {
	s.mu.Lock()
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	if s.opt.DumpDir != "" {
		_ = os.MkdirAll(s.opt.DumpDir, 0o755)
		_ = os.WriteFile(filepath.Join(s.opt.DumpDir, fmt.Sprintf("%04d-%s.json", seq, req.agent)), body, 0o644)
	}
	mode := "submit"
	switch {
	case req.side != "":
		mode = "side"
	case len(req.texts) == 0:
		mode = "continue"
	}
	texts := req.texts
	if len(texts) == 0 {
		texts = []string{""}
	}
	now := time.Now().UTC()
	for _, text := range texts {
		_ = mocklog.Append(s.opt.LogPath, mocklog.Entry{Agent: req.agent, Seq: seq, Mode: mode, Text: text, Time: now})
	}
	for _, text := range req.queued {
		_ = mocklog.Append(s.opt.LogPath, mocklog.Entry{Agent: req.agent, Seq: seq, Mode: "queued", Text: text, Time: now})
	}
	return seq, mode
}

// addPending keeps the rest of a turn until its tool's result comes back.
func (s *Server) addPending(agent, id string, rs resume) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending[id] = rs
	s.lastTool[agent] = id
}

// takePending returns the rest of the turn whose tool call id is id. An
// agent that does not echo the call id (Gemini may not) gets its last one.
func (s *Server) takePending(agent, id string) (resume, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range []string{id, strings.TrimPrefix(id, "toolu_"), strings.TrimPrefix(id, "call_"), s.lastTool[agent]} {
		if rs, ok := s.pending[k]; ok {
			delete(s.pending, k)
			return rs, true
		}
	}
	return resume{}, false
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// sse writes one server-sent event and flushes it.
func sse(w http.ResponseWriter, event string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	if event != "" {
		if _, err := fmt.Fprintf(w, "event: %s\n", event); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
		return err
	}
	flush(w)
	return nil
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func sseHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
