package panes

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFallbackFilesStayInTheirDir: a resume's files are named by the
// trigger id's digest, so an id that reads as a path (one an older
// database may hold) names no file outside the fallback directory.
func TestFallbackFilesStayInTheirDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", fallbackDir)
	for _, id := range []string{"r1", "x/../../../../../../TRAV", "../../TRAV", "..", "/abs"} {
		base := fallbackBase(dir, id, 1)
		for _, ext := range []string{".out", ".err", ".pid"} {
			assert.Equal(t, dir, filepath.Dir(base+ext), "%q%s", id, ext)
		}
	}
}
