package tmux

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// A session started right after the server's last one was killed starts a
// new server: before KillSession waited for the server to exit, one try in
// twelve reached the exiting server and failed "server exited
// unexpectedly".
func TestNewSessionRightAfterTheLastWasKilled(t *testing.T) {
	c := testServer(t, "sleep", "1000")
	ctx := context.Background()
	last := "s"
	for i := range 40 {
		require.NoError(t, c.KillSession(ctx, last), "try %d", i)
		last = fmt.Sprintf("s%d", i)
		_, err := c.NewSession(ctx, last, 80, 24, Spawn{Argv: []string{"sleep", "1000"}})
		require.NoError(t, err, "try %d", i)
	}
}
