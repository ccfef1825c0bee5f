package wait

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGeminiScreenCancel(t *testing.T) {
	screen := ""
	src := NewGeminiScreen("write a poem\nabout tmux", func() (string, error) { return screen, nil })

	screen = " > write a poem\n   about tmux\n ⠸ Thinking... (esc to cancel, 2s)\n─────\n >   Type your message"
	_, done, err := src.Check()
	require.NoError(t, err)
	assert.False(t, done, "still thinking")

	// An earlier cancelled turn above our echo does not count.
	screen = " > write a poem\nℹ Request cancelled.\n > write a poem\n   about tmux\n ⠸ Thinking... (esc to cancel, 2s)"
	_, done, _ = src.Check()
	assert.False(t, done)

	screen = " > write a poem\n   about tmux\nℹ Request cancelled.\n─────\n >   Type your message"
	_, done, err = src.Check()
	assert.True(t, done)
	assert.ErrorIs(t, err, ErrInterrupted)
}
