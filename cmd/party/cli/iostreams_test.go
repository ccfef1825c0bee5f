package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
		f    *os.File
		want bool
	}{
		{"a regular file", f, false},
		{"a terminal", tty, true},
		{"/dev/null, a character device but no terminal", devNull, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, isTerminal(tt.f))
		})
	}
}
