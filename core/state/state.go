package state

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/sys/unix"
)

// Root returns party's state root: $XDG_STATE_HOME/party, else
// ~/.local/state/party.
func Root(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "party"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("state dir: neither XDG_STATE_HOME nor HOME is set")
	}
	return filepath.Join(home, ".local", "state", "party"), nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// SessionDir returns the directory of a session on a server: the session
// name made safe for a file name (at most 64 bytes of it), then a hash of
// the server (its socket) and the exact name. Names that read alike once
// made safe ("team a" and "team_a", "a|b" and "a&b") and equal names on two
// servers never share a directory.
func SessionDir(root, server, session string) string {
	h := sha256.New()
	for _, part := range []string{server, session} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:]) // length-prefixed: no two pairs hash the same input
		h.Write([]byte(part))
	}
	name := unsafeName.ReplaceAllString(session, "_")
	if len(name) > 64 {
		name = name[:64]
	}
	return filepath.Join(root, "sessions", name+"-"+hex.EncodeToString(h.Sum(nil)[:8]))
}

// MkdirPrivate creates dir and its parents with mode 0700.
func MkdirPrivate(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	return nil
}

// WriteFile writes data to path atomically: a temp file in the same
// directory, fsync, rename.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func lockName(key string) string {
	return strings.Trim(unsafeName.ReplaceAllString(key, "_"), "_")
}

// AppendEvent appends v as one JSON line to the log at path, under an
// flock so that concurrent writers never interleave. A last line an
// earlier append left without its newline (a crash, a full disk: see
// TornTail) is ended first, so v is a line of its own, never glued onto
// the fragment, which readers skip as a line that does not parse. The
// fragment is ended where it is, not cut off: readers hold offsets into
// the log (a talk's, the notifier's, a recording's), which must never
// point past its end nor into the next event.
func AppendEvent(path string, v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("event: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("event log: %w", err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("event log: %w", err)
	}
	defer func() { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }() // Close releases it anyway
	_, torn, err := TornTail(f)
	if err != nil {
		return fmt.Errorf("event log %s: %w", path, err)
	}
	if len(torn) > 0 {
		line = append([]byte{'\n'}, line...)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("event log: %w", err)
	}
	return nil
}

// TornTail reads the end of the log f: whole is its size up to the end of
// its last whole line, torn what follows (a last line an append left
// without its newline: a crash, a full disk), empty when the log ends in
// a newline. Logs of lines (the session's event log, pm's audit log)
// repair such a tail before they append.
func TornTail(f *os.File) (whole int64, torn []byte, err error) {
	st, err := f.Stat()
	if err != nil {
		return 0, nil, err
	}
	size := st.Size()
	if size == 0 {
		return 0, nil, nil
	}
	tail := make([]byte, min(size, 64<<10))
	for {
		if _, err := f.ReadAt(tail, size-int64(len(tail))); err != nil {
			return 0, nil, err
		}
		if tail[len(tail)-1] == '\n' {
			return size, nil, nil
		}
		if i := bytes.LastIndexByte(tail, '\n'); i >= 0 || int64(len(tail)) == size {
			return size - int64(len(tail)-i-1), tail[i+1:], nil
		}
		// A last line longer than the tail read: read more.
		tail = make([]byte, min(size, int64(len(tail))*4))
	}
}
