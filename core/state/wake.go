package state

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
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

// WakeDir is the directory of the wake sockets of a session state dir. Unix
// socket paths are limited to about 100 bytes, so it is a short directory
// named by a hash of the state dir under $XDG_RUNTIME_DIR/party (when that
// is short enough), else /tmp/party-UID.
func WakeDir(getenv func(string) string, stateDir string) string {
	h := sha256.Sum256([]byte(stateDir))
	name := hex.EncodeToString(h[:6])
	if d := getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) && len(d) < 40 {
		return filepath.Join(d, "party", name)
	}
	return filepath.Join("/tmp", "party-"+strconv.Itoa(os.Getuid()), name)
}

// Waiter receives wake-ups.
type Waiter struct {
	conn *net.UnixConn
	path string
	C    <-chan struct{}
}

// Listen registers a waiter in dir. Close it when done.
func Listen(dir string) (*Waiter, error) {
	// Socket paths are limited to ~100 bytes; the pid keeps names short.
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	path := filepath.Join(dir, strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(rnd[:])+".sock")
	var conn *net.UnixConn
	for try := 0; ; try++ {
		// The last waiter's Close may remove the directory at any moment
		// (MkdirAll then fails with "exists", the bind with "not exist"):
		// make it again.
		err := MkdirPrivate(dir)
		if err == nil {
			conn, err = net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
			if err == nil {
				break
			}
			err = fmt.Errorf("wake socket: %w", err)
		}
		if !(errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrExist)) || try == 9 {
			return nil, err
		}
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
	os.Remove(filepath.Dir(w.path)) // only when no other waiter is left in it
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

// ReadFrom returns the complete lines of the file at path from byte offset
// on, and the offset after the last complete line. A missing file has no
// lines; a partial last line is left for the next read.
func ReadFrom(path string, offset int64) ([][]byte, int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, offset, nil
	}
	if err != nil {
		return nil, offset, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, 0); err != nil {
		return nil, offset, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, offset, err
	}
	var lines [][]byte
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, data[:i])
		offset += int64(i + 1)
		data = data[i+1:]
	}
	return lines, offset, nil
}

// Size returns the size of the file at path, 0 when it does not exist.
func Size(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}
