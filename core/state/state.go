package state

import (
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
// flock so that concurrent writers never interleave.
func AppendEvent(path string, v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("event: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("event log: %w", err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("event log: %w", err)
	}
	defer func() { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }() // Close releases it anyway
	if _, err := f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("event log: %w", err)
	}
	return nil
}
