package hook

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func geminiInstall(t *testing.T) GeminiMCPInstall {
	dir := t.TempDir()
	return GeminiMCPInstall{Path: filepath.Join(dir, "home", ".gemini", "settings.json"),
		Record: filepath.Join(dir, "state", "mcp-install", "gemini.json"), Root: filepath.Join(dir, "state")}
}

var installMCP = GeminiMCP{Command: "/opt/party", Args: []string{"mcp"}, Allow: []string{"PARTY_SESSION", "PARTY_RUNTIME_TOKEN"}}

func TestGeminiMCPInstallMadeFileGoes(t *testing.T) {
	g := geminiInstall(t)
	ch, err := g.Install(installMCP, false, false)
	require.NoError(t, err)
	assert.True(t, ch.Changed)
	assert.FileExists(t, g.Record)
	again, err := g.Install(installMCP, false, false)
	require.NoError(t, err)
	assert.False(t, again.Changed, "installed twice: one change")

	ch, err = g.Uninstall(installMCP.Command, false, false)
	require.NoError(t, err)
	assert.True(t, ch.Changed)
	assert.NoFileExists(t, g.Path, "the file party made is gone")
	assert.NoDirExists(t, filepath.Dir(g.Path), "and the .gemini it made")
	assert.NoFileExists(t, g.Record)
}

func TestGeminiMCPInstallTaken(t *testing.T) {
	g := geminiInstall(t)
	require.NoError(t, os.MkdirAll(filepath.Dir(g.Path), 0o700))
	theirs := `{"mcpServers": {"party": {"command": "/bin/theirs", "args": ["x"]}}}`
	require.NoError(t, os.WriteFile(g.Path, []byte(theirs), 0o600))

	ch, err := g.Install(installMCP, false, false)
	require.NoError(t, err)
	assert.Equal(t, "/bin/theirs", ch.Taken)
	assert.False(t, ch.Changed)
	ch, err = g.Uninstall(installMCP.Command, false, false)
	require.NoError(t, err)
	assert.Equal(t, "/bin/theirs", ch.Taken)
	b, _ := os.ReadFile(g.Path)
	assert.Equal(t, theirs, string(b), "left alone")

	ch, err = g.Install(installMCP, true, false)
	require.NoError(t, err)
	assert.Equal(t, "/bin/theirs", ch.Replaced)
	b, _ = os.ReadFile(g.Path)
	assert.Contains(t, string(b), `"command": "/opt/party"`)
	ch, err = g.Uninstall(installMCP.Command, false, false)
	require.NoError(t, err)
	assert.True(t, ch.Changed)
	b, _ = os.ReadFile(g.Path)
	assert.NotContains(t, string(b), `"party"`)
}

func TestGeminiMCPInstallUsersOwnPartyKept(t *testing.T) {
	g := geminiInstall(t)
	require.NoError(t, os.MkdirAll(filepath.Dir(g.Path), 0o700))
	own := "{\n  \"mcpServers\": {\n    \"party\": {\n      \"command\": \"/opt/party\",\n      \"args\": [\n        \"mcp\"\n      ]\n    }\n  }\n}\n"
	require.NoError(t, os.WriteFile(g.Path, []byte(own), 0o600))
	ch, err := g.Install(installMCP, false, false)
	require.NoError(t, err)
	assert.True(t, ch.Changed, "the names allowed")
	_, err = g.Uninstall(installMCP.Command, false, false)
	require.NoError(t, err)
	b, _ := os.ReadFile(g.Path)
	assert.Equal(t, own, string(b), "the user's own party mcp, from before, stays")
}

func TestGeminiMCPInstallCommentsRefused(t *testing.T) {
	g := geminiInstall(t)
	require.NoError(t, os.MkdirAll(filepath.Dir(g.Path), 0o700))
	require.NoError(t, os.WriteFile(g.Path, []byte("{\n // mine\n \"a\": 1\n}\n"), 0o600))
	_, err := g.Install(installMCP, false, false)
	require.ErrorIs(t, err, ErrSettings)
}
