package hook

import (
	"context"
	"encoding/json"
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

	fallback, err := g.Wire(dir, cwd, []string{"/bin/gemini", "--skip-trust"}, nil)
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
		_, err := g.Wire(dir, cwd, []string{"gemini", "--skip-trust"}, nil)
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
	fallback, err := g.Wire(dir, cwd, []string{"/bin/gemini"}, nil)
	require.NoError(t, err)
	assert.Contains(t, fallback, "Gemini runs no hooks in a folder it does not trust")
	assert.NoFileExists(t, filepath.Join(cwd, ".gemini", "settings.json"))
	assert.NoFileExists(t, filepath.Join(dir, geminiHooksFile))
	assert.Empty(t, *warnings, "the caller warns, with the pane's role")
}

func TestGeminiWireMCP(t *testing.T) {
	root, cwd := t.TempDir(), t.TempDir()
	dir := filepath.Join(root, "s1")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	g, warnings := geminiWiring(t)
	path := filepath.Join(cwd, ".gemini", "settings.json")
	user := "{\n  \"ui\": {\n    \"theme\": \"dark\"\n  },\n  \"security\": {\n    \"environmentVariableRedaction\": {\n      \"allowed\": [\n        \"MY_TOKEN\",\n        \"PARTY_ROLE\"\n      ]\n    }\n  }\n}\n"
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(user), 0o640))

	fallback, err := g.Wire(dir, cwd, []string{"gemini", "--skip-trust"}, &partyMCP)
	require.NoError(t, err)
	assert.Empty(t, fallback)
	var doc struct {
		Hooks      map[string]any `json:"hooks"`
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
			Trust   bool     `json:"trust"`
		} `json:"mcpServers"`
		Security struct {
			Redaction struct {
				Allowed []string `json:"allowed"`
			} `json:"environmentVariableRedaction"`
		} `json:"security"`
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.Len(t, doc.Hooks, 3)
	assert.Equal(t, "/opt/party bin/party", doc.MCPServers["party"].Command)
	assert.Equal(t, []string{"mcp"}, doc.MCPServers["party"].Args)
	assert.True(t, doc.MCPServers["party"].Trust)
	assert.Equal(t, []string{"MY_TOKEN", "PARTY_ROLE", "PARTY_SESSION", "PARTY_RUNTIME_TOKEN"}, doc.Security.Redaction.Allowed)
	assert.NotContains(t, string(b), "PARTY_RUNTIME_TOKEN=", "names only, never a value")
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), st.Mode().Perm(), "written in place, its mode kept")

	require.NoError(t, g.Unwire(context.Background(), dir))
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, user, string(b), "the user's file is back byte for byte")
	assert.Empty(t, *warnings)
}

func TestGeminiWireMCPTwoSessions(t *testing.T) {
	// Two live sessions in one folder: the one that stops first keeps
	// everything, the last one takes out all party added, the file with it.
	root, cwd := t.TempDir(), t.TempDir()
	s1, s2 := filepath.Join(root, "s1"), filepath.Join(root, "s2")
	g, warnings := geminiWiring(t)
	for _, dir := range []string{s1, s2} {
		require.NoError(t, os.MkdirAll(dir, 0o700))
		_, err := g.Wire(dir, cwd, []string{"gemini", "--skip-trust"}, &partyMCP)
		require.NoError(t, err)
	}
	path := filepath.Join(cwd, ".gemini", "settings.json")
	require.NoError(t, os.WriteFile(filepath.Join(s2, "session.json"), []byte(`{"session": "two", "socket": "/sock"}`), 0o600))
	live := true
	g.Live = func(_ context.Context, socket, session string) bool {
		return live && socket == "/sock" && session == "two"
	}

	require.NoError(t, g.Unwire(context.Background(), s1))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"mcpServers"`)
	assert.Len(t, *warnings, 1)

	live = false
	require.NoError(t, g.Unwire(context.Background(), s2))
	assert.NoFileExists(t, path, "the second session took out what the first added")
	assert.NoDirExists(t, filepath.Dir(path))
}

func TestGeminiWireMCPOfTheUsersOwn(t *testing.T) {
	root, cwd := t.TempDir(), t.TempDir()
	dir := filepath.Join(root, "s1")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	g, warnings := geminiWiring(t)
	path := filepath.Join(cwd, ".gemini", "settings.json")
	user := "{\n  \"mcpServers\": {\n    \"party\": {\n      \"command\": \"party\",\n      \"args\": [\n        \"mcp\"\n      ]\n    }\n  }\n}\n"
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(user), 0o600))

	fallback, err := g.Wire(dir, cwd, []string{"gemini", "--skip-trust"}, &partyMCP)
	require.NoError(t, err)
	assert.Empty(t, fallback, "the hooks are wired all the same")
	require.Len(t, *warnings, 1)
	assert.Contains(t, (*warnings)[0], "has a server named party of its own (command party)")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "PARTY_RUNTIME_TOKEN", "the user's server is not given the token")

	require.NoError(t, g.Unwire(context.Background(), dir))
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, user, string(b))
}
