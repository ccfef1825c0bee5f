package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInfer(t *testing.T) {
	tests := []struct {
		argv []string
		want Kind
	}{
		{nil, Shell},
		{[]string{"claude", "--model", "opus"}, Claude},
		{[]string{"/usr/local/bin/codex"}, Codex},
		{[]string{"gemini"}, Gemini},
		{[]string{"zsh"}, Shell},
		{[]string{"aider"}, Generic},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Infer(tt.argv), "%q", tt.argv)
	}
}

func TestInputLine(t *testing.T) {
	tests := []struct {
		name   string
		kind   Kind
		screen string
		want   string
		found  bool
	}{
		{"claude idle", Claude, "────\n❯\u00a0\n────\n  ? for shortcuts", "", true},
		{"claude typed", Claude, "────\n❯\u00a0hello world\n────", "hello world", true},
		{"claude placeholder paste", Claude, "❯\u00a0[Pasted text #1 +12 lines]", "[Pasted text #1 +12 lines]", true},
		{"claude dialog item is not input", Claude, "Do you want to proceed?\n❯ 1. Yes\n  2. No", "", false},
		{"codex placeholder", Codex, "› Ask Codex to do anything\n\n  ? for shortcuts", "", true},
		{"codex typed", Codex, "› fix the bug", "fix the bug", true},
		{"gemini placeholder", Gemini, " >   Type your message or @path/to/file", "", true},
		{"generic has no input line", Generic, "mock> hi", "", false},
		{"no prompt on screen", Claude, "loading…", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found := Lookup(tt.kind).InputLine(tt.screen)
			assert.Equal(t, tt.found, found)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestBusy(t *testing.T) {
	assert.True(t, Lookup(Claude).IsBusy("✻ Thinking… (12s · ↑ 1.2k tokens · esc to interrupt)\n❯\u00a0"))
	assert.True(t, Lookup(Claude).IsBusy("✢ Pondering… (3s)"), "newer builds omit esc to interrupt")
	assert.False(t, Lookup(Claude).IsBusy("✻ Worked for 1m 52s\n❯\u00a0"), "a finished turn is not busy")
	assert.True(t, Lookup(Codex).IsBusy("• Working (1m 4s • esc to interrupt)"))
	assert.False(t, Lookup(Codex).IsBusy("› Ask Codex to do anything"))
	assert.True(t, Lookup(Gemini).IsBusy("⠋ Thinking… (esc to cancel, 5s)"))
}

func TestDialog(t *testing.T) {
	tests := []struct {
		name   string
		screen string
		want   bool
	}{
		{"claude trust", "Do you trust the files in this folder?\n❯ 1. Yes, I trust this folder\n  2. No, exit\nEnter to confirm · Esc to cancel", true},
		{"claude permission", "Do you want to proceed?\n❯ 1. Yes\n  2. Yes, and don't ask again\n  3. No (esc)", true},
		{"codex approval", "Would you like to run the following command?\n  $ ls\n› 1. Yes, proceed (y)\n  2. No (esc)", true},
		{"numbered list in an answer", "⏺ Steps:\n  1. parse\n  2. build\n────\n❯\u00a0\n────", false},
		{"idle", "❯\u00a0\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := Dialog(tt.screen)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"claude", []string{"claude"}},
		{`codex -c 'notify=["a b"]' --no-alt-screen`, []string{"codex", "-c", `notify=["a b"]`, "--no-alt-screen"}},
		{`a "b \"c\" $HOME" d\ e`, []string{"a", `b "c" $HOME`, "d e"}},
		{`x ''`, []string{"x", ""}},
		{"  ", nil},
	}
	for _, tt := range tests {
		got, err := SplitCommand(tt.in)
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
	for _, bad := range []string{`a 'b`, `a "b`, `a\`} {
		_, err := SplitCommand(bad)
		assert.ErrorIs(t, err, ErrCommandSyntax, bad)
	}
}
