package mocklog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Entry is one line of the mock log.
type Entry struct {
	Agent string    `json:"agent"`
	Pane  string    `json:"pane"`
	Seq   int       `json:"seq"`
	Mode  string    `json:"mode"` // submit, queued, steer, dialog, shell, command, diverged; a trace: what was emitted
	Text  string    `json:"text"`
	Time  time.Time `json:"time"`
}

// Append appends e to the log at path under an flock; an empty path
// logs nothing.
func Append(path string, e Entry) error {
	if path == "" {
		return nil
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return err
	}
	defer func() { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }() // Close releases it anyway
	_, err = f.Write(append(line, '\n'))
	return err
}

// Read reads every entry of the log at path. A last line with no newline
// yet is one Append is still writing (a reader can see a big write part
// done) and is left for the next Read.
func Read(path string) ([]Entry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for n := 1; ; n++ {
		line, rest, whole := bytes.Cut(data, []byte{'\n'})
		if !whole {
			return out, nil
		}
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			return out, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, e)
		data = rest
	}
}
