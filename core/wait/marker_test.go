package wait

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/mux"
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
		{"codex's bullet and footer", "› q" + Instruction(n) + "\n• list:\n    - a\nPARTY_DONE_k3j9x2m8q4ab\n  Worked for 1s • 12:05", "list:\n  - a", true},
		{"claude's random verb line", "❯ q" + Instruction(n) + "\n● fine\n✻ Sautéed for 6s\nPARTY_DONE_k3j9x2m8q4ab", "fine", true},
		{"marker on the answer line", "> q" + Instruction(n) + "\nDone. PARTY_DONE_k3j9x2m8q4ab", "Done.", true},
		{"other nonce", "PARTY_DONE_zzzzzzzzzzzz", "", false},
		{"prefix of a longer token", "PARTY_DONE_k3j9x2m8q4abX", "", false},
		{"a markdown quote and a line holding the prompt's word stay", "❯ q" + Instruction(n) + "\n● this is it:\n  > quoted q\n  q and more\nPARTY_DONE_k3j9x2m8q4ab", "this is it:\n> quoted q\nq and more", true},
		{"the instruction hard-wrapped by the agent", " > q\n   (When you have completely finished, end your reply with one line holding the text PARTY_DONE_\n   immediately followed by k3j9x2m8q4ab, with nothing\n   between them.)\n✦ fine\nPARTY_DONE_k3j9x2m8q4ab", "fine", true},
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

func TestFindMarkerWithoutTheEchoedNonce(t *testing.T) {
	// Without a mark only the echoed nonce places the turn: an older
	// echo of the same words is never taken for it.
	n := "k3j9x2m8q4ab"
	screen := "mock> report\nold answer\nPARTY_DONE_oldoldoldold\nmock> [312 chars]\nnew answer\nPARTY_DONE_k3j9x2m8q4ab"
	_, found, err := FindMarker(screen, n, "report")
	assert.True(t, found)
	assert.ErrorIs(t, err, ErrAnswerCut)
}

// rowsOf is a read of a pane whose scrollback holds history rows, the
// rest of screen being on screen; no row wraps.
func rowsOf(screen string, history int) mux.Rows {
	raw := strings.Split(screen, "\n")
	of := make([]int, len(raw))
	for i := range of {
		of[i] = i
	}
	return mux.Rows{History: history, Raw: raw, Lines: raw, LineOf: of}
}

// markOf is the mark of a pane showing screen, with history rows of it
// in the scrollback.
func markOf(screen string, history int) *Mark {
	r := rowsOf(screen, history)
	return &Mark{History: r.History, First: r.First, Rows: r.Raw}
}

func TestFindTurn(t *testing.T) {
	n := "k3j9x2m8q4ab"
	old := "mock agent ready\nmock> report\n      \n      (When … followed by oldoldoldold, with nothing between them.)\nold answer\nPARTY_DONE_oldoldoldold\n"
	q := "q" + Instruction(n)
	tests := []struct {
		name, before, after, prompt, answer string
	}{
		{"a shortened echo, the same first line above", old + "mock> ",
			old + "mock> [312 chars]\nnew answer\nPARTY_DONE_k3j9x2m8q4ab\nmock> ", "report\n" + strings.Repeat("x", 150) + Instruction(n), "new answer"},
		{"a whole echo", old + "mock> ",
			old + "mock> q\n      " + strings.ReplaceAll(Instruction(n), "\n", "\n      ") + "\nnew answer\nPARTY_DONE_k3j9x2m8q4ab\nmock> ", q, "new answer"},
		{"an answer quoting the instruction", old + "mock> ",
			old + "mock> " + q + "\nyou asked:" + Instruction(n) + "\nthat is all\nPARTY_DONE_k3j9x2m8q4ab\nmock> ", q,
			"you asked:\n\n(When you have completely finished, end your reply with one line holding the text PARTY_DONE_ immediately followed by k3j9x2m8q4ab, with nothing between them.)\nthat is all"},
		{"the agent echoing the prompt once more", old + "mock> ",
			old + "mock> " + q + "\n" + q + "\nthe real answer\nPARTY_DONE_k3j9x2m8q4ab\nmock> ", q, "the real answer"},
		{"a preamble, shortened", old + "mock> ",
			old + "\nmock> [402 chars]\n\nnew answer\nPARTY_DONE_k3j9x2m8q4ab\nmock> ", "[SYSTEM: Be brief.]\n\nq" + Instruction(n), "new answer"},
		{"the echo already on screen at the paste", old + "mock> q\nstale row",
			old + "mock> q\nnew answer\nPARTY_DONE_k3j9x2m8q4ab\nmock> ", q, "new answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer, found, err := FindTurn(rowsOf(tt.after, 0), markOf(tt.before, 0), n, tt.prompt)
			require.NoError(t, err)
			assert.True(t, found)
			assert.Equal(t, tt.answer, answer)
		})
	}
}

func TestFindTurnScrolled(t *testing.T) {
	n := "k3j9x2m8q4ab"
	before := "a\nb\nc\nd\ne\nmock> "
	mark := &Mark{History: 3, First: 0, Rows: strings.Split(before, "\n")}

	// The screen scrolled: the rows keep their numbers, the read starts
	// further down.
	after := rowsOf("c\nd\ne\nmock> [300 chars]\nthe answer\nPARTY_DONE_k3j9x2m8q4ab\nmock> ", 9)
	after.First = 2
	answer, found, err := FindTurn(after, mark, n, "q")
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, "the answer", answer)

	// The turn began above the rows read: cut, never a part.
	after = rowsOf("line 89\nline 90\nPARTY_DONE_k3j9x2m8q4ab\nmock> ", 300)
	after.First = 290
	_, found, err = FindTurn(after, mark, n, "q")
	assert.True(t, found)
	assert.ErrorIs(t, err, ErrAnswerCut)

	// The scrollback dropped its oldest rows: the rows at the mark's
	// numbers are others. Without the echoed nonce that is an error.
	after = rowsOf("x\ny\nz\nmock> [300 chars]\nthe answer\nPARTY_DONE_k3j9x2m8q4ab\nmock> ", 3)
	_, found, err = FindTurn(after, mark, n, "q")
	assert.True(t, found)
	assert.ErrorIs(t, err, ErrAnswerCut)

	// The pane's very first row is the paste's: the turn starts there.
	answer, found, err = FindTurn(rowsOf("mock> [300 chars]\nthe answer\nPARTY_DONE_k3j9x2m8q4ab\nmock> ", 0), &Mark{Rows: []string{"mock> "}}, n, "q")
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, "the answer", answer)

	// A full scrollback (limit 100) dropped its oldest tenth: the rows
	// are found ten rows higher.
	full := &Mark{History: 98, First: 93, Rows: strings.Split("a\nb\nc\nd\ne\nmock> ", "\n")}
	after = rowsOf("b\nc\nd\ne\nmock> [300 chars]\nthe answer\nPARTY_DONE_k3j9x2m8q4ab\nmock> ", 92)
	after.Limit, after.First = 100, 84
	answer, found, err = FindTurn(after, full, n, "q")
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, "the answer", answer)

	// The scrollback was cleared.
	after = rowsOf("mock> [300 chars]\nthe answer\nPARTY_DONE_k3j9x2m8q4ab\nmock> ", 0)
	_, _, err = FindTurn(after, mark, n, "q")
	assert.ErrorIs(t, err, ErrAnswerCut)
}

func TestFindTurnJoinedRows(t *testing.T) {
	// A wrapped answer row: rows map to the joined lines that hold them.
	n := "k3j9x2m8q4ab"
	mark := &Mark{Rows: []string{"ready", "mock> "}}
	rows := mux.Rows{
		Raw:    []string{"ready", "mock> [300 chars]", "a long answer th", "at wraps", "PARTY_DONE_k3j9x2m8q4ab", "mock> "},
		Lines:  []string{"ready", "mock> [300 chars]", "a long answer that wraps", "PARTY_DONE_k3j9x2m8q4ab", "mock> "},
		LineOf: []int{0, 1, 2, 2, 3, 4},
	}
	answer, found, err := FindTurn(rows, mark, n, "q")
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, "a long answer that wraps", answer)
}
