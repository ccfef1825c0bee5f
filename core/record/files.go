package record

import (
	"fmt"
	"os"
	"syscall"
)

// A recording holds what the agents printed and were sent, secrets that no
// pattern caught included: its directories are made 0700 and its files
// 0600, whatever the umask.

// MkdirPrivate makes dir and its missing parents with mode 0700. A
// directory that already exists keeps its mode: it is the user's.
func MkdirPrivate(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("recording dir: %w", err)
	}
	return nil
}

// Create opens path for writing, truncated, with mode 0600 (also when it
// existed with another mode). A symlink at path is refused: it would write
// the recording where someone else chose.
func Create(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, fmt.Errorf("recording: %w", err)
	}
	return f, nil
}

// WriteFile writes data to path as Create makes it.
func WriteFile(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("recording: %w", err)
	}
	return f.Close()
}
