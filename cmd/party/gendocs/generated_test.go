package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docsDir is the repository's docs/, seen from this package.
const docsDir = "../../../docs"

// TestGeneratedPagesAreUpToDate fails while a generated page of docs/ is
// not what gendocs writes now: a command, a flag or the error table
// changed and nobody ran make docs, or a page was edited by hand.
func TestGeneratedPagesAreUpToDate(t *testing.T) {
	pages, err := generate()
	require.NoError(t, err)
	require.Contains(t, pages, "commands/party.md")
	require.Contains(t, pages, "commands/party_send.md")
	require.Contains(t, pages, "exit-codes.md")
	for name, want := range pages {
		got, err := os.ReadFile(filepath.Join(docsDir, filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("docs/%s is missing (%v): run `%s`", name, err, regenerate)
			continue
		}
		if string(got) != string(want) {
			t.Errorf("docs/%s is out of date: run `%s`", name, regenerate)
		}
	}
	old, err := filepath.Glob(filepath.Join(docsDir, "commands", "*"))
	require.NoError(t, err)
	for _, f := range old {
		name := "commands/" + filepath.Base(f)
		if _, ok := pages[name]; !ok {
			t.Errorf("docs/%s documents no command: run `%s`", name, regenerate)
		}
	}
}

// TestWriteBringsDocsUpToDate shows that write is the one command that
// repairs what TestGeneratedPagesAreUpToDate finds: a stale page, a page
// of a command that is gone, a missing page.
func TestWriteBringsDocsUpToDate(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "commands"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "commands", "party_gone.md"), []byte("old"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "commands", "party_send.md"), []byte("stale"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "design.md"), []byte("by hand"), 0o644))

	require.NoError(t, write(dir))

	pages, err := generate()
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "commands", "party_gone.md"))
	assert.True(t, os.IsNotExist(err), "the page of a command that is gone was kept: %v", err)
	for name, want := range pages {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if assert.NoError(t, err) {
			assert.Equal(t, string(want), string(got), name)
		}
	}
	kept, err := os.ReadFile(filepath.Join(dir, "design.md"))
	require.NoError(t, err)
	assert.Equal(t, "by hand", string(kept), "a page written by hand was touched")
}
