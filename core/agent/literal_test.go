package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLiteral(t *testing.T) {
	tests := []struct {
		kind    Kind
		in      string
		want    string // "" with refused
		refused bool
	}{
		{kind: Claude, in: "hello", want: "hello"},
		{kind: Claude, in: "!touch F", refused: true},
		{kind: Claude, in: "/cost", refused: true},
		{kind: Claude, in: " exit ", refused: true},
		{kind: Claude, in: "quit", refused: true},
		{kind: Claude, in: "exit the loop", want: "exit the loop"},
		{kind: Claude, in: "a ! b /c", want: "a ! b /c"},
		{kind: Claude, in: `ends in \`, want: `ends in \ `},
		{kind: Claude, in: " !x", want: " !x"},
		{kind: Codex, in: "!touch F", want: " !touch F"},
		{kind: Codex, in: "/quit", want: " /quit"},
		{kind: Codex, in: "read @READ", want: "read @READ "},
		{kind: Codex, in: "foo@ bar", want: "foo@ bar"},
		{kind: Codex, in: "exit", want: "exit"},
		{kind: Gemini, in: "/he", refused: true},
		{kind: Gemini, in: " /help", refused: true},
		{kind: Gemini, in: "/usr/bin/env is missing", want: " /usr/bin/env is missing"},
		{kind: Codex, in: "use x $imagegen", want: "use x $imagegen "},
		{kind: Codex, in: "costs $5", want: "costs $5"},
		{kind: Claude, in: ":q", refused: true},
		{kind: Claude, in: "see @READ", want: "see @READ "},
		{kind: Gemini, in: "mail me at foo@", want: "mail me at foo@ "},
		{kind: Gemini, in: "line\n@README", want: "line\n@README "},
		{kind: Gemini, in: `x\`, want: `x\ `},
		{kind: Generic, in: "!anything /goes", want: "!anything /goes"},
		{kind: Shell, in: "/bin/true", want: "/bin/true"},
	}
	for _, tt := range tests {
		got, err := Lookup(tt.kind).Literal(tt.in)
		if tt.refused {
			require.ErrorIs(t, err, ErrInterpreted, "%s %q", tt.kind, tt.in)
			continue
		}
		require.NoError(t, err, "%s %q", tt.kind, tt.in)
		assert.Equal(t, tt.want, got, "%s %q", tt.kind, tt.in)
	}
}
