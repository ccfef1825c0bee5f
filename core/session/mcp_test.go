package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/hook"
)

func TestWireMCP(t *testing.T) {
	tests := []struct {
		name   string
		cfg    config.MCP
		claude []string // after --settings FILE
		codex  []string // after the hooks' 4 arguments
		allow  bool     // claude's settings allow mcp__party
	}{
		{name: "disabled", cfg: config.MCP{}, claude: []string{}, codex: []string{}},
		{name: "allowed", cfg: config.MCP{Enabled: true}, allow: true,
			claude: []string{"--mcp-config", "MCP"},
			codex:  CodexMCPArgs("/opt/party bin/party", false)},
		{name: "prompt", cfg: config.MCP{Enabled: true, Prompt: true},
			claude: []string{"--mcp-config", "MCP"},
			codex:  CodexMCPArgs("/opt/party bin/party", true)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, cwd := t.TempDir(), t.TempDir()
			d, _ := testDeps(t, &fakeTmux{}, map[string]string{"HOME": t.TempDir()})
			panes := []PaneSpec{
				{Role: "c", Agent: agent.Claude, Argv: []string{"/bin/claude"}},
				{Role: "x", Agent: agent.Codex, Argv: []string{"/bin/codex"}},
				{Role: "sh", Agent: agent.Shell},
			}
			require.NoError(t, wireHooks(d, dir, cwd, panes, tt.cfg))
			require.NoError(t, wireMCP(d, dir, panes, tt.cfg))

			mcpFile := filepath.Join(dir, claudeMCPFile)
			want := []string{}
			for _, a := range tt.claude {
				if a == "MCP" {
					a = mcpFile
				}
				want = append(want, a)
			}
			assert.Equal(t, want, panes[0].launch[3:], "claude's arguments after --settings")
			assert.Equal(t, tt.codex, panes[1].launch[5:], "codex's arguments after its hooks'")
			assert.Empty(t, panes[2].launch)
			wired := len(tt.claude) > 0
			assert.Equal(t, []bool{wired, wired, false}, []bool{panes[0].MCP, panes[1].MCP, panes[2].MCP}, "the record says whose agent has the tools")

			b, err := os.ReadFile(filepath.Join(dir, "claude-settings.json"))
			require.NoError(t, err)
			assert.Equal(t, tt.allow, json.Valid(b) && strings.Contains(string(b), `"mcp__party"`))
			if len(tt.claude) == 0 {
				assert.NoFileExists(t, mcpFile)
				return
			}
			st, err := os.Stat(mcpFile)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
			var cfg struct {
				MCPServers map[string]struct {
					Command string   `json:"command"`
					Args    []string `json:"args"`
					Env     any      `json:"env"`
				} `json:"mcpServers"`
			}
			b, err = os.ReadFile(mcpFile)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &cfg))
			assert.Equal(t, "/opt/party bin/party", cfg.MCPServers["party"].Command)
			assert.Equal(t, []string{"mcp"}, cfg.MCPServers["party"].Args)
			assert.Nil(t, cfg.MCPServers["party"].Env, "no token in the file: the server inherits the pane's")
		})
	}
}

func TestCodexMCPArgs(t *testing.T) {
	got := CodexMCPArgs(`/opt/pa"rty`, false)
	assert.Equal(t, []string{
		"-c", `mcp_servers.party.command="/opt/pa\"rty"`,
		"-c", `mcp_servers.party.args=["mcp"]`,
		"-c", `mcp_servers.party.env_vars=["PARTY_SESSION","PARTY_STATE_DIR","PARTY_ROLE","PARTY_RUNTIME_TOKEN","PARTY_TMUX_SOCKET","XDG_STATE_HOME","XDG_RUNTIME_DIR","XDG_CONFIG_HOME"]`,
		"-c", `mcp_servers.party.default_tools_approval_mode="approve"`,
	}, got)
	assert.Len(t, CodexMCPArgs("/p", true), 6, "with prompt, no approval mode")
}

// recordingGemini is Deps.Gemini that keeps the MCP server it was asked
// to wire, and the worktrees it wired; a worktree needs the trust
// variable.
type recordingGemini struct {
	mcp   []*hook.GeminiMCP
	trees []string
}

func (r *recordingGemini) Wire(_, _ string, _ []string, mcp *hook.GeminiMCP) (string, error) {
	r.mcp = append(r.mcp, mcp)
	return "", nil
}
func (r *recordingGemini) WireWorktree(_, role, tree, repo string, _ []string, mcp *hook.GeminiMCP) (string, []string, error) {
	r.mcp = append(r.mcp, mcp)
	r.trees = append(r.trees, role+" "+tree+" from "+repo)
	return "", []string{"GEMINI_CLI_TRUST_WORKSPACE=true"}, nil
}
func (*recordingGemini) Unwire(context.Context, string) error { return nil }
func (*recordingGemini) SettingsPath(dir string) string       { return filepath.Join(dir, "settings") }

func TestWireHooksGivesGeminiTheMCPServer(t *testing.T) {
	tests := []struct {
		name string
		cfg  config.MCP
		want *hook.GeminiMCP
	}{
		{"disabled", config.MCP{}, nil},
		{"trusted", config.MCP{Enabled: true}, &hook.GeminiMCP{Command: "/opt/party bin/party", Args: []string{"mcp"}, Trust: true, Allow: mcpEnv}},
		{"prompt", config.MCP{Enabled: true, Prompt: true}, &hook.GeminiMCP{Command: "/opt/party bin/party", Args: []string{"mcp"}, Allow: mcpEnv}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _ := testDeps(t, &fakeTmux{}, map[string]string{"HOME": t.TempDir()})
			g := &recordingGemini{}
			d.Gemini = g
			panes := []PaneSpec{{Role: "g1", Agent: agent.Gemini, Argv: []string{"/bin/gemini"}},
				{Role: "g2", Agent: agent.Gemini, Argv: []string{"/bin/gemini"}},
				{Role: "g3", Agent: agent.Gemini, Argv: []string{"/bin/gemini"}, Worktree: "/trees/g3"}}
			repo := t.TempDir()
			require.NoError(t, wireHooks(d, t.TempDir(), repo, panes, tt.cfg))
			require.Len(t, g.mcp, 2, "one folder, wired once, and the worktree")
			assert.Equal(t, tt.want, g.mcp[0])
			assert.Equal(t, tt.want, g.mcp[1])
			assert.Equal(t, []string{"g3 /trees/g3 from " + repo}, g.trees)
			assert.Equal(t, "gemini-settings", panes[1].Hooks)
			assert.Equal(t, "gemini-settings", panes[2].Hooks)
			assert.Equal(t, tt.cfg.Enabled, panes[2].MCP)
			assert.Equal(t, []string{"GEMINI_CLI_TRUST_WORKSPACE=true"}, panes[2].env, "the worktree's trust, in its pane only")
			assert.Empty(t, panes[0].env)
			assert.Equal(t, []string{"/bin/gemini"}, panes[0].launch, "no flag: the server is in the folder's settings")
		})
	}
	assert.Contains(t, mcpEnv, "PARTY_RUNTIME_TOKEN", "the variable Gemini would redact")
}
