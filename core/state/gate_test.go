package state

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
)

// A hook's release stamps when it ended; a sender's leaves the stamp; a
// held gate is waited for up to the bound, then ErrHeld.
func TestKeyGate(t *testing.T) {
	ctx := context.Background()
	path := GatePath(t.TempDir(), "%7")
	ended, release, err := HoldGate(ctx, clock.Real{}, path, time.Second)
	require.NoError(t, err)
	assert.True(t, ended.IsZero(), "no hook ever let go")

	_, _, err = HoldGate(ctx, clock.Real{}, path, 20*time.Millisecond)
	require.ErrorIs(t, err, ErrHeld, "held by another file description")
	before := time.Now()
	release(true)

	ended, release, err = HoldGate(ctx, clock.Real{}, path, time.Second)
	require.NoError(t, err)
	assert.WithinDuration(t, before, ended, time.Second)
	release(false)
	again, release, err := HoldGate(ctx, clock.Real{}, path, time.Second)
	require.NoError(t, err)
	assert.True(t, again.Equal(ended), "a sender's release keeps the hook's stamp")

	// Let go while another waits: the waiter gets it.
	got := make(chan error, 1)
	go func() {
		_, r, err := HoldGate(ctx, clock.Real{}, path, 5*time.Second)
		if err == nil {
			r(false)
		}
		got <- err
	}()
	time.Sleep(20 * time.Millisecond)
	release(false)
	require.NoError(t, <-got)
}
