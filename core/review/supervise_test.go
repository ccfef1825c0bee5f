package review

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

// fakeChild is one run of the coordinator: it exits with exit when Wait
// is called, or, with hang set, when terminated.
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

func TestSupervisor(t *testing.T) {
	crash := errors.New("exit status 2")
	for _, tc := range []struct {
		name     string
		runs     []*fakeChild
		cancel   bool // cancel the context once the last run has started
		want     []string
		wantTime time.Duration // virtual time the supervisor slept
	}{
		{
			name: "clean exit",
			runs: []*fakeChild{{pid: 10}},
			want: []string{"supervisor: coordinator exited cleanly"},
		},
		{
			name: "crashes are restarted after the delay",
			runs: []*fakeChild{{pid: 10, exit: crash}, {pid: 11, exit: crash}, {pid: 12}},
			want: []string{
				"supervisor: coordinator (pid 10) crashed: exit status 2; restarting in 2s",
				"supervisor: coordinator (pid 11) crashed: exit status 2; restarting in 2s",
				"supervisor: coordinator exited cleanly",
			},
			wantTime: 2 * RestartDelay,
		},
		{
			name:   "stopped: the coordinator is terminated",
			runs:   []*fakeChild{{pid: 10, exit: crash}, {pid: 11, hang: true, exit: errors.New("signal: terminated")}},
			cancel: true,
			want: []string{
				"supervisor: coordinator (pid 10) crashed: exit status 2; restarting in 2s",
				"supervisor: stopped (coordinator: signal: terminated)",
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
			s := &Supervisor{Dir: t.TempDir(), Clock: clk, Logf: log.logf, Start: func() (Child, error) {
				require.Less(t, started, len(tc.runs), "runs started")
				c := tc.runs[started]
				c.terminated = make(chan struct{})
				started++
				if tc.cancel && started == len(tc.runs) {
					cancel()
				}
				return c, nil
			}}
			require.NoError(t, s.Run(ctx))
			assert.Equal(t, len(tc.runs), started, "runs started")
			assert.Equal(t, tc.want, []string(log))
			assert.Equal(t, tc.wantTime, clk.now.Sub(t0), "time slept")
			_, held := state.Holder(filepath.Join(s.Dir, SupervisorLock))
			assert.False(t, held, "the lock is released")
		})
	}
}

func TestSupervisorCrashLoop(t *testing.T) {
	crash := errors.New("exit status 1")
	clk := &fakeClock{now: t0}
	var log logLines
	started := 0
	s := &Supervisor{Dir: t.TempDir(), Clock: clk, Logf: log.logf, MaxCrashes: 3, CrashWindow: time.Minute,
		Start: func() (Child, error) {
			started++
			return &fakeChild{pid: 9 + started, exit: crash, terminated: make(chan struct{})}, nil
		}}
	err := s.Run(context.Background())
	require.ErrorIs(t, err, ErrCrashLoop)
	assert.ErrorIs(t, err, crash, "the last crash's error is kept")
	assert.Equal(t, 3, started, "runs started")
	assert.Equal(t, []string{
		"supervisor: coordinator (pid 10) crashed: exit status 1; restarting in 2s",
		"supervisor: coordinator (pid 11) crashed: exit status 1; restarting in 2s",
		"supervisor: coordinator (pid 12) crashed: exit status 1; 3 crashes within 1m0s: giving up",
	}, []string(log))
	_, held := state.Holder(filepath.Join(s.Dir, SupervisorLock))
	assert.False(t, held, "the lock is released")
}

// TestSupervisorCrashLoopCountsRunsThatNeverServed: runs that served
// before they crashed (killed mid-work) are restarted every time; the
// count of a loop starts again at each, so runs that fail before they get
// going give up only when crashLimit of them follow each other.
func TestSupervisorCrashLoopCountsRunsThatNeverServed(t *testing.T) {
	crash := errors.New("signal: killed")
	clk := &fakeClock{now: t0}
	var log logLines
	started := 0
	served := map[int]bool{10: true, 11: true, 12: true, 13: true, 14: true, 16: true}
	s := &Supervisor{Dir: t.TempDir(), Clock: clk, Logf: log.logf, MaxCrashes: 3, CrashWindow: time.Minute,
		Served: func(pid int) bool { return served[pid] },
		Start: func() (Child, error) {
			started++
			return &fakeChild{pid: 9 + started, exit: crash, terminated: make(chan struct{})}, nil
		}}
	err := s.Run(context.Background())
	require.ErrorIs(t, err, ErrCrashLoop)
	// 10-14 served; 15 did not; 16 served (the count starts again); 17, 18
	// did not: with 16's crash, three within the window.
	assert.Equal(t, 9, started, "runs started")
	assert.Equal(t, "supervisor: coordinator (pid 18) crashed: signal: killed; 3 crashes within 1m0s: giving up", log[len(log)-1])
}

func TestSupervisorStartFails(t *testing.T) {
	s := &Supervisor{Dir: t.TempDir(), Clock: &fakeClock{now: t0}, Logf: t.Logf,
		Start: func() (Child, error) { return nil, exec.ErrNotFound }}
	err := s.Run(context.Background())
	assert.ErrorIs(t, err, exec.ErrNotFound)
	assert.ErrorContains(t, err, "start coordinator: ")
}

func TestSupervisorOnce(t *testing.T) {
	dir := t.TempDir()
	clk := &fakeClock{now: t0}
	release, err := state.Hold(context.Background(), clk, filepath.Join(dir, SupervisorLock))
	require.NoError(t, err)
	defer release()
	s := &Supervisor{Dir: dir, Clock: clk, Logf: t.Logf, Start: func() (Child, error) {
		t.Fatal("a second supervisor started the coordinator")
		return nil, nil
	}}
	assert.ErrorIs(t, s.Run(context.Background()), ErrRunning)
	p := Running(dir)
	assert.True(t, p.Supervised)
	assert.Equal(t, os.Getpid(), p.Supervisor)
	assert.False(t, p.Running)
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

func TestStartAndStop(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "review")
	clk := &fakeClock{now: t0}
	var release func()
	require.NoError(t, Start(ctx, clk, dir, 4, func() error {
		var err error
		release, err = state.Hold(ctx, clk, filepath.Join(dir, CoordinatorLock))
		return err
	}))
	s, err := Load(dir)
	require.NoError(t, err, "Start initializes the state")
	assert.Equal(t, 4, s.MaxIterations)
	assert.True(t, Running(dir).Running)
	assert.ErrorIs(t, Start(ctx, clk, dir, 4, func() error {
		t.Fatal("started twice")
		return nil
	}), ErrRunning)

	release()
	assert.NoError(t, Stop(ctx, clk, dir), "nothing runs: nothing to stop")

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

// TestStopHelper is not a test: TestStop runs it in a process of its own
// that holds the coordinator's lock of $REVIEW_HOLD until it is killed.
func TestStopHelper(t *testing.T) {
	dir := os.Getenv("REVIEW_HOLD")
	if dir == "" {
		t.Skip("helper process of TestStop")
	}
	_, err := state.Hold(context.Background(), clock.Real{}, filepath.Join(dir, CoordinatorLock))
	require.NoError(t, err)
	_, _ = os.Stdout.WriteString("held\n")
	time.Sleep(time.Minute)
}

// TestStop stops a real process that holds the coordinator's lock.
func TestStop(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStopHelper$")
	cmd.Env = append(os.Environ(), "REVIEW_HOLD="+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { // ends when the helper does
		buf := make([]byte, 5)
		_, _ = io.ReadFull(out, buf)
		done <- cmd.Wait()
	}()
	for i := 0; i < 1000 && !Running(dir).Running; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	require.True(t, Running(dir).Running, "the helper holds the lock")
	assert.Equal(t, cmd.Process.Pid, Running(dir).PID)
	require.NoError(t, Stop(context.Background(), clock.Real{}, dir))
	assert.False(t, Running(dir).Running)
	assert.ErrorContains(t, <-done, "terminated", "the helper got SIGTERM")
}
