package state

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRoot(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	r, err := Root(env(map[string]string{"XDG_STATE_HOME": "/x", "HOME": "/h"}))
	require.NoError(t, err)
	assert.Equal(t, "/x/party", r)
	r, err = Root(env(map[string]string{"XDG_STATE_HOME": "relative", "HOME": "/h"}))
	require.NoError(t, err)
	assert.Equal(t, "/h/.local/state/party", r, "a relative XDG_STATE_HOME is ignored, as the spec says")
	_, err = Root(env(nil))
	assert.Error(t, err)
}

func TestSessionDirSeparatesServers(t *testing.T) {
	a := SessionDir("/r", "/tmp/tmux-0/a", "my/sess ion")
	b := SessionDir("/r", "/tmp/tmux-0/b", "my/sess ion")
	assert.NotEqual(t, a, b)
	assert.Equal(t, "/r/sessions", filepath.Dir(a))
	assert.True(t, strings.HasPrefix(filepath.Base(a), "my_sess_ion-"))
	assert.Equal(t, a, SessionDir("/r", "/tmp/tmux-0/a", "my/sess ion"), "stable")
}

func TestSessionDirSeparatesNamesThatSanitizeAlike(t *testing.T) {
	seen := map[string]string{}
	for _, pair := range [][2]string{
		{"/s", "team a"}, {"/s", "team_a"}, {"/s", "team/a"}, {"/s", "a|b"}, {"/s", "a&b"}, {"/s", "a_b"},
		{"/s", "#(x)"}, {"/s", "_(x)"}, {"/s/", "x"}, {"/s", "/x"}, {"", "/s/x"}, {"/s/x", ""},
		{"/s", strings.Repeat("x", 100)}, {"/s", strings.Repeat("x", 101)},
	} {
		d := SessionDir("/r", pair[0], pair[1])
		if other, ok := seen[d]; ok {
			t.Errorf("%q and %q share %s", pair, other, d)
		}
		seen[d] = fmt.Sprint(pair)
		assert.LessOrEqual(t, len(filepath.Base(d)), 64+1+16)
	}
}

func TestWriteFileIsAtomicAndPrivate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	require.NoError(t, WriteFile(path, []byte("one"), 0o600))
	require.NoError(t, WriteFile(path, []byte("two"), 0o600))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "two", string(b))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temp files left")
}

func TestLockerSerializes(t *testing.T) {
	l := Locker{Dir: filepath.Join(t.TempDir(), "locks")}
	var (
		mu      sync.Mutex
		inside  int
		maxSeen int
		wg      sync.WaitGroup
	)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock, err := l.Lock(context.Background(), "%1")
			if !assert.NoError(t, err) {
				return
			}
			mu.Lock()
			inside++
			maxSeen = max(maxSeen, inside)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
			mu.Lock()
			inside--
			mu.Unlock()
			unlock()
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, maxSeen, "never two holders at once")
	st, err := os.Stat(l.Dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm())
}

func TestLockHonoursContext(t *testing.T) {
	l := Locker{Dir: t.TempDir()}
	unlock, err := l.Lock(context.Background(), "k")
	require.NoError(t, err)
	defer unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = l.Lock(ctx, "k")
	assert.ErrorIs(t, err, context.Canceled)
}

func TestAppendEventConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			assert.NoError(t, AppendEvent(path, map[string]any{"i": i, "pad": strings.Repeat("x", 5000)}))
		}(i)
	}
	wg.Wait()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	assert.Len(t, lines, 20)
	for _, l := range lines {
		assert.True(t, strings.HasPrefix(l, `{"i":`) && strings.HasSuffix(l, `"}`), "intact line")
	}
}

func TestWakeReachesEveryWaiter(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wake")
	a, err := Listen(dir)
	require.NoError(t, err)
	defer a.Close()
	b, err := Listen(dir)
	require.NoError(t, err)
	stale, err := Listen(dir)
	require.NoError(t, err)
	_ = stale.conn.Close() // a waiter that died without unregistering

	Wake(dir)
	for _, w := range []*Waiter{a, b} {
		select {
		case <-w.C:
		case <-time.After(5 * time.Second):
			t.Fatal("waiter not woken")
		}
	}
	_, err = os.Stat(stale.path)
	assert.True(t, os.IsNotExist(err), "a dead waiter's socket is removed")
}

func TestTheLastWaiterRemovesItsDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wake")
	a, err := Listen(dir)
	require.NoError(t, err)
	b, err := Listen(dir)
	require.NoError(t, err)
	require.NoError(t, a.Close())
	assert.DirExists(t, dir, "b still waits in it")
	require.NoError(t, b.Close())
	assert.NoDirExists(t, dir)

	// Waiters that come and go at once never fail for the directory.
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				w, err := Listen(dir)
				if !assert.NoError(t, err) {
					return
				}
				_ = w.Close()
			}
		}()
	}
	wg.Wait()
}

func TestRuntimeDirIsPrivateAndOurs(t *testing.T) {
	short, err := os.MkdirTemp("/tmp", "prt")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(short) })
	env := func(k string) string {
		if k == "XDG_RUNTIME_DIR" {
			return short
		}
		return ""
	}
	dir, err := RuntimeDir(env)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(short, "party"), dir)
	fi, err := os.Lstat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	wake, err := WakeDir(env, "/state/s")
	require.NoError(t, err)
	assert.Equal(t, dir, filepath.Dir(wake))

	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"a symlink to a directory someone else chose", func(t *testing.T, dir string) {
			require.NoError(t, os.Symlink(t.TempDir(), dir))
		}, "is a symlink"},
		{"open to others", func(t *testing.T, dir string) {
			require.NoError(t, os.Mkdir(dir, 0o755))
			require.NoError(t, os.Chmod(dir, 0o755))
		}, "has mode -rwxr-xr-x, want 0700"},
		{"a file", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(dir, nil, 0o600))
		}, "is not a directory"},
		{"another user's", func(t *testing.T, dir string) {
			if os.Getuid() != 0 {
				t.Skip("needs root to make a directory of another user")
			}
			require.NoError(t, os.Mkdir(dir, 0o700))
			require.NoError(t, os.Chown(dir, 65534, 65534))
		}, "belongs to uid 65534"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, os.RemoveAll(dir))
			tt.setup(t, dir)
			_, err := RuntimeDir(env)
			assert.ErrorIs(t, err, ErrRuntimeDir)
			assert.ErrorContains(t, err, tt.want)
			_, err = ListenSession(env, "/state/s")
			assert.ErrorIs(t, err, ErrRuntimeDir, "no socket in it")
		})
	}
}

func TestLockerFirstComeFirstServed(t *testing.T) {
	l := Locker{Dir: t.TempDir()}
	unlock, err := l.Lock(context.Background(), "%1")
	require.NoError(t, err)
	tickets := func() int {
		m, _ := filepath.Glob(filepath.Join(l.Dir, "1.t*"))
		return len(m)
	}
	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
	)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u, err := l.Lock(context.Background(), "%1")
			if !assert.NoError(t, err) {
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			u()
		}()
		// The next caller comes only once this one has its ticket.
		for tickets() < i+2 {
			time.Sleep(time.Millisecond)
		}
	}
	unlock()
	wg.Wait()
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5}, order)
	assert.Zero(t, tickets(), "every ticket removed")
}

func TestLockerSkipsDeadTickets(t *testing.T) {
	l := Locker{Dir: t.TempDir()}
	// A ticket whose holder died: the file stays, its flock went with it.
	require.NoError(t, os.WriteFile(filepath.Join(l.Dir, "k.t1"), nil, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(l.Dir, "k.seq"), []byte("1\n"), 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	unlock, err := l.Lock(ctx, "k")
	require.NoError(t, err)
	unlock()
	_, err = os.Stat(filepath.Join(l.Dir, "k.t1"))
	assert.True(t, os.IsNotExist(err), "the dead ticket is removed")
}

func TestReportReachesWaiters(t *testing.T) {
	run := os.Getenv("XDG_RUNTIME_DIR") // the test home's: short enough for sockets
	getenv := func(k string) string {
		if k == "XDG_RUNTIME_DIR" {
			return run
		}
		return ""
	}
	w, err := ListenSession(getenv, "/state/s")
	require.NoError(t, err)
	defer w.Close()
	_, ok := w.Report("%1")
	assert.False(t, ok)
	ReportSession(getenv, "/state/s", Report{Pane: "%1", Error: "disk full", Event: []byte(`{"kind":"turn-complete"}`)})
	select {
	case <-w.C:
	case <-time.After(5 * time.Second):
		t.Fatal("no wake-up")
	}
	r, ok := w.Report("%1")
	require.True(t, ok)
	assert.Equal(t, "disk full", r.Error)
	assert.JSONEq(t, `{"kind":"turn-complete"}`, string(r.Event))
	// A report too long for a datagram goes without its event.
	ReportSession(getenv, "/state/s", Report{Pane: "%2", Error: "x", Event: []byte(`"` + strings.Repeat("a", 20000) + `"`)})
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if r, ok = w.Report("%2"); ok {
			break
		}
	}
	require.True(t, ok)
	assert.Empty(t, r.Event)
}

// TestLockerWakesOnRelease: a waiter sleeps on the flock of the ticket
// below its own, not on a poll: with an hour between looks it still takes
// the lock as soon as the holder lets go.
func TestLockerWakesOnRelease(t *testing.T) {
	l := Locker{Dir: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	unlock, err := l.Lock(ctx, "k")
	require.NoError(t, err)
	got := make(chan time.Time, 1)
	go func() {
		u, err := l.Lock(ctx, "k")
		if err == nil {
			got <- time.Now()
			u()
		}
	}()
	time.Sleep(100 * time.Millisecond) // the waiter is asleep
	released := time.Now()
	unlock()
	select {
	case at := <-got:
		assert.Less(t, at.Sub(released), time.Second)
	case <-ctx.Done():
		t.Fatal("the waiter never woke")
	}

	// A waiter whose context ends gives up at once, holding nothing.
	unlock, err = l.Lock(ctx, "k")
	require.NoError(t, err)
	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancelShort()
	_, err = l.Lock(short, "k")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	unlock()
	u, err := l.Lock(ctx, "k")
	require.NoError(t, err, "the one that gave up left no ticket behind")
	u()
}

func TestWriteHeldSurvivesSweepsUntilReleased(t *testing.T) {
	dir := t.TempDir()
	release, err := WriteHeld(filepath.Join(dir, "a.json"), []byte("{}\n"), 0o600)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "orphan.json"), []byte("{}\n"), 0o600)) // its writer died
	SweepUnheld(dir, ".json")
	_, err = os.Stat(filepath.Join(dir, "a.json"))
	assert.NoError(t, err, "held: kept")
	_, err = os.Stat(filepath.Join(dir, "orphan.json"))
	assert.ErrorIs(t, err, os.ErrNotExist, "held by nobody: removed")
	release()
	_, err = os.Stat(filepath.Join(dir, "a.json"))
	assert.ErrorIs(t, err, os.ErrNotExist, "release removes it")
}

// A last line an append left without its newline (a full disk, a crash)
// is ended before the next event: that event is a line of its own, and
// the offsets readers hold into the log stay where they were.
func TestAppendEventAfterATornLine(t *testing.T) {
	long := `{"kind":"stop","pad":"` + strings.Repeat("x", 200<<10) // past one 64 KiB read
	tests := []struct {
		name, before, want string
	}{
		{"empty", "", `{"i":1}` + "\n"},
		{"whole", `{"i":0}` + "\n", `{"i":0}` + "\n" + `{"i":1}` + "\n"},
		{"torn", `{"i":0}` + "\n" + `{"kind":"sto`, `{"i":0}` + "\n" + `{"kind":"sto` + "\n" + `{"i":1}` + "\n"},
		{"only torn", `{"kind":"sto`, `{"kind":"sto` + "\n" + `{"i":1}` + "\n"},
		{"long torn", `{"i":0}` + "\n" + long, `{"i":0}` + "\n" + long + "\n" + `{"i":1}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), EventLog)
			require.NoError(t, os.WriteFile(path, []byte(tt.before), 0o600))
			require.NoError(t, AppendEvent(path, map[string]int{"i": 1}))
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(b))
			lines, next, err := ReadFrom(path, int64(len(tt.before)))
			require.NoError(t, err)
			assert.Equal(t, int64(len(tt.want)), next)
			assert.Equal(t, `{"i":1}`, string(lines[len(lines)-1]), "a reader at the old end reads the event whole")
		})
	}
}

func TestTornTail(t *testing.T) {
	long := strings.Repeat("y", 100<<10)
	tests := []struct {
		name, log string
		whole     int64
		torn      string
	}{
		{"empty", "", 0, ""},
		{"whole", "a\nb\n", 4, ""},
		{"torn", "a\nb", 2, "b"},
		{"all torn", "ab", 0, "ab"},
		{"long torn", "a\n" + long, 2, long},
		{"long whole", long + "\n", int64(len(long) + 1), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log")
			require.NoError(t, os.WriteFile(path, []byte(tt.log), 0o600))
			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			whole, torn, err := TornTail(f)
			require.NoError(t, err)
			assert.Equal(t, tt.whole, whole)
			assert.Equal(t, tt.torn, string(torn))
		})
	}
}
