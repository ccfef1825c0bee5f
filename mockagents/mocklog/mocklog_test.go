package mocklog

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConcurrentLogAppendsNeverInterleave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			assert.NoError(t, Append(path, Entry{Agent: "x", Seq: i, Text: strings.Repeat("y", 10000)}))
		}(i)
	}
	wg.Wait()
	got, err := Read(path)
	require.NoError(t, err)
	assert.Len(t, got, 20)
}

// A line Append is still writing (no newline yet: Claude's 100 KB side
// request as a scenario reads the log) is not read, and is no error.
func TestReadLeavesALineInFlight(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	require.NoError(t, Append(path, Entry{Agent: "x", Text: "whole"}))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString(`{"agent":"x","text":"half`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	got, err := Read(path)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "whole", got[0].Text)
}
