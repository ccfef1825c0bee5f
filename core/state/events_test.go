package state

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestFormatEvent(t *testing.T) {
	tests := []struct {
		name, line, want string
		ok               bool
	}{
		{"fields sorted, strings quoted", `{"time":"2026-01-02T03:04:05.678Z","kind":"turn-complete","pane":"%1","answer":"done","n":2}`,
			`03:04:05.678 turn-complete answer="done" n=2 pane="%1"`, true},
		{"long values clipped", `{"time":"x","kind":"k","text":"` + strings.Repeat("é", 200) + `"}`,
			`x k text="` + strings.Repeat("é", 119) + `…`, true},
		{"not an object", `[1]`, "", false},
		{"null", `null`, " ", true},
		{"not JSON", `{`, "", false},
		{"what agents wrote is terminal-safe", `{"time":"\u001b]0;t\u0007","kind":"x\u009b2J","answer":"a\u001b[2J\u0085"}`,
			`\x1b]0;t\a x\u009b2J answer="a\u001b[2J\u0085"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := FormatEvent([]byte(tt.line), time.UTC)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
	assert.Equal(t, "relay.block", EventKind([]byte(`{"kind":"relay.block"}`)))
	assert.Empty(t, EventKind([]byte(`nope`)))
}
