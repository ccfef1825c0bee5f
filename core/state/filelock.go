package state

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// LockFile serializes, among party's processes, the reading, merging and
// writing of a file several of them change (a folder's Gemini settings,
// a config file, the agents registry): it blocks until it holds an flock
// on a lock file named by path's absolute name, in root's locks
// directory (nothing is added beside the user's file), and returns its
// release. A process that dies releases it with it. Hold it for the whole
// read-merge-write, never while waiting on anything else.
func LockFile(root, path string) (unlock func(), err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, "locks", "files")
	if err := MkdirPrivate(dir); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	h := sha256.Sum256([]byte(abs))
	f, err := os.OpenFile(filepath.Join(dir, hex.EncodeToString(h[:8])+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
	}
	return func() {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
