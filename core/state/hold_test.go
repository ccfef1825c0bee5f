package state

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
)

// TestHoldHelper is not a test: run by TestLockGoesWithTheProcess, it holds
// the lock named by STATE_TEST_HOLD until it is killed.
func TestHoldHelper(t *testing.T) {
	path := os.Getenv("STATE_TEST_HOLD")
	if path == "" {
		t.Skip("helper process")
	}
	if _, err := Hold(context.Background(), clock.Real{}, path); err != nil {
		os.Exit(2)
	}
	_, _ = os.Stdout.WriteString("held\n")
	select {}
}

func TestHoldAndHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "coordinator.lock")
	_, held := Holder(path)
	assert.False(t, held, "no file: nobody")

	release, err := Hold(context.Background(), clock.Real{}, path)
	require.NoError(t, err)
	pid, held := Holder(path)
	assert.True(t, held)
	assert.Equal(t, os.Getpid(), pid)
	_, err = Hold(context.Background(), clock.Real{}, path)
	assert.ErrorIs(t, err, ErrHeld, "one holder at a time")

	release()
	_, held = Holder(path)
	assert.False(t, held)
	release, err = Hold(context.Background(), clock.Real{}, path)
	require.NoError(t, err)
	release()

	// A pid in the file without the lock is nobody: never a PID file alone.
	require.NoError(t, os.WriteFile(path, []byte("1\n"), 0o600))
	pid, held = Holder(path)
	assert.False(t, held)
	assert.Zero(t, pid)
}

func TestHolderNeverNamesAStranger(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	path := filepath.Join(t.TempDir(), "coordinator.lock")
	release, err := Hold(context.Background(), clock.Real{}, path)
	require.NoError(t, err)
	defer release()
	// The file names process 1, which does not hold the lock: the lock is
	// held, but its pid is not given out to be signalled.
	require.NoError(t, os.WriteFile(path, []byte("1\n"), 0o600))
	pid, held := Holder(path)
	assert.True(t, held)
	assert.Zero(t, pid)
}

func TestLockGoesWithTheProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "coordinator.lock")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHoldHelper$")
	cmd.Env = append(os.Environ(), "STATE_TEST_HOLD="+path)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "held\n", line)

	pid, held := Holder(path)
	assert.True(t, held)
	assert.Equal(t, cmd.Process.Pid, pid)

	require.NoError(t, cmd.Process.Kill()) // a crash: no release
	_ = cmd.Wait()
	pid, held = Holder(path)
	assert.False(t, held, "the lock went with the process")
	assert.Zero(t, pid)
	b, _ := os.ReadFile(path)
	assert.Equal(t, strconv.Itoa(cmd.Process.Pid)+"\n", string(b), "its pid stays in the file, and means nothing")
}
