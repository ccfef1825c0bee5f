package hook

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
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

// TestGeminiWireWorktree wires a worktree pane: the worktree takes its
// repository's trust through the pane's environment, and party's .gemini
// folder there is ignored by git, so it is never among the agent's
// changes, then taken out whole.
func TestGeminiWireWorktree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed:", err)
	}
	g, warnings := geminiWiring(t)
	home := g.Getenv("HOME")
	repo, tree := t.TempDir(), t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".gemini"), 0o700))
	rules, err := json.Marshal(map[string]string{repo: "TRUST_FOLDER"})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(home, ".gemini", "trustedFolders.json"), rules, 0o600))
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", tree}, args...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	git("init", "-q")
	dir := filepath.Join(t.TempDir(), "s1")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	mcp := &GeminiMCP{Command: "/opt/party bin/party", Args: []string{"mcp"}, Trust: true}

	fallback, env, err := g.WireWorktree(dir, "gem", tree, repo, []string{"gemini"}, mcp)
	require.NoError(t, err)
	assert.Empty(t, fallback)
	assert.Equal(t, []string{"GEMINI_CLI_TRUST_WORKSPACE=true"}, env, "Gemini trusts the repository, not the worktree")
	b, err := os.ReadFile(filepath.Join(tree, ".gemini", "settings.json"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "hook gemini")
	assert.Contains(t, string(b), `"mcpServers"`)
	assert.Empty(t, git("status", "--porcelain", "--untracked-files=all"), "party's settings are not among the agent's changes")
	git("add", "-A")
	assert.Empty(t, git("diff", "--cached", "--name-only"), "nor staged by add -A")

	// Brought back (a restore): the folder is party's own, wired again.
	fallback, _, err = g.WireWorktree(dir, "gem", tree, repo, []string{"gemini"}, mcp)
	require.NoError(t, err)
	assert.Empty(t, fallback)

	require.NoError(t, g.Unwire(context.Background(), dir))
	assert.NoDirExists(t, filepath.Join(tree, ".gemini"), "the folder party made is gone, .gitignore and all")
	assert.Empty(t, *warnings)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "no record left")

	t.Run("--skip-trust", func(t *testing.T) {
		_, env, err := g.WireWorktree(dir, "gem", tree, t.TempDir(), []string{"gemini", "--skip-trust"}, nil)
		require.NoError(t, err)
		assert.Empty(t, env, "Gemini is told to trust it")
		require.NoError(t, g.Unwire(context.Background(), dir))
	})
	t.Run("untrusted repository", func(t *testing.T) {
		fallback, env, err := g.WireWorktree(dir, "gem", tree, t.TempDir(), []string{"gemini"}, nil)
		require.NoError(t, err)
		assert.Contains(t, fallback, "which Gemini does not trust")
		assert.Empty(t, env)
		assert.NoDirExists(t, filepath.Join(tree, ".gemini"))
	})
	t.Run("the repository's own .gemini", func(t *testing.T) {
		own := filepath.Join(tree, ".gemini", "commands")
		require.NoError(t, os.MkdirAll(own, 0o755))
		fallback, env, err := g.WireWorktree(dir, "gem", tree, repo, []string{"gemini"}, nil)
		require.NoError(t, err)
		assert.Contains(t, fallback, "would be among the agent's changes")
		assert.Empty(t, env)
		assert.NoFileExists(t, filepath.Join(tree, ".gemini", "settings.json"))
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries)
	})
}
