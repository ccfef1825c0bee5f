package party

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/mux"
)

func TestTalkRefusesAnEmptyMessageFirst(t *testing.T) {
	env, stderr, calls := testEnv(t, "/nonexistent")
	results, err := Talk(t.Context(), env, TalkOptions{Role: "codex", Text: " \n\t", Wait: true})
	assert.ErrorIs(t, err, deliver.ErrEmpty)
	assert.Nil(t, results)
	assert.Zero(t, *calls, "no tmux call")
	assert.Empty(t, stderr.String(), "no configuration loaded, no warning")
}

func TestRoles(t *testing.T) {
	assert.Equal(t, []string{"codex", "claude"}, roleNames([]mux.Pane{{ID: "%1", Role: "codex"}, {ID: "%2", Role: "claude"}}))
	assert.Empty(t, roleNames(nil))
}

func TestIsTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer func() { _ = devNull.Close() }()
	ptmx, tty, err := pty.Open()
	require.NoError(t, err)
	defer func() { _, _ = ptmx.Close(), tty.Close() }()
	tests := []struct {
		name string
		w    interface{ Write([]byte) (int, error) }
		want bool
	}{
		{"a buffer", &bytes.Buffer{}, false},
		{"a regular file", f, false},
		{"a terminal", tty, true},
		{"/dev/null, a character device but no terminal", devNull, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, isTerminal(tt.w))
		})
	}
}
