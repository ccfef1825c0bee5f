package record

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCastRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	start := time.Unix(1700000000, 0)
	r, err := NewRedactor(DefaultRedactions)
	require.NoError(t, err)
	c, err := NewCast(&buf, Header{Width: 80, Height: 24, Party: PaneInfo{Pane: "%1", Role: "claude", Agent: "claude"}}, start, r)
	require.NoError(t, err)

	// A UTF-8 character split across chunks, a secret split across chunks.
	word := []byte("日本語\n")
	require.NoError(t, c.Output(start.Add(time.Second), word[:4]))
	require.NoError(t, c.Output(start.Add(2*time.Second), word[4:]))
	require.NoError(t, c.Output(start.Add(3*time.Second), []byte("key: sk-ant-abcdefghij")))
	require.NoError(t, c.Output(start.Add(4*time.Second), []byte("KLMNOPQRSTUVWXYZ0123 done\n")))
	require.NoError(t, c.Input(start.Add(5*time.Second), "use AKIAABCDEFGHIJKLMNOP please"))
	require.NoError(t, c.Resize(start.Add(6*time.Second), 100, 30))
	require.NoError(t, c.Output(start.Add(7*time.Second), []byte("tail")))
	require.NoError(t, c.Flush())

	assert.NotContains(t, buf.String(), "sk-ant-")
	assert.NotContains(t, buf.String(), "AKIA")
	assert.NotContains(t, buf.String(), `\ufffd`, "no split character mangled")

	h, events, err := Read(&buf)
	require.NoError(t, err)
	assert.Equal(t, 2, h.Version)
	assert.Equal(t, "claude", h.Party.Role)
	var out strings.Builder
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, e.Kind)
		if e.Kind == "o" {
			out.WriteString(e.Data)
		}
	}
	assert.Equal(t, "日本語\nkey: [REDACTED] done\ntail", out.String())
	assert.Contains(t, kinds, "i")
	assert.Contains(t, kinds, "r")
	assert.Equal(t, 2.0, events[0].Time, "times are seconds from the start")
}

func TestReadRejectsNonCasts(t *testing.T) {
	_, _, err := Read(strings.NewReader("hello\n"))
	assert.Error(t, err)
	_, _, err = Read(strings.NewReader(`{"version":2,"width":1,"height":1}` + "\n[1,\"o\"]\n"))
	assert.ErrorContains(t, err, "line 2")
}

func TestRecordingFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	out := filepath.Join(t.TempDir(), "recordings", "t-1")
	require.NoError(t, MkdirPrivate(out))
	for _, d := range []string{out, filepath.Dir(out)} {
		fi, err := os.Stat(d)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), d)
	}
	cast := filepath.Join(out, "claude.cast")
	require.NoError(t, os.WriteFile(cast, []byte("old"), 0o644))
	f, err := Create(cast)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	events := filepath.Join(out, "events.jsonl")
	require.NoError(t, WriteFile(events, []byte("{}\n")))
	for _, p := range []string{cast, events} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), p)
	}

	link := filepath.Join(out, "codex.cast")
	require.NoError(t, os.Symlink(filepath.Join(t.TempDir(), "elsewhere"), link))
	_, err = Create(link)
	assert.Error(t, err, "a symlink is not followed")
}

// A prompt printed without a line end is held back (it may be a secret's
// start), but it was printed before the input that answers it: the cast
// has it first, so a replay shows the prompt before it waits for input.
func TestCastHeldBackOutputBeforeInput(t *testing.T) {
	var buf bytes.Buffer
	start := time.Unix(1700000000, 0)
	c, err := NewCast(&buf, Header{Width: 80, Height: 24}, start, nil)
	require.NoError(t, err)
	require.NoError(t, c.Output(start.Add(time.Second), []byte("mock agent ready\r\nmock> ")))
	require.NoError(t, c.Input(start.Add(2*time.Second), "do it"))
	require.NoError(t, c.Output(start.Add(3*time.Second), []byte("working")))
	require.NoError(t, c.Resize(start.Add(4*time.Second), 100, 30))
	require.NoError(t, c.Flush())

	_, events, err := Read(&buf)
	require.NoError(t, err)
	assert.Equal(t, []Event{
		{Time: 1, Kind: "o", Data: "mock agent ready\r\n"},
		{Time: 1, Kind: "o", Data: "mock> "},
		{Time: 2, Kind: "i", Data: "do it"},
		{Time: 3, Kind: "o", Data: "working"},
		{Time: 4, Kind: "r", Data: "100x30"},
	}, events)
}
