package state

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// A waker lets processes that append to a session's event log wake the
// processes waiting on it at once, without polling: each waiter listens on
// a unix datagram socket in the session's wake directory, and Wake sends
// an empty datagram to every socket there. Sockets of dead waiters are
// removed by the next Wake.

// EventLog is the name of the event log in a session state dir.
const EventLog = "events.jsonl"

// WakeDir is the wake directory of a session state dir.
func WakeDir(stateDir string) string { return filepath.Join(stateDir, "wake") }

// Waiter receives wake-ups.
type Waiter struct {
	conn *net.UnixConn
	path string
	C    <-chan struct{}
}

// Listen registers a waiter in dir. Close it when done.
func Listen(dir string) (*Waiter, error) {
	if err := MkdirPrivate(dir); err != nil {
		return nil, err
	}
	// Socket paths are limited to ~100 bytes; the pid keeps names short.
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	path := filepath.Join(dir, strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(rnd[:])+".sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return nil, fmt.Errorf("wake socket: %w", err)
	}
	c := make(chan struct{}, 1)
	go func() {
		buf := make([]byte, 16)
		for {
			if _, _, err := conn.ReadFromUnix(buf); err != nil {
				close(c)
				return
			}
			select {
			case c <- struct{}{}:
			default: // a wake-up is already pending
			}
		}
	}()
	return &Waiter{conn: conn, path: path, C: c}, nil
}

// Close unregisters the waiter.
func (w *Waiter) Close() error {
	os.Remove(w.path)
	return w.conn.Close()
}

// Wake wakes every waiter registered in dir. It never blocks.
func Wake(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sock") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
		if err != nil {
			if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
				os.Remove(path) // its waiter is gone
			}
			continue
		}
		_ = conn.SetWriteBuffer(64)
		_, _ = conn.Write([]byte{1})
		conn.Close()
	}
}
