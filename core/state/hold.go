package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/partyhq/party/core/clock"
)

// A process that must run at most once per session (the review coordinator
// and its supervisor) holds an exclusive flock on a lock file for as long
// as it lives, and writes its pid in the file. The lock is the liveness:
// it goes when the process exits, however it exits, so a pid recycled by
// another program never reads as running. The pid is only there to signal
// the holder, and Holder gives it only while the lock is held (and, where
// /proc exists, only when that process has the file open).

// ErrHeld is a lock another process holds.
var ErrHeld = errors.New("held by another process")

// Hold takes the lock at path without waiting for another holder (a
// Holder check holding it for a moment is waited out, up to 100 ms) and
// records this process's pid in it. release gives it up; so does exiting.
func Hold(ctx context.Context, clk clock.Clock, path string) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	for try := 0; ; try++ {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if try == 20 {
			f.Close()
			pid, _ := Holder(path)
			return nil, fmt.Errorf("lock %s (pid %d): %w", path, pid, ErrHeld)
		}
		if err := clk.Sleep(ctx, 5*time.Millisecond); err != nil {
			f.Close()
			return nil, err
		}
	}
	if err = f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		_ = f.Truncate(0)
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}

// Holder reports whether a process holds the lock at path (tested with a
// non-blocking shared flock, which fails only while it is held) and the
// pid it recorded: 0 when held but the pid is not known yet (the holder
// is starting) or, where /proc exists, when the recorded process does not
// have the lock file open, so the pid is never a stranger's.
func Holder(path string) (pid int, held bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err == nil {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		return 0, false
	}
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err = strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 || !hasOpen(pid, f) {
		return 0, true
	}
	return pid, true
}

// hasOpen reports whether process pid has the file of f open. Without
// /proc (not Linux) it cannot tell and says yes.
func hasOpen(pid int, f *os.File) bool {
	if runtime.GOOS != "linux" {
		return true
	}
	want, err := f.Stat()
	if err != nil {
		return false
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if fi, err := os.Stat(dir + "/" + e.Name()); err == nil && os.SameFile(fi, want) {
			return true
		}
	}
	return false
}
