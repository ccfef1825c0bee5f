package wait

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNonce(t *testing.T) {
	a, b := NewNonce(), NewNonce()
	assert.Regexp(t, regexp.MustCompile(`^[a-z2-9]{12}$`), a)
	assert.NotEqual(t, a, b)
}

func TestEchoedInstructionNeverMatches(t *testing.T) {
	n := NewNonce()
	prompt := "do the thing" + Instruction(n)
	_, found, _ := FindMarker(prompt, n, prompt)
	assert.False(t, found, "the echoed prompt holds both halves but not the marker")
	// Also when the echo is wrapped differently and redrawn twice.
	_, found, _ = FindMarker(prompt+"\n"+prompt, n, prompt)
	assert.False(t, found)
}

func TestFindMarker(t *testing.T) {
	n := "k3j9x2m8q4ab"
	tests := []struct {
		name, screen, answer string
		found                bool
	}{
		{"answer after echo", "> question" + Instruction(n) + "\n⏺ The answer\n  is 42.\nPARTY_DONE_k3j9x2m8q4ab\n────\n❯\u00a0\n────", "The answer\nis 42.", true},
		{"gemini's glyph and indent", " > q" + Instruction(n) + "\n✦ The answer is 42.\n  Second line.\n\n  PARTY_DONE_k3j9x2m8q4ab", "The answer is 42.\nSecond line.", true},
		{"codex's bullet and footer", "› q\n• list:\n    - a\nPARTY_DONE_k3j9x2m8q4ab\n  Worked for 1s • 12:05", "list:\n  - a", true},
		{"claude's random verb line", "❯ q\n● fine\n✻ Sautéed for 6s\nPARTY_DONE_k3j9x2m8q4ab", "fine", true},
		{"marker on the answer line", "> q" + Instruction(n) + "\nDone. PARTY_DONE_k3j9x2m8q4ab", "Done.", true},
		{"other nonce", "PARTY_DONE_zzzzzzzzzzzz", "", false},
		{"prefix of a longer token", "PARTY_DONE_k3j9x2m8q4abX", "", false},
		{"a markdown quote and a line holding the prompt's word stay", "❯ q\n● this is it:\n  > quoted q\n  q and more\nPARTY_DONE_k3j9x2m8q4ab", "this is it:\n> quoted q\nq and more", true},
		{"only the prompt's first line echoed", "old stuff\nmock> q\nthe answer\nPARTY_DONE_k3j9x2m8q4ab\nmock>", "the answer", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer, found, err := FindMarker(tt.screen, n, "q")
			assert.NoError(t, err)
			assert.Equal(t, tt.found, found)
			assert.Equal(t, tt.answer, answer)
		})
	}
}

func TestFindMarkerByPosition(t *testing.T) {
	n := "k3j9x2m8q4ab"
	// The prompt "hi" is a word of the answer: the answer is still all
	// that follows the echo.
	answer, found, err := FindMarker("❯ hi"+Instruction(n)+"\n● this is high time\n  hi\nPARTY_DONE_k3j9x2m8q4ab", n, "hi")
	assert.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, "this is high time\nhi", answer)

	// The start scrolled out of what was captured: an error, not a part.
	_, found, err = FindMarker("line 89\nline 90\nPARTY_DONE_k3j9x2m8q4ab", n, "write 300 lines")
	assert.True(t, found)
	assert.ErrorIs(t, err, ErrAnswerCut)
}
