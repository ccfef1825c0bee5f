package session

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/config"
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
			require.NoError(t, wireHooks(d, dir, cwd, panes))
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
