package spend

import (
	"encoding/json"
	"time"

	"github.com/partyhq/party/core/agent"
)

// Tokens are the tokens of one or more model responses.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	Reasoning  int64 `json:"reasoning"`
}

// Add adds t to s.
func (s *Tokens) Add(t Tokens) {
	s.Input += t.Input
	s.Output += t.Output
	s.CacheRead += t.CacheRead
	s.CacheWrite += t.CacheWrite
	s.Reasoning += t.Reasoning
}

// Total is every token of s.
func (s Tokens) Total() int64 {
	return s.Input + s.Output + s.CacheRead + s.CacheWrite + s.Reasoning
}

// Response is one model response of an agent, as its record kept it.
type Response struct {
	Time time.Time `json:"time"`
	// Team is the party session the agent worked in (filled in when
	// teams are summed, not kept in a team's own ledger); Role its role.
	Team  string     `json:"team,omitempty"`
	Role  string     `json:"role"`
	Agent agent.Kind `json:"agent"`
	// Session is the agent's own session (Claude's and Gemini's session,
	// Codex's thread); ID the response's id in it (Claude's message id,
	// Codex's response id, Gemini's record id).
	Session string `json:"session_id"`
	ID      string `json:"id"`
	Model   string `json:"model,omitempty"`
	// More says the response asked for a tool: the turn goes on after it
	// (Claude's stop_reason tool_use; the others record a turn's
	// responses before its end).
	More bool `json:"more,omitempty"`
	// Count is how many responses this one stands for, when it is a sum
	// of them (Ledger.Sums); 0 is one.
	Count int `json:"-"`
	Tokens
}

// n is how many responses r stands for.
func (r Response) n() int { return max(r.Count, 1) }

// File is what parsing one record file needs of its earlier lines.
type File struct {
	Agent agent.Kind `json:"agent"`
	// Model is the model Codex's last turn_context named; Session the
	// session Gemini's first line named.
	Model   string `json:"model,omitempty"`
	Session string `json:"session,omitempty"`
}

// Parse reads one line of f's record; ok says it carried a response's
// usage. A line that is not JSON, or not of a shape that carries usage,
// is not one (a line the agent is still writing is never passed).
func (f *File) Parse(line []byte) (r Response, ok bool) {
	switch f.Agent {
	case agent.Claude:
		return parseClaude(line)
	case agent.Codex:
		return f.parseCodex(line)
	case agent.Gemini:
		return f.parseGemini(line)
	}
	return r, false
}

func parseClaude(line []byte) (Response, bool) {
	var e struct {
		Type      string    `json:"type"`
		Timestamp time.Time `json:"timestamp"`
		SessionID string    `json:"sessionId"`
		Message   struct {
			ID         string `json:"id"`
			Model      string `json:"model"`
			StopReason string `json:"stop_reason"`
			Usage      *struct {
				Input      int64 `json:"input_tokens"`
				CacheWrite int64 `json:"cache_creation_input_tokens"`
				CacheRead  int64 `json:"cache_read_input_tokens"`
				Output     int64 `json:"output_tokens"`
			} `json:"usage"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &e) != nil || e.Type != "assistant" || e.Message.Usage == nil || e.Message.ID == "" ||
		e.Message.Model == "<synthetic>" { // an error Claude wrote itself, no model's
		return Response{}, false
	}
	u := e.Message.Usage
	return Response{Time: e.Timestamp, Agent: agent.Claude, Session: e.SessionID, ID: e.Message.ID, Model: e.Message.Model,
		More: e.Message.StopReason == "tool_use", Tokens: Tokens{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}}, true
}

func (f *File) parseCodex(line []byte) (Response, bool) {
	var e struct {
		Type      string          `json:"type"`
		Timestamp time.Time       `json:"timestamp"`
		Payload   json.RawMessage `json:"payload"`
	}
	if json.Unmarshal(line, &e) != nil {
		return Response{}, false
	}
	switch e.Type {
	case "turn_context":
		var p struct {
			Model string `json:"model"`
		}
		if json.Unmarshal(e.Payload, &p) == nil && p.Model != "" {
			f.Model = p.Model
		}
	case "token_usage_record":
		var p struct {
			Thread   string `json:"thread_id"`
			Response string `json:"response_id"`
			Usage    *struct {
				Input      int64 `json:"input_tokens"`
				Cached     int64 `json:"cached_input_tokens"`
				CacheWrite int64 `json:"cache_write_input_tokens"`
				Output     int64 `json:"output_tokens"`
				Reasoning  int64 `json:"reasoning_output_tokens"`
			} `json:"usage"`
		}
		if json.Unmarshal(e.Payload, &p) != nil || p.Usage == nil || p.Response == "" {
			return Response{}, false
		}
		u := p.Usage
		// Codex's input counts the cached part, its output the reasoning.
		return Response{Time: e.Timestamp, Agent: agent.Codex, Session: p.Thread, ID: p.Response, Model: f.Model,
			Tokens: Tokens{Input: u.Input - u.Cached - u.CacheWrite, Output: u.Output - u.Reasoning, CacheRead: u.Cached,
				CacheWrite: u.CacheWrite, Reasoning: u.Reasoning}}, true
	}
	return Response{}, false
}

func (f *File) parseGemini(line []byte) (Response, bool) {
	var e struct {
		SessionID string    `json:"sessionId"`
		ID        string    `json:"id"`
		Timestamp time.Time `json:"timestamp"`
		Type      string    `json:"type"`
		Model     string    `json:"model"`
		Tokens    *struct {
			Input    int64 `json:"input"`
			Output   int64 `json:"output"`
			Cached   int64 `json:"cached"`
			Thoughts int64 `json:"thoughts"`
			Tool     int64 `json:"tool"`
		} `json:"tokens"`
	}
	if json.Unmarshal(line, &e) != nil {
		return Response{}, false
	}
	if e.SessionID != "" && e.Type == "" {
		f.Session = e.SessionID // the file's first line
	}
	if e.Type != "gemini" || e.Tokens == nil || e.ID == "" {
		return Response{}, false
	}
	t := e.Tokens
	// Gemini's input counts the cached part; its tool-use prompt is input too.
	return Response{Time: e.Timestamp, Agent: agent.Gemini, Session: f.Session, ID: e.ID, Model: e.Model,
		Tokens: Tokens{Input: t.Input - t.Cached + t.Tool, Output: t.Output, CacheRead: t.Cached, Reasoning: t.Thoughts}}, true
}
