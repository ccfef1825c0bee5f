package supervise

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/daemon"
)

func TestAwaitServingEndsWithTheGiveUp(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, WriteProc(dir, ProcState{State: ProcGaveUp, At: time.Now(), Error: &Failure{Code: "STORE_CORRUPT", Message: "bad"}}))
	err := AwaitServing(context.Background(), clock.Real{}, dir)
	var down *DownError
	require.ErrorAs(t, err, &down)
	assert.True(t, down.GaveUp)
	assert.Equal(t, "bad", down.Message)
	assert.Equal(t, "STORE_CORRUPT", down.Code)
	assert.ErrorIs(t, err, ErrFailed)
	assert.Equal(t, filepath.Join(dir, daemon.LogFile), down.Log)
}

func TestProcFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	_, ok := ReadProc(dir)
	assert.False(t, ok, "no file")
	want := ProcState{State: ProcServing, PID: 7, At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Socket: "/run/sv.sock"}
	require.NoError(t, WriteProc(dir, want))
	got, ok := ReadProc(dir)
	require.True(t, ok)
	assert.Equal(t, want, got)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ProcFile), []byte("{half"), 0o600))
	_, ok = ReadProc(dir)
	assert.False(t, ok, "a file that does not parse")
}

// TestKeepGivesUpWithTheLastReason: after a crash loop the keeper
// records that it gave up, with the reason the last run recorded.
func TestKeepGivesUpWithTheLastReason(t *testing.T) {
	dir := t.TempDir()
	p := &Process{Dir: dir, Clock: &virtualClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, Stderr: &nopWriter{}}
	runs := 0
	err := p.Keep(context.Background(), func() (daemon.Child, error) {
		runs++
		require.NoError(t, WriteProc(dir, ProcState{State: ProcFailed, PID: 100 + runs, Error: &Failure{Code: "STORE_CORRUPT", Message: "bad"}}))
		return exitedChild{pid: 100 + runs, err: errors.New("exit status 1")}, nil
	})
	var down *DownError
	require.ErrorAs(t, err, &down)
	assert.True(t, down.GaveUp)
	assert.Equal(t, "STORE_CORRUPT", down.Code)
	assert.Equal(t, daemon.CrashLimit, runs)
	d, ok := ReadProc(dir)
	require.True(t, ok)
	assert.Equal(t, ProcGaveUp, d.State)
	assert.Equal(t, os.Getpid(), d.PID)
}

func TestCheckWorkspace(t *testing.T) {
	usage := errors.New("usage")
	for _, tc := range []struct {
		name    string
		allowed []string
		cwd     string
		ok      bool
	}{
		{"none set: every one", nil, "/anywhere", true},
		{"the workspace itself", []string{"/w"}, "/w", true},
		{"under it", []string{"/x", "/w"}, "/w/a/b", true},
		{"beside it", []string{"/w"}, "/wx", false},
		{"above it", []string{"/w/a"}, "/w", false},
		{"a name that starts with dots", []string{"/w"}, "/w/..a", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckWorkspace(tc.allowed, tc.cwd, usage)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, usage)
			}
		})
	}
}

// virtualClock is a clock whose sleeps move it at once; its timers are
// the wall clock's.
type virtualClock struct {
	clock.Real
	now time.Time
}

func (c *virtualClock) Now() time.Time { return c.now }
func (c *virtualClock) Sleep(ctx context.Context, d time.Duration) error {
	c.now = c.now.Add(d)
	return ctx.Err()
}

type nopWriter struct{}

func (nopWriter) Write(b []byte) (int, error) { return len(b), nil }

type exitedChild struct {
	pid int
	err error
}

func (c exitedChild) Pid() int    { return c.pid }
func (c exitedChild) Wait() error { return c.err }
func (c exitedChild) Terminate()  {}
