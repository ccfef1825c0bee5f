package exitcode

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOnlyTheWiringImportsTheTable: the table imports the packages whose
// errors it names, so of core only core/party (the wiring) may import
// it; a lower package that needs a code takes a Classify func.
func TestOnlyTheWiringImportsTheTable(t *testing.T) {
	const self = "github.com/partyhq/party/core/exitcode"
	checked := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, err := filepath.Rel("..", path)
		if err != nil || rel == "party" || rel == "exitcode" {
			return err
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files here
		}
		checked++
		assert.NotContains(t, pkg.Imports, self, "core/%s imports the error table: take a Classify func instead", rel)
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, checked, 10, "the walk found core's packages")
}
