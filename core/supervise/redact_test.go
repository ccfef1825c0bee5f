package supervise

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRedactorClean(t *testing.T) {
	r, err := NewRedactor(`internal-[0-9]+`)
	require.NoError(t, err)
	tests := []struct{ name, in, want string }{
		{"anthropic key", "key sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA in the env", "key [REDACTED] in the env"},
		{"openai key", "OPENAI_API_KEY=sk-proj0123456789abcdefXYZ", "OPENAI_API_KEY=[REDACTED]"},
		{"aws", "AKIAABCDEFGHIJKLMNOP", "[REDACTED]"},
		{"github", "token ghp_0123456789abcdefghijABCDEFGHIJ", "token [REDACTED]"},
		{"google", "AIza" + strings.Repeat("x", 35), "[REDACTED]"},
		{"bearer", "Authorization: Bearer abcdefghijklmnop.qrstuv", "Authorization: [REDACTED]"},
		{"private key", "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\nb", "a\n[REDACTED]\nb"},
		{"the user's pattern", "host internal-42 down", "host [REDACTED] down"},
		{"plain text stays", "❯ the box holds text that is not ours", "❯ the box holds text that is not ours"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, r.Clean(tc.in)) })
	}
}

func TestRedactorCutsLongTexts(t *testing.T) {
	got := Redactor{}.Clean(strings.Repeat("é", MaxDiagnostic))
	assert.True(t, utf8.ValidString(got), "cut between characters")
	assert.Contains(t, got, "bytes cut)")
	assert.LessOrEqual(t, len(got), MaxDiagnostic+40)
}

func TestNewRedactorRefusesABadPattern(t *testing.T) {
	_, err := NewRedactor(`(`)
	assert.ErrorIs(t, err, ErrBadInput)
}
