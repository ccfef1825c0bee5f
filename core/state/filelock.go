package state

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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

// WriteHeld writes data to path atomically (as WriteFile) and holds an
// flock on the file until release, which also removes it: a record of a
// process's work (a waiting talk's request) that SweepUnheld removes once
// its process is gone, however it went.
func WriteHeld(path string, data []byte, perm os.FileMode) (release func(), err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (func(), error) {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	// Held before it has its name: a sweep never sees it unheld.
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fail(err)
	}
	return func() {
		os.Remove(path)
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}

// SweepUnheld removes the files of dir whose names end in suffix that no
// process holds (WriteHeld): those whose writer is gone.
func SweepUnheld(dir, suffix string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), suffix) || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if path := filepath.Join(dir, e.Name()); !held(path) {
			os.Remove(path)
		}
	}
}
