package state

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
// named by a hash of the state dir in RuntimeDir.
func WakeDir(getenv func(string) string, stateDir string) (string, error) {
	base, err := RuntimeDir(getenv)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(stateDir))
	return filepath.Join(base, hex.EncodeToString(h[:6])), nil
}

// ListenSession registers a waiter for the session whose state dir is
// stateDir (Listen in its WakeDir).
func ListenSession(getenv func(string) string, stateDir string) (*Waiter, error) {
	dir, err := WakeDir(getenv, stateDir)
	if err != nil {
		return nil, err
	}
	return Listen(dir)
}

// WakeSession wakes the waiters of the session whose state dir is
// stateDir. Without a usable runtime dir there are none to wake: waiters
// could not listen either.
func WakeSession(getenv func(string) string, stateDir string) {
	if dir, err := WakeDir(getenv, stateDir); err == nil {
		Wake(dir)
	}
}

// ErrRuntimeDir is a runtime directory party cannot trust with its sockets.
var ErrRuntimeDir = errors.New("unsafe runtime directory")

// RuntimeDir returns the directory party keeps its sockets in:
// $XDG_RUNTIME_DIR/party when XDG_RUNTIME_DIR is set, absolute and short
// enough for socket paths, else /tmp/party-UID. Either is made with mode
// 0700 when missing and then checked, without following a symlink: a
// directory owned by this user that nobody else can enter. Anything else
// (another user made it first, or a symlink) is an error wrapping
// ErrRuntimeDir, never a directory someone else controls.
func RuntimeDir(getenv func(string) string) (string, error) {
	dir := filepath.Join("/tmp", "party-"+strconv.Itoa(os.Getuid()))
	if d := getenv("XDG_RUNTIME_DIR"); FitsRuntimeDir(d) {
		dir = filepath.Join(d, "party")
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("runtime dir: %w", err)
	}
	if err := checkPrivateDir(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// FitsRuntimeDir reports whether d can be party's XDG_RUNTIME_DIR: an
// absolute path short enough for the socket paths under it.
func FitsRuntimeDir(d string) bool { return filepath.IsAbs(d) && len(d) < 40 }

// checkPrivateDir checks that dir itself (not what a symlink points to) is
// a directory of this user with no access for group or others.
func checkPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("runtime dir: %w", err)
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("runtime dir %s is a symlink; remove it, or set XDG_RUNTIME_DIR: %w", dir, ErrRuntimeDir)
	case !fi.IsDir():
		return fmt.Errorf("runtime dir %s is not a directory; remove it, or set XDG_RUNTIME_DIR: %w", dir, ErrRuntimeDir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("runtime dir %s belongs to uid %d, not to you (uid %d); set XDG_RUNTIME_DIR to a directory of yours: %w",
			dir, st.Uid, os.Getuid(), ErrRuntimeDir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("runtime dir %s has mode %v, want 0700 (chmod 700 it): %w", dir, fi.Mode().Perm(), ErrRuntimeDir)
	}
	return nil
}

// Waiter receives wake-ups, and the reports of processes that could not
// append to the session's event log (Report).
type Waiter struct {
	conn *net.UnixConn
	path string
	C    <-chan struct{}

	mu      sync.Mutex
	reports map[string]Report // the last report of each pane
}

// A Report is sent to a session's waiters, instead of a plain wake-up, by
// a process that could not append an event to the session's event log (a
// read-only or full state dir): without it a waiter would wait for an
// event that never comes.
type Report struct {
	Pane  string          `json:"pane"`
	Error string          `json:"error"`
	Event json.RawMessage `json:"event,omitempty"` // what it could not record, in short
}

// maxReport bounds a report's datagram.
const maxReport = 16 << 10

// ReportSession sends r to the waiters of the session whose state dir is
// stateDir. An event too long for a datagram goes without its event.
func ReportSession(getenv func(string) string, stateDir string, r Report) {
	b, err := json.Marshal(r)
	if err == nil && len(b) > maxReport {
		r.Event = nil
		b, err = json.Marshal(r)
	}
	if dir, derr := WakeDir(getenv, stateDir); derr == nil && err == nil {
		send(dir, b)
	}
}

// Report returns the last report about pane, if one came.
func (w *Waiter) Report(pane string) (Report, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.reports[pane]
	return r, ok
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
		// make it again. Each retry means another waiter closed in between;
		// 10 were too few for 8 waiters coming and going on a loaded
		// machine (the test below failed once in many runs).
		err := os.Mkdir(dir, 0o700)
		if errors.Is(err, os.ErrExist) {
			err = checkPrivateDir(dir)
		}
		if err == nil {
			conn, err = net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
			if err == nil {
				break
			}
			err = fmt.Errorf("wake socket: %w", err)
		}
		if !(errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrExist)) || try == 99 {
			return nil, err
		}
	}
	send(dir, nil) // the sockets of waiters that died go
	c := make(chan struct{}, 1)
	w := &Waiter{conn: conn, path: path, C: c, reports: map[string]Report{}}
	go func() {
		buf := make([]byte, maxReport+1)
		for {
			n, _, err := conn.ReadFromUnix(buf)
			if err != nil {
				close(c)
				return
			}
			var r Report
			if n > 1 && json.Unmarshal(buf[:n], &r) == nil && r.Pane != "" {
				w.mu.Lock()
				w.reports[r.Pane] = r
				w.mu.Unlock()
			}
			select {
			case c <- struct{}{}:
			default: // a wake-up is already pending
			}
		}
	}()
	return w, nil
}

// Close unregisters the waiter.
func (w *Waiter) Close() error {
	os.Remove(w.path)
	os.Remove(filepath.Dir(w.path)) // only when no other waiter is left in it
	return w.conn.Close()
}

// Wake wakes every waiter registered in dir. It never blocks.
func Wake(dir string) { send(dir, []byte{1}) }

// SweepSession removes the wake sockets of the session whose state dir is
// stateDir that no waiter listens on any more (a killed process leaves
// its socket behind), and the wake dir itself once empty.
func SweepSession(getenv func(string) string, stateDir string) {
	if dir, err := WakeDir(getenv, stateDir); err == nil {
		send(dir, nil)
		os.Remove(dir) // only when empty
	}
}

// send sends msg to every waiter registered in dir (nil sends nothing,
// and only removes the sockets of dead waiters). It never blocks.
func send(dir string, msg []byte) {
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
		if msg != nil {
			_ = conn.SetWriteBuffer(max(64, 2*len(msg)))
			_, _ = conn.Write(msg)
		}
		_ = conn.Close()
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
