package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stubRunner answers the agent CLI commands it was given, in order; an
// unexpected command fails the test, and so does a stub nobody ran.
type stubRunner struct {
	t     *testing.T
	stubs []stub
}

type stub struct {
	argv   string // the command, words joined by spaces
	do     func() // its effect (the agent writing its file)
	stdout string
	stderr string
	exit   int
}

func newStubRunner(t *testing.T, stubs ...stub) *stubRunner {
	r := &stubRunner{t: t, stubs: stubs}
	t.Cleanup(func() {
		for _, s := range r.stubs {
			t.Errorf("stub not run: %s", s.argv)
		}
	})
	return r
}

func (r *stubRunner) Run(_ context.Context, argv []string) ([]byte, []byte, int, error) {
	got := strings.Join(argv, " ")
	if len(r.stubs) == 0 || r.stubs[0].argv != got {
		r.t.Fatalf("unexpected command %q; want %v", got, r.stubs)
	}
	s := r.stubs[0]
	r.stubs = r.stubs[1:]
	if s.do != nil {
		s.do()
	}
	return []byte(s.stdout), []byte(s.stderr), s.exit, nil
}

const exe = "/opt/party/bin/party"

func installer(t *testing.T, agent string, r Runner) (Installer, string) {
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	return Installer{Agent: agent, Bin: "/bin/" + agent, Exe: exe, Env: []string{"PARTY_SESSION", "PARTY_RUNTIME_TOKEN"},
		Getenv: func(k string) string { return env[k] }, Runner: r, Root: filepath.Join(home, "state")}, home
}

// writeClaude writes Claude's user config with these servers, as claude
// mcp add and remove do.
func writeClaude(t *testing.T, path string, servers map[string]any) func() {
	return func() {
		b, err := json.Marshal(map[string]any{"userID": "u", "mcpServers": servers})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, b, 0o600))
	}
}

func TestInstallClaude(t *testing.T) {
	ours := map[string]any{"type": "stdio", "command": exe, "args": []string{"mcp"}}
	theirs := map[string]any{"command": "/bin/echo", "args": []string{"theirs"}}
	add := "/bin/claude mcp add -s user party -- " + exe + " mcp"
	remove := "/bin/claude mcp remove -s user party"
	tests := []struct {
		name      string
		install   bool
		force     bool
		dryRun    bool
		before    map[string]any // mcpServers.party before; nil: none
		stubs     func(path string) []stub
		changed   bool
		replaced  string
		wantTaken bool
	}{
		{name: "install", install: true, changed: true,
			stubs: func(p string) []stub {
				return []stub{{argv: add, do: writeClaude(t, p, map[string]any{"party": ours})}}
			}},
		{name: "install again", install: true, before: ours},
		{name: "install dry run", install: true, dryRun: true, changed: true},
		{name: "install over theirs", install: true, before: theirs, wantTaken: true},
		{name: "install over theirs forced", install: true, force: true, before: theirs, changed: true, replaced: "/bin/echo theirs",
			stubs: func(p string) []stub {
				return []stub{{argv: remove, do: writeClaude(t, p, nil)}, {argv: add, do: writeClaude(t, p, map[string]any{"party": ours})}}
			}},
		{name: "uninstall", before: ours, changed: true,
			stubs: func(p string) []stub { return []stub{{argv: remove, do: writeClaude(t, p, nil)}} }},
		{name: "uninstall none", changed: false},
		{name: "uninstall theirs", before: theirs, wantTaken: true},
		{name: "uninstall theirs forced", force: true, before: theirs, changed: true, replaced: "/bin/echo theirs",
			stubs: func(p string) []stub { return []stub{{argv: remove, do: writeClaude(t, p, nil)}} }},
		{name: "add that did not add", install: true, changed: true,
			stubs: func(string) []stub { return []stub{{argv: add}} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &stubRunner{t: t}
			i, home := installer(t, Claude, r)
			path := filepath.Join(home, ".claude.json")
			if tt.before != nil {
				writeClaude(t, path, map[string]any{"party": tt.before, "mine": theirs})()
			}
			if tt.stubs != nil {
				r = newStubRunner(t, tt.stubs(path)...)
				i.Runner = r
			}
			do := i.Uninstall
			if tt.install {
				do = i.Install
			}
			res, err := do(context.Background(), tt.force, tt.dryRun)
			switch {
			case tt.wantTaken:
				require.ErrorIs(t, err, ErrTaken)
				return
			case tt.name == "add that did not add":
				require.ErrorIs(t, err, ErrAgentCLI)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.changed, res.Changed)
			assert.Equal(t, tt.replaced, res.Replaced)
			assert.Equal(t, path, res.Path)
			if tt.dryRun {
				assert.Equal(t, []string{add}, res.Lines(), "what it would run (no word needs quotes)")
				assert.NoFileExists(t, path)
			}
		})
	}
}

func TestInstallCodex(t *testing.T) {
	get := "/bin/codex mcp get party --json"
	missing := stub{argv: get, stderr: "WARNING: proceeding\nError: No MCP server named 'party' found.\n\nStack backtrace:\n 0: x", exit: 1}
	oursJSON := `{"name":"party","transport":{"type":"stdio","command":"` + exe + `","args":["mcp"],"env_vars":["PARTY_SESSION","PARTY_RUNTIME_TOKEN"]}}`
	const mine = "# mine\nmodel = \"o3\"\n\n[mcp_servers.mine]\ncommand = \"/bin/echo\"\n"
	table := "\n[mcp_servers.party]\ncommand = \"" + exe + "\"\nargs = [\"mcp\"]\nenv_vars = [\"PARTY_SESSION\",\"PARTY_RUNTIME_TOKEN\"]\n"

	t.Run("install appends the table and reads it back", func(t *testing.T) {
		r := newStubRunner(t, missing, stub{argv: get, stdout: oursJSON})
		i, home := installer(t, Codex, r)
		path := filepath.Join(home, ".codex", "config.toml")
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		require.NoError(t, os.WriteFile(path, []byte(strings.TrimSuffix(mine, "\n")), 0o640))
		res, err := i.Install(context.Background(), false, false)
		require.NoError(t, err)
		assert.True(t, res.Changed)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, mine+table, string(b), "a newline ends the user's last line; then the table")
		fi, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "the file's mode kept")
	})
	t.Run("a file codex cannot read is put back", func(t *testing.T) {
		r := newStubRunner(t, missing, stub{argv: get, stderr: "Error: failed to load configuration", exit: 1})
		i, home := installer(t, Codex, r)
		path := filepath.Join(home, ".codex", "config.toml")
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		require.NoError(t, os.WriteFile(path, []byte("mcp_servers = {}\n"), 0o600))
		_, err := i.Install(context.Background(), false, false)
		require.ErrorIs(t, err, ErrAgentCLI)
		assert.Contains(t, err.Error(), "failed to load configuration")
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, "mcp_servers = {}\n", string(b))
	})
	t.Run("other env_vars: replaced", func(t *testing.T) {
		old := `{"transport":{"command":"` + exe + `","args":["mcp"],"env_vars":[]}}`
		r := newStubRunner(t, stub{argv: get, stdout: old}, stub{argv: "/bin/codex mcp remove party"}, stub{argv: get, stdout: oursJSON})
		i, _ := installer(t, Codex, r)
		res, err := i.Install(context.Background(), false, false)
		require.NoError(t, err)
		assert.True(t, res.Changed)
		assert.Empty(t, res.Replaced, "it was party's")
	})
	t.Run("uninstall", func(t *testing.T) {
		r := newStubRunner(t, stub{argv: get, stdout: oursJSON}, stub{argv: "/bin/codex mcp remove party"}, missing)
		i, _ := installer(t, Codex, r)
		res, err := i.Uninstall(context.Background(), false, false)
		require.NoError(t, err)
		assert.True(t, res.Changed)
	})
	t.Run("uninstall theirs", func(t *testing.T) {
		r := newStubRunner(t, stub{argv: get, stdout: `{"transport":{"command":"/bin/echo","args":["x"]}}`})
		i, _ := installer(t, Codex, r)
		_, err := i.Uninstall(context.Background(), false, false)
		require.ErrorIs(t, err, ErrTaken)
		assert.Contains(t, err.Error(), "it runs /bin/echo x; --force to remove it")
	})
}

func TestInstallGemini(t *testing.T) {
	i, home := installer(t, Gemini, newStubRunner(t))
	path := filepath.Join(home, ".gemini", "settings.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	before := "{\"mcpServers\": {\"mine\": {\"command\": \"/bin/echo\"}},\n \"security\": {\"environmentVariableRedaction\": {\"allowed\": [\"PARTY_SESSION\"]}}}\n"
	require.NoError(t, os.WriteFile(path, []byte(before), 0o600))

	res, err := i.Install(context.Background(), false, true)
	require.NoError(t, err)
	assert.True(t, res.Changed)
	assert.Contains(t, res.Content, `"PARTY_RUNTIME_TOKEN"`, "a dry run shows the document")
	b, _ := os.ReadFile(path)
	assert.Equal(t, before, string(b), "a dry run writes nothing")

	res, err = i.Install(context.Background(), false, false)
	require.NoError(t, err)
	assert.True(t, res.Changed)
	assert.Empty(t, res.Content)
	b, _ = os.ReadFile(path)
	assert.Contains(t, string(b), `"command": "`+exe+`"`)

	res, err = i.Uninstall(context.Background(), false, false)
	require.NoError(t, err)
	assert.True(t, res.Changed)
	b, _ = os.ReadFile(path)
	assert.Equal(t, before, string(b), "the user's bytes, PARTY_SESSION (theirs) kept")
}

func TestUnknownAgent(t *testing.T) {
	i, _ := installer(t, "cursor", newStubRunner(t))
	_, err := i.Install(context.Background(), false, false)
	require.ErrorIs(t, err, errUsage)
}
