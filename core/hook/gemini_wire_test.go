package hook

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// geminiWiring is a GeminiWiring with a home of its own; the warnings
// it gives are collected.
func geminiWiring(t *testing.T) (*GeminiWiring, *[]string) {
	t.Helper()
	var warnings []string
	env := map[string]string{"HOME": t.TempDir()}
	return &GeminiWiring{Getenv: func(k string) string { return env[k] }, Exe: "/opt/party bin/party",
		Warn: func(s string) { warnings = append(warnings, s) }}, &warnings
}

func TestGeminiWireUnwire(t *testing.T) {
	root, cwd := t.TempDir(), t.TempDir()
	dir := filepath.Join(root, "s1")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	g, warnings := geminiWiring(t)

	fallback, err := g.Wire(dir, cwd, []string{"/bin/gemini", "--skip-trust"})
	require.NoError(t, err)
	assert.Empty(t, fallback)
	path := filepath.Join(cwd, ".gemini", "settings.json")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(b), "hook gemini")
	assert.FileExists(t, filepath.Join(dir, geminiHooksFile))

	require.NoError(t, g.Unwire(context.Background(), dir))
	assert.NoFileExists(t, path, "the file party made is removed")
	assert.NoDirExists(t, filepath.Join(cwd, ".gemini"), "with the directory party made")
	assert.NoFileExists(t, filepath.Join(dir, geminiHooksFile))
	assert.Empty(t, *warnings)
	require.NoError(t, g.Unwire(context.Background(), dir), "nothing recorded: nothing to do")
}

func TestGeminiUnwireKeepsHooksOfALiveSession(t *testing.T) {
	root, cwd := t.TempDir(), t.TempDir()
	s1, s2 := filepath.Join(root, "s1"), filepath.Join(root, "s2")
	g, warnings := geminiWiring(t)
	for _, dir := range []string{s1, s2} {
		require.NoError(t, os.MkdirAll(dir, 0o700))
		_, err := g.Wire(dir, cwd, []string{"gemini", "--skip-trust"})
		require.NoError(t, err)
	}
	require.NoError(t, os.WriteFile(filepath.Join(s2, "session.json"), []byte(`{"session": "two", "socket": "/sock"}`), 0o600))
	g.Live = func(_ context.Context, socket, session string) bool { return socket == "/sock" && session == "two" }

	require.NoError(t, g.Unwire(context.Background(), s1))
	assert.FileExists(t, filepath.Join(cwd, ".gemini", "settings.json"))
	assert.Equal(t, []string{"kept party's Gemini hooks in " + filepath.Join(cwd, ".gemini", "settings.json") + ": session two uses them"}, *warnings)
}

func TestGeminiWireRefusesAFolderGeminiDoesNotTrust(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	g, warnings := geminiWiring(t)
	fallback, err := g.Wire(dir, cwd, []string{"/bin/gemini"})
	require.NoError(t, err)
	assert.Contains(t, fallback, "Gemini runs no hooks in a folder it does not trust")
	assert.NoFileExists(t, filepath.Join(cwd, ".gemini", "settings.json"))
	assert.NoFileExists(t, filepath.Join(dir, geminiHooksFile))
	assert.Empty(t, *warnings, "the caller warns, with the pane's role")
}
