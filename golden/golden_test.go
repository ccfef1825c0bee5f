package golden

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"pane ids", "sent to %12 and %3\n", "sent to %N and %N\n"},
		{"times", "at 2026-11-22T15:04:05.123Z ok", "at <TIME> ok\n"},
		{"nonce", "marker PARTY-DONE-9f8e7d6c5b4a", "marker PARTY-DONE-<HEX>\n"},
		{"durations", "✻ Worked for 1m 52s, 120ms", "✻ Worked for <DUR>, <DUR>\n"},
		{"trailing space and blank lines", "❯\u00a0  \nx  \n\n\n", "❯\nx\n"},
		{"control bytes", "a\x1b[0mb\tc", "a\\x1b[0mb\tc\n"},
		{"clock times", "17:14:39.616 input", "<TIME> input\n"},
		{"marker nonces", "PARTY_DONE_ immediately followed by k3j9x2m8q4ab; PARTY_DONE_k3j9x2m8q4ab", "PARTY_DONE_ immediately followed by <NONCE>; PARTY_DONE_<NONCE>\n"},
		{"sizes", "resized to 120x40", "resized to <SIZE>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Normalize(tt.in))
		})
	}
}

func TestCheck(t *testing.T) {
	name := filepath.Join("testdata", "check.golden")
	path := filepath.Join(Dir(), name)
	t.Cleanup(func() { os.RemoveAll(filepath.Join(Dir(), "testdata")) })

	require.Error(t, Check(name, "x", false), "a missing golden file fails")
	require.NoError(t, Check(name, "pane %1\n", true))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "pane %N\n", string(b))
	assert.NoError(t, Check(name, "pane %7", false), "equal after normalizing")
	err = Check(name, "pane %7 changed", false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 1")
}
