package party

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/session"
)

// geminiDeps are session deps for the Gemini wiring, with a home of
// their own; the warnings they give are collected.
func geminiDeps(t *testing.T) (session.Deps, *[]string) {
	t.Helper()
	var warnings []string
	env := map[string]string{"HOME": t.TempDir()}
	return session.Deps{Getenv: func(k string) string { return env[k] }, Clock: clock.Real{}, Exe: "/opt/party bin/party",
		Warn: func(s string) { warnings = append(warnings, s) }}, &warnings
}

func TestGeminiWireUnwire(t *testing.T) {
	root, cwd := t.TempDir(), t.TempDir()
	dir := filepath.Join(root, "s1")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	d, warnings := geminiDeps(t)

	fallback, err := geminiHooks{}.Wire(d, dir, cwd, []string{"/bin/gemini", "--skip-trust"})
	require.NoError(t, err)
	assert.Empty(t, fallback)
	path := filepath.Join(cwd, ".gemini", "settings.json")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(b), "hook gemini")
	assert.FileExists(t, filepath.Join(dir, geminiHooksFile))

	require.NoError(t, geminiHooks{}.Unwire(context.Background(), d, dir))
	assert.NoFileExists(t, path, "the file party made is removed")
	assert.NoDirExists(t, filepath.Join(cwd, ".gemini"), "with the directory party made")
	assert.NoFileExists(t, filepath.Join(dir, geminiHooksFile))
	assert.Empty(t, *warnings)
	require.NoError(t, geminiHooks{}.Unwire(context.Background(), d, dir), "nothing recorded: nothing to do")
}

func TestGeminiUnwireKeepsHooksOfALiveSession(t *testing.T) {
	root, cwd := t.TempDir(), t.TempDir()
	s1, s2 := filepath.Join(root, "s1"), filepath.Join(root, "s2")
	d, warnings := geminiDeps(t)
	for _, dir := range []string{s1, s2} {
		require.NoError(t, os.MkdirAll(dir, 0o700))
		_, err := geminiHooks{}.Wire(d, dir, cwd, []string{"gemini", "--skip-trust"})
		require.NoError(t, err)
	}
	require.NoError(t, os.WriteFile(filepath.Join(s2, "session.json"), []byte(`{"session": "two", "socket": "/sock"}`), 0o600))
	d.Live = func(_ context.Context, socket, session string) bool { return socket == "/sock" && session == "two" }

	require.NoError(t, geminiHooks{}.Unwire(context.Background(), d, s1))
	assert.FileExists(t, filepath.Join(cwd, ".gemini", "settings.json"))
	assert.Equal(t, []string{"kept party's Gemini hooks in " + filepath.Join(cwd, ".gemini", "settings.json") + ": session two uses them"}, *warnings)
}

func TestGeminiWireRefusesAFolderGeminiDoesNotTrust(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	d, warnings := geminiDeps(t)
	fallback, err := geminiHooks{}.Wire(d, dir, cwd, []string{"/bin/gemini"})
	require.NoError(t, err)
	assert.Contains(t, fallback, "Gemini runs no hooks in a folder it does not trust")
	assert.NoFileExists(t, filepath.Join(cwd, ".gemini", "settings.json"))
	assert.NoFileExists(t, filepath.Join(dir, geminiHooksFile))
	assert.Empty(t, *warnings, "the caller warns, with the pane's role")
}
