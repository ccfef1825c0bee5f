package fakemodel

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClaudeMidTurn(t *testing.T) {
	text, ok := claudeMidTurn(claudeMidTurnHead + "second\nline" + claudeMidTurnTail)
	assert.True(t, ok)
	assert.Equal(t, "second\nline", text)
	for _, note := range []string{"", "some reminder", claudeMidTurnHead + "no tail"} {
		_, ok := claudeMidTurn(note)
		assert.False(t, ok, note)
	}
}

func TestClaudeCwd(t *testing.T) {
	assert.Equal(t, "/w/repo", claudeCwd([]byte(`[{"type":"text","text":"# Environment\n - Primary working directory: /w/repo\n - Is a git repository: true"}]`)))
	assert.Equal(t, "/w", claudeCwd([]byte(`"Working directory: /w"`)))
	assert.Equal(t, "", claudeCwd([]byte(`"no directory here"`)))
}
