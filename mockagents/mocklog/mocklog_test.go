package mocklog

import (
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
