package state

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/partyhq/party/core/termsafe"
)

// EventKind is the kind of the event log line line; "" when it is not an
// event.
func EventKind(line []byte) string {
	var ev struct{ Kind string }
	_ = json.Unmarshal(line, &ev)
	return ev.Kind
}

// FormatEvent is an event log line for people: "TIME KIND key=value …",
// the time local with milliseconds, the other fields sorted by key as JSON
// clipped to 120 characters, the whole terminal-safe (termsafe.Text: an
// agent's text in a field cannot act on the terminal). It is false for a
// line that is not a JSON object.
func FormatEvent(line []byte, loc *time.Location) (string, bool) {
	var m map[string]any
	if json.Unmarshal(line, &m) != nil {
		return "", false
	}
	ts, _ := m["time"].(string)
	if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
		ts = t.In(loc).Format("15:04:05.000")
	}
	kind, _ := m["kind"].(string)
	delete(m, "time")
	delete(m, "kind")
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := []string{ts, kind}
	for _, k := range keys {
		v, _ := json.Marshal(m[k])
		parts = append(parts, k+"="+clip(string(v), 120))
	}
	return termsafe.Text(strings.Join(parts, " ")), true
}

// clip shortens s to n runes and an ellipsis.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
