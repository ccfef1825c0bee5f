package daemon

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/state"
)

func TestLogger(t *testing.T) {
	dir := t.TempDir()
	var w strings.Builder
	logf := Logger(&fakeClock{now: t0}, &w, dir)
	logf("one %d", 1)
	logf("two")
	want := t0.UTC().Format(time.RFC3339Nano) + " one 1\n" + t0.UTC().Format(time.RFC3339Nano) + " two\n"
	assert.Equal(t, want, w.String())
	b, err := os.ReadFile(filepath.Join(dir, LogFile))
	require.NoError(t, err)
	assert.Equal(t, want, string(b))
}

func TestHold(t *testing.T) {
	ctx := context.Background()
	clk := &fakeClock{now: t0}
	for _, lock := range append([]string{LockFile}, legacyLocks...) {
		t.Run(lock, func(t *testing.T) {
			dir := t.TempDir()
			release, err := state.Hold(ctx, clk, filepath.Join(dir, lock))
			require.NoError(t, err)
			p := Running(dir)
			assert.True(t, p.Running, "a holder of %s runs", lock)
			assert.Equal(t, os.Getpid(), p.PID)
			_, err = Hold(ctx, clk, dir)
			assert.ErrorIs(t, err, ErrRunning)
			release()
			again, err := Hold(ctx, clk, dir)
			require.NoError(t, err, "the lock is free again")
			again()
		})
	}
}

func TestStartAndStop(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clk := &fakeClock{now: t0}
	var release func()
	running, err := Start(ctx, clk, dir, func() error {
		var err error
		release, err = Hold(ctx, clk, dir)
		return err
	})
	require.NoError(t, err)
	assert.True(t, running)
	assert.True(t, Running(dir).Running)
	_, err = Start(ctx, clk, dir, func() error {
		t.Fatal("started twice")
		return nil
	})
	assert.ErrorIs(t, err, ErrRunning)

	release()
	assert.NoError(t, Stop(ctx, clk, dir), "nothing runs: nothing to stop")

	running, err = Start(ctx, clk, t.TempDir(), func() error { return nil })
	require.NoError(t, err)
	assert.False(t, running, "spawned, and not running after 5s")
	spawnErr := errors.New("no window")
	_, err = Start(ctx, clk, t.TempDir(), func() error { return spawnErr })
	assert.ErrorIs(t, err, spawnErr)
}

// TestStopHelper is not a test: TestStop runs it in a process of its own
// that holds the lock $DAEMON_LOCK of $DAEMON_HOLD until it is killed.
func TestStopHelper(t *testing.T) {
	dir := os.Getenv("DAEMON_HOLD")
	if dir == "" {
		t.Skip("helper process of TestStop")
	}
	_, err := state.Hold(context.Background(), clock.Real{}, filepath.Join(dir, os.Getenv("DAEMON_LOCK")))
	require.NoError(t, err)
	_, _ = os.Stdout.WriteString("held\n")
	time.Sleep(time.Minute)
}

// TestStop stops a real process that holds the daemon's lock, or its
// keeper's, by today's name or by the name an older party used.
func TestStop(t *testing.T) {
	for _, tc := range []struct {
		lock string
		kept bool
	}{{LockFile, false}, {KeeperLock, true}, {"coordinator.lock", false}, {"notify.lock", false}, {"supervisor.lock", true}} {
		t.Run(tc.lock, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestStopHelper$")
			cmd.Env = append(os.Environ(), "DAEMON_HOLD="+dir, "DAEMON_LOCK="+tc.lock)
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			done := make(chan error, 1)
			go func() { // ends when the helper does
				buf := make([]byte, 5)
				_, _ = io.ReadFull(out, buf)
				done <- cmd.Wait()
			}()
			for i := 0; i < 1000 && !Running(dir).Up(); i++ {
				time.Sleep(10 * time.Millisecond)
			}
			p := Running(dir)
			require.True(t, p.Up(), "the helper holds the lock")
			assert.Equal(t, tc.kept, p.Kept)
			if tc.kept {
				assert.Equal(t, cmd.Process.Pid, p.Keeper)
			} else {
				assert.Equal(t, cmd.Process.Pid, p.PID)
			}
			require.NoError(t, Stop(context.Background(), clock.Real{}, dir))
			assert.False(t, Running(dir).Up())
			assert.ErrorContains(t, <-done, "terminated", "the helper got SIGTERM")
		})
	}
}
