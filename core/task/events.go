package task

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/partyhq/party/core/roles"
)

// ReadEvents reads an audit log (events.jsonl), oldest first. Blank lines
// and a last line without its newline (an append a crash cut short) are
// skipped; any other line that does not parse is ErrCorrupt with its path
// and line number. A missing log has no events.
func ReadEvents(path string) ([]Event, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if i := bytes.LastIndexByte(b, '\n'); i < len(b)-1 {
		b = b[:i+1] // a torn last append
	}
	var out []Event
	for n, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("%s:%d: %v: %w", path, n+1, err, ErrCorrupt)
		}
		out = append(out, e)
	}
	return out, nil
}

// OfTask says whether e belongs to task id's trail (id "": every event
// does).
func (e Event) OfTask(id string) bool {
	return id == "" || e.ID == id && (e.Event == "task_added" || e.Event == "task_updated" || e.Event == "doc_updated")
}

// CheckRole checks an actor or an assignee: a role as party names panes
// (roles.ValidRole), so it fits a GitHub label and a comment line as it
// is, with no spaces, commas, newlines or markup.
func CheckRole(what, role string) error {
	if !roles.ValidRole(role) {
		return fmt.Errorf("%s %q: letters, digits, '_', '.' or '-', starting with a letter or digit, at most 64: %w", what, role, ErrInvalid)
	}
	return nil
}
