package exitcode

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/supervise"
)

// TestCodesDocumentTheTable holds the documentation's view of the error
// table (docs/exit-codes.md) to the table: every code with each of its
// exit statuses once, with words, and every exit status with a meaning.
func TestCodesDocumentTheTable(t *testing.T) {
	docs := Codes()
	byKey := map[codeExit]CodeDoc{}
	for _, d := range docs {
		k := codeExit{d.Code, d.Exit}
		_, dup := byKey[k]
		assert.False(t, dup, "%s (exit %d) is listed twice", d.Code, d.Exit)
		byKey[k] = d
		assert.NotEmpty(t, d.Meaning, "%s has no words", d.Code)
	}
	for _, c := range codes {
		assert.Contains(t, byKey, codeExit{c.code, c.exit}, "%s (exit %d) of the table is not documented", c.code, c.exit)
	}
	require.Equal(t, "ERROR", docs[len(docs)-1].Code, "the code of an unknown error comes last")

	exits := map[int]ExitDoc{}
	for _, e := range Exits() {
		exits[e.Exit] = e
		assert.NotEmpty(t, e.Meaning, "exit %d has no meaning in exitMeanings", e.Exit)
	}
	for _, c := range codes {
		if assert.Contains(t, exits, c.exit) {
			assert.Contains(t, exits[c.exit].Codes, c.code, "exit %d does not list %s", c.exit, c.code)
		}
	}
	assert.Contains(t, exits[ExitInputBusy].Codes, string(supervise.OperatorBusy), "a trigger class is listed under its exit")
	assert.Empty(t, exits[ExitOK].Codes)
}

// TestClassesAreDocumented lists each failure class of the supervisor
// once, with words and its exit status.
func TestClassesAreDocumented(t *testing.T) {
	seen := map[string]CodeDoc{}
	for _, c := range Classes() {
		assert.NotContains(t, seen, c.Code, "listed twice")
		seen[c.Code] = c
		assert.NotEmpty(t, c.Meaning, c.Code)
		assert.Contains(t, classMeanings, supervise.Class(c.Code), "%s has no words in classMeanings", c.Code)
	}
	assert.Len(t, seen, len(classMeanings), "a class with words is not listed in Classes")
	assert.Equal(t, ExitTimeout, seen[string(supervise.AckTimeout)].Exit)
	assert.Equal(t, ExitError, seen[string(supervise.SendKeysError)].Exit, "a class without an exit of its own exits 1")
}

func TestJoinMeaning(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{"", "usage", "usage"},
		{"usage", "usage", "usage"},
		{"usage", "bad event", "usage; bad event"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, joinMeaning(tt.a, tt.b), "%q + %q", tt.a, tt.b)
	}
}
