package tmux

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestJump(t *testing.T) {
	r := newStub(t, stub{})
	c := New(Socket{Name: "x"}, r)
	require.NoError(t, c.Jump(context.Background(), "%12"))
	assert.Equal(t, []string{"tmux", "-u", "-L", "x", "select-window", "-t", "%12", ";", "select-pane", "-t", "%12", ";", "switch-client", "-t", "%12"}, r.calls[0].argv)

	// Anything but a pane id never reaches tmux.
	for _, bad := range []string{"", "t:0", "%1;kill-server", "%"} {
		assert.ErrorIs(t, c.Jump(context.Background(), bad), ErrCommand, bad)
	}
}
