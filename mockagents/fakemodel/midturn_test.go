package fakemodel

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClaudeMidTurn(t *testing.T) {
	note := func(text string) string { return claudeMidTurnHead + text + claudeMidTurnTail }
	assert.Equal(t, []string{"second\nline"}, claudeMidTurn(note("second\nline")))
	// Two messages typed during one tool run: one system message (measured).
	assert.Equal(t, []string{"second message", "third message"}, claudeMidTurn(note("second message")+"\n\n"+note("third message")))
	for _, bad := range []string{"", "some reminder", claudeMidTurnHead + "no tail", note("a") + "\n\nmore"} {
		assert.Nil(t, claudeMidTurn(bad), bad)
	}
}

func TestClaudeCwd(t *testing.T) {
	assert.Equal(t, "/w/repo", claudeCwd([]byte(`[{"type":"text","text":"# Environment\n - Primary working directory: /w/repo\n - Is a git repository: true"}]`)))
	assert.Equal(t, "/w", claudeCwd([]byte(`"Working directory: /w"`)))
	assert.Equal(t, "", claudeCwd([]byte(`"no directory here"`)))
}
