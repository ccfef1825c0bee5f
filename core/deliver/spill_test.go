package deliver

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSpill(t *testing.T) {
	dir := t.TempDir()
	short := strings.Repeat("a", MaxPaste)
	got, err := Spill(dir, short)
	require.NoError(t, err)
	assert.Equal(t, short, got, "a text that fits is pasted as is")
	assert.NoDirExists(t, filepath.Join(dir, "messages"))

	long := short + "b"
	got, err = Spill(dir, long)
	require.NoError(t, err)
	m := regexp.MustCompile(`^The message is too long to paste \(524289 bytes\)\. Read it from the file (\S+)$`).FindStringSubmatch(got)
	require.NotNil(t, m, got)
	assert.Equal(t, filepath.Join(dir, "messages"), filepath.Dir(m[1]))
	b, err := os.ReadFile(m[1])
	require.NoError(t, err)
	assert.Equal(t, long, string(b), "the pointer leads to the whole text")
	fi, err := os.Stat(m[1])
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

func TestLockDir(t *testing.T) {
	a, b := LockDir("/root", "/tmp/tmux-1/default"), LockDir("/root", "/tmp/tmux-1/other")
	assert.NotEqual(t, a, b, "one lock dir per server")
	assert.Equal(t, "/root/locks", filepath.Dir(a))
	assert.Equal(t, a, LockDir("/root", "/tmp/tmux-1/default"))
}
