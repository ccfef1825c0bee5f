package daemon

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/state"
)

// fakeChild is one run of a daemon: it exits with exit when Wait is
// called, or, with hang set, when terminated.
type fakeChild struct {
	pid        int
	exit       error
	hang       bool
	terminated chan struct{}
}

func (c *fakeChild) Pid() int { return c.pid }
func (c *fakeChild) Wait() error {
	if c.hang {
		<-c.terminated
	}
	return c.exit
}
func (c *fakeChild) Terminate() { close(c.terminated) }

func TestKeeper(t *testing.T) {
	crash := errors.New("exit status 2")
	for _, tc := range []struct {
		name     string
		runs     []*fakeChild
		cancel   bool // cancel the context once the last run has started
		want     []string
		wantTime time.Duration // virtual time the keeper slept
	}{
		{
			name: "clean exit",
			runs: []*fakeChild{{pid: 10}},
			want: []string{"keeper: coordinator exited cleanly"},
		},
		{
			name: "crashes are restarted after the delay",
			runs: []*fakeChild{{pid: 10, exit: crash}, {pid: 11, exit: crash}, {pid: 12}},
			want: []string{
				"keeper: coordinator (pid 10) crashed: exit status 2; restarting in 2s",
				"keeper: coordinator (pid 11) crashed: exit status 2; restarting in 2s",
				"keeper: coordinator exited cleanly",
			},
			wantTime: 2 * RestartDelay,
		},
		{
			name:   "stopped: the daemon is terminated",
			runs:   []*fakeChild{{pid: 10, exit: crash}, {pid: 11, hang: true, exit: errors.New("signal: terminated")}},
			cancel: true,
			want: []string{
				"keeper: coordinator (pid 10) crashed: exit status 2; restarting in 2s",
				"keeper: stopped (coordinator: signal: terminated)",
			},
			wantTime: RestartDelay,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			clk := &fakeClock{now: t0}
			var log logLines
			started := 0
			k := &Keeper{Dir: t.TempDir(), Name: "coordinator", Clock: clk, Logf: log.logf, Start: func() (Child, error) {
				require.Less(t, started, len(tc.runs), "runs started")
				c := tc.runs[started]
				c.terminated = make(chan struct{})
				started++
				if tc.cancel && started == len(tc.runs) {
					cancel()
				}
				return c, nil
			}}
			require.NoError(t, k.Run(ctx))
			assert.Equal(t, len(tc.runs), started, "runs started")
			assert.Equal(t, tc.want, []string(log))
			assert.Equal(t, tc.wantTime, clk.now.Sub(t0), "time slept")
			_, held := state.Holder(filepath.Join(k.Dir, KeeperLock))
			assert.False(t, held, "the lock is released")
		})
	}
}

func TestKeeperCrashLoop(t *testing.T) {
	crash := errors.New("exit status 1")
	clk := &fakeClock{now: t0}
	var log logLines
	started := 0
	k := &Keeper{Dir: t.TempDir(), Name: "supervisor", Clock: clk, Logf: log.logf, MaxCrashes: 3, CrashWindow: time.Minute,
		Start: func() (Child, error) {
			started++
			return &fakeChild{pid: 9 + started, exit: crash, terminated: make(chan struct{})}, nil
		}}
	err := k.Run(context.Background())
	require.ErrorIs(t, err, ErrCrashLoop)
	assert.ErrorIs(t, err, crash, "the last crash's error is kept")
	assert.Equal(t, 3, started, "runs started")
	assert.Equal(t, []string{
		"keeper: supervisor (pid 10) crashed: exit status 1; restarting in 2s",
		"keeper: supervisor (pid 11) crashed: exit status 1; restarting in 2s",
		"keeper: supervisor (pid 12) crashed: exit status 1; 3 crashes within 1m0s: giving up",
	}, []string(log))
	_, held := state.Holder(filepath.Join(k.Dir, KeeperLock))
	assert.False(t, held, "the lock is released")
}

// TestKeeperCrashLoopCountsRunsThatNeverServed: runs that served before
// they crashed (killed mid-work) are restarted every time; the count of a
// loop starts again at each, so runs that fail before they get going give
// up only when MaxCrashes of them follow each other.
func TestKeeperCrashLoopCountsRunsThatNeverServed(t *testing.T) {
	crash := errors.New("signal: killed")
	clk := &fakeClock{now: t0}
	var log logLines
	started := 0
	served := map[int]bool{10: true, 11: true, 12: true, 13: true, 14: true, 16: true}
	k := &Keeper{Dir: t.TempDir(), Name: "supervisor", Clock: clk, Logf: log.logf, MaxCrashes: 3, CrashWindow: time.Minute,
		Served: func(pid int) bool { return served[pid] },
		Start: func() (Child, error) {
			started++
			return &fakeChild{pid: 9 + started, exit: crash, terminated: make(chan struct{})}, nil
		}}
	err := k.Run(context.Background())
	require.ErrorIs(t, err, ErrCrashLoop)
	// 10-14 served; 15 did not; 16 served (the count starts again); 17, 18
	// did not: with 16's crash, three within the window.
	assert.Equal(t, 9, started, "runs started")
	assert.Equal(t, "keeper: supervisor (pid 18) crashed: signal: killed; 3 crashes within 1m0s: giving up", log[len(log)-1])
}

func TestKeeperStartFails(t *testing.T) {
	k := &Keeper{Dir: t.TempDir(), Name: "coordinator", Clock: &fakeClock{now: t0}, Logf: t.Logf,
		Start: func() (Child, error) { return nil, exec.ErrNotFound }}
	err := k.Run(context.Background())
	assert.ErrorIs(t, err, exec.ErrNotFound)
	assert.ErrorContains(t, err, "start coordinator: ")
}

func TestKeeperOnce(t *testing.T) {
	for _, lock := range []string{KeeperLock, "supervisor.lock"} {
		t.Run(lock, func(t *testing.T) {
			dir := t.TempDir()
			clk := &fakeClock{now: t0}
			release, err := state.Hold(context.Background(), clk, filepath.Join(dir, lock))
			require.NoError(t, err)
			defer release()
			k := &Keeper{Dir: dir, Name: "coordinator", Clock: clk, Logf: t.Logf, Start: func() (Child, error) {
				t.Fatal("a second keeper started the daemon")
				return nil, nil
			}}
			assert.ErrorIs(t, k.Run(context.Background()), ErrRunning)
			p := Running(dir)
			assert.True(t, p.Kept)
			assert.Equal(t, os.Getpid(), p.Keeper)
			assert.False(t, p.Running)
		})
	}
}

func TestStartCommand(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		wantErr      bool
	}{
		{"clean", "exit 0", false},
		{"crash", "exit 3", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := StartCommand(exec.Command("sh", "-c", tc.script))
			require.NoError(t, err)
			assert.Positive(t, c.Pid())
			err = c.Wait()
			assert.Equal(t, tc.wantErr, err != nil, "error: %v", err)
		})
	}
	c, err := StartCommand(exec.Command("sleep", "30"))
	require.NoError(t, err)
	c.Terminate()
	assert.ErrorContains(t, c.Wait(), "terminated")
}

func TestProgram(t *testing.T) {
	var out strings.Builder
	child, err := Program([]string{"sh", "-c", "echo $X"}, []string{"X=run", "PATH=/usr/bin:/bin"}, &out, &out)()
	require.NoError(t, err)
	assert.Positive(t, child.Pid())
	require.NoError(t, child.Wait())
	assert.Equal(t, "run\n", out.String())
}
