package review

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/daemon"
)

func TestStart(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "review")
	clk := &fakeClock{now: t0}
	var release func()
	require.NoError(t, Start(ctx, clk, dir, 4, func() error {
		var err error
		release, err = daemon.Hold(ctx, clk, dir)
		return err
	}))
	s, err := Load(dir)
	require.NoError(t, err, "Start initializes the state")
	assert.Equal(t, 4, s.MaxIterations)
	assert.True(t, daemon.Running(dir).Running)
	assert.ErrorIs(t, Start(ctx, clk, dir, 4, func() error {
		t.Fatal("started twice")
		return nil
	}), ErrRunning)

	release()

	spawnErr := errors.New("no window")
	assert.ErrorIs(t, Start(ctx, clk, filepath.Join(t.TempDir(), "review"), 3, func() error { return spawnErr }), spawnErr)
}

func TestSubmit(t *testing.T) {
	ctx := context.Background()
	t.Run("applied", func(t *testing.T) {
		c, _, clk := newCoordinator(t)
		woken := 0
		res, err := Submit(ctx, clk, c.Dir, Event{Kind: EvEdit, Reason: "a.go"}, time.Second, func() {
			woken++
			require.NoError(t, c.pass(ctx)) // the coordinator takes it at once
		})
		require.NoError(t, err)
		assert.Equal(t, 1, woken)
		assert.False(t, res.Queued)
		assert.Equal(t, Implement, res.State)
		assert.NotEmpty(t, res.ID)
		assert.Equal(t, t0, clk.now, "no wait")
	})
	t.Run("queued", func(t *testing.T) {
		c, _, clk := newCoordinator(t)
		res, err := Submit(ctx, clk, c.Dir, Event{Kind: EvEdit, Reason: "a.go"}, time.Second, func() {})
		require.NoError(t, err)
		assert.True(t, res.Queued)
		assert.Equal(t, Idle, res.State, "the state before the signal")
		assert.Equal(t, time.Second, clk.now.Sub(t0), "waited")
		sigs, err := Signals(c.Dir)
		require.NoError(t, err)
		require.Len(t, sigs, 1, "the signal waits for the coordinator")
		assert.Equal(t, res.ID, sigs[0].ID)
	})
	t.Run("refused", func(t *testing.T) {
		c, _, clk := newCoordinator(t)
		_, err := Submit(ctx, clk, c.Dir, Event{Kind: EvSelfReview}, time.Second, func() { t.Fatal("a refused signal was sent") })
		assert.ErrorIs(t, err, ErrIllegal)
		sigs, err := Signals(c.Dir)
		require.NoError(t, err)
		assert.Empty(t, sigs)
	})
}

func TestAwait(t *testing.T) {
	c, _, clk := newCoordinator(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	s, err := Await(ctx, clk, c.Dir, Idle, time.Second)
	require.NoError(t, err)
	assert.Equal(t, Idle, s.State)

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	s, err = Await(ctx, clk, c.Dir, PRReady, time.Second)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, Idle, s.State, "the status read last")
}
