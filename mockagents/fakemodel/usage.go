package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/partyhq/party/mockagents/script"
)

// UsageEntry is one line of the usage log: the token usage one answer
// carried, in the counts of a usage step (script.Tokens; those its wire
// format has no field for are 0), and the model it named.
type UsageEntry struct {
	Agent string `json:"agent"`
	// Seq and Mode are the request's in the request log: submit or
	// continue for the agent's conversation, side for a side request
	// (Claude's title, Codex's title thread, Gemini's router).
	Seq   int           `json:"seq"`
	Mode  string        `json:"mode"`
	Model string        `json:"model"`
	Usage script.Tokens `json:"usage"`
	Time  time.Time     `json:"time"`
}

// returned logs the usage a, the answer to request seq, carried.
func (s *Server) returned(agent string, seq int, mode string, a answer) {
	if s.opt.UsageLogPath == "" || a == nil {
		return
	}
	tok, model := a.usage()
	b, err := json.Marshal(UsageEntry{Agent: agent, Seq: seq, Mode: mode, Model: model, Usage: tok, Time: time.Now().UTC()})
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.OpenFile(s.opt.UsageLogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(append(b, '\n'))
}

// ReadUsage reads the usage log at path.
func ReadUsage(path string) ([]UsageEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []UsageEntry
	for n := 1; ; n++ {
		line, rest, whole := bytes.Cut(data, []byte{'\n'})
		if !whole {
			return out, nil
		}
		var e UsageEntry
		if err := json.Unmarshal(line, &e); err != nil {
			return out, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, e)
		data = rest
	}
}

// ConversationUsage sums the usage of agent's conversation answers in
// entries: every answer but those to side requests.
func ConversationUsage(entries []UsageEntry, agent string) script.Tokens {
	var sum script.Tokens
	for _, e := range entries {
		if e.Agent != agent || e.Mode == "side" {
			continue
		}
		sum.Input += e.Usage.Input
		sum.Output += e.Usage.Output
		sum.CacheRead += e.Usage.CacheRead
		sum.CacheWrite += e.Usage.CacheWrite
		sum.Reasoning += e.Usage.Reasoning
	}
	return sum
}
