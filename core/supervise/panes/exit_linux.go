package panes

import (
	"context"
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// watchExit calls ended once process pid has ended (a zombie has: it ran
// to its end), from a goroutine that waits on a pidfd in the runtime's
// poller (no thread, no poll) and returns then or when ctx ends. A pid
// already gone has ended at once. It says false when it cannot watch
// (Linux before 5.3 has no pidfd).
func watchExit(ctx context.Context, pid int, ended func()) bool {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if errors.Is(err, unix.ESRCH) {
		go ended() // (the caller holds its lock)
		return true
	}
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	rc, err := f.SyscallConn()
	if err == nil {
		err = f.SetReadDeadline(time.Time{}) // fails unless the poller took the fd
	}
	if err != nil {
		f.Close()
		return false
	}
	go func() {
		defer f.Close()
		stop := context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Unix(1, 0)) })
		defer stop()
		// A pidfd reads ready once its process has ended.
		err := rc.Read(func(fd uintptr) bool {
			n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
			return err != nil || n > 0
		})
		if err == nil {
			ended()
		}
	}()
	return true
}
