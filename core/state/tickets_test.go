package state

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLockerQueued(t *testing.T) {
	l := Locker{Dir: t.TempDir()}
	assert.Empty(t, l.Queued("%1"), "no tickets")
	ctx := context.Background()
	unlock1, err := l.Lock(ctx, "%1")
	require.NoError(t, err)
	unlock2, err := l.Lock(ctx, "request-%1")
	require.NoError(t, err)
	// A waiter's ticket: taken, not first.
	waiter, err := l.take(lockName("%1"))
	require.NoError(t, err)
	unlock12, err := l.Lock(ctx, "%12")
	require.NoError(t, err)

	assert.Equal(t, map[string]int{"%1": 2, "request-%1": 1, "%12": 1}, l.Queued("%1", "request-%1", "%12", "%2"))
	waiter.release()
	unlock1()
	assert.Equal(t, map[string]int{"request-%1": 1, "%12": 1}, l.Queued("%1", "request-%1", "%12"))
	unlock2()
	unlock12()
	assert.Empty(t, l.Queued("%1", "request-%1", "%12"))
}
