package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Locker serializes work on a key across processes, first come first
// served. Each caller takes a numbered ticket (a file it holds an flock on
// for as long as it waits or works) and goes when every lower ticket is
// gone. A waiter sleeps on the flock of the live ticket just below its
// own, which its holder's release (or death) ends: no waiter polls. A
// holder that dies releases its flock with it, and the next caller that
// looks removes its ticket, so a crashed process never blocks the queue.
type Locker struct {
	Dir string
}

// Lock blocks until key is held or ctx is done; the time spent waiting in
// the queue counts against ctx's deadline.
func (l Locker) Lock(ctx context.Context, key string) (func(), error) {
	if err := MkdirPrivate(l.Dir); err != nil {
		return nil, err
	}
	name := lockName(key)
	t, err := l.take(name)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", key, err)
	}
	for {
		first, below, err := l.first(name, t.seq)
		if err != nil {
			t.release()
			return nil, fmt.Errorf("lock %s: %w", key, err)
		}
		if first {
			return t.release, nil
		}
		select {
		case <-released(below):
		case <-ctx.Done():
			t.release()
			return nil, fmt.Errorf("lock %s: %w", key, ctx.Err())
		}
	}
}

// released returns a channel closed once no process holds the flock of
// the ticket at path any more (or the ticket is gone). The goroutine
// that sleeps on the flock ends then, also when nobody listens any more
// (a waiter that gave up): its holder lets go in the end.
func released(path string) chan struct{} {
	c := make(chan struct{})
	go func() {
		defer close(c)
		f, err := os.Open(path)
		if err != nil {
			return
		}
		defer f.Close()
		for {
			err := unix.Flock(int(f.Fd()), unix.LOCK_SH)
			if err == nil {
				_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
				return
			}
			if !errors.Is(err, unix.EINTR) {
				return
			}
		}
	}()
	return c
}

// ticket is one caller's place in a queue.
type ticket struct {
	seq  uint64
	path string
	f    *os.File
}

func (t *ticket) release() {
	os.Remove(t.path)
	_ = unix.Flock(int(t.f.Fd()), unix.LOCK_UN)
	t.f.Close()
}

// guard holds the queue's own short lock: tickets are numbered, created
// and cleaned up only under it, so a ticket is never seen before its
// holder has locked it.
func (l Locker) guard(name string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(l.Dir, name+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err == nil {
			return func() { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, err
		}
	}
}

// take numbers and locks a new ticket.
func (l Locker) take(name string) (*ticket, error) {
	unguard, err := l.guard(name)
	if err != nil {
		return nil, err
	}
	defer unguard()
	counter := filepath.Join(l.Dir, name+".seq")
	var seq uint64
	if b, err := os.ReadFile(counter); err == nil {
		seq, _ = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	}
	seq++
	if err := os.WriteFile(counter, []byte(strconv.FormatUint(seq, 10)+"\n"), 0o600); err != nil {
		return nil, err
	}
	path := filepath.Join(l.Dir, ticketName(name, seq))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return &ticket{seq: seq, path: path, f: f}, nil
}

// first reports whether no live ticket lower than seq remains, else the
// live ticket right below seq; tickets whose holder died are removed on
// the way.
func (l Locker) first(name string, seq uint64) (bool, string, error) {
	lower, err := l.lower(name, seq)
	if err != nil || len(lower) == 0 {
		return err == nil, "", err
	}
	for i := len(lower) - 1; i >= 0; i-- {
		if held(lower[i]) {
			return false, lower[i], nil
		}
	}
	// Every lower ticket looks dead: clean up under the guard, where no
	// ticket is half made, and look again.
	unguard, err := l.guard(name)
	if err != nil {
		return false, "", err
	}
	defer unguard()
	for _, path := range lower {
		if !held(path) {
			os.Remove(path)
		}
	}
	lower, err = l.lower(name, seq)
	if err != nil || len(lower) == 0 {
		return err == nil, "", err
	}
	return false, lower[len(lower)-1], nil
}

// lower lists the tickets of name numbered below seq, lowest first.
func (l Locker) lower(name string, seq uint64) ([]string, error) {
	entries, err := os.ReadDir(l.Dir)
	if err != nil {
		return nil, err
	}
	prefix := name + ".t"
	var out []string
	var nums []uint64
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(rest, 10, 64)
		if err != nil || n >= seq {
			continue
		}
		nums = append(nums, n)
	}
	slices.Sort(nums)
	for _, n := range nums {
		out = append(out, filepath.Join(l.Dir, ticketName(name, n)))
	}
	return out, nil
}

func ticketName(name string, seq uint64) string {
	return name + ".t" + strconv.FormatUint(seq, 10)
}

// held reports whether a process holds the flock of the ticket at path.
func held(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err == nil {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		return false
	}
	return true
}
