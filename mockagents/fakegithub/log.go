package fakegithub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
)

// LogEntry is one line of the request log.
type LogEntry struct {
	Seq    int             `json:"seq"`
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body,omitempty"`
}

// ReadLog reads a request log.
func ReadLog(path string) ([]LogEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []LogEntry
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var e LogEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			return nil, fmt.Errorf("fakegithub log %s: %w", path, err)
		}
		out = append(out, e)
	}
	return out, nil
}

func (s *Server) logRequest(r *http.Request, body []byte, status int) {
	if s.logFile == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	e := LogEntry{Seq: s.seq, Method: r.Method, Path: r.URL.RequestURI(), Status: status}
	if len(body) > 0 {
		if json.Valid(body) {
			e.Body = json.RawMessage(body)
		} else {
			e.Body, _ = json.Marshal(string(body))
		}
	}
	line, err := json.Marshal(e)
	if err != nil {
		return
	}
	_, _ = s.logFile.Write(append(line, '\n'))
}
