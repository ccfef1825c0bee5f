package session

import (
	"encoding/json"
	"path/filepath"
	"slices"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/hook"
)

// MCPServerName is the name party's MCP server (party mcp) has in each
// agent's configuration: Claude Code calls its tools mcp__party__TOOL.
const MCPServerName = "party"

// claudeMCPFile is the --mcp-config file of a session's claude panes, in
// its state dir.
const claudeMCPFile = "claude-mcp.json"

// mcpEnv are the variables of a pane that the party mcp an agent starts
// needs: which session, which runtime (its token), which role. Codex
// gives an MCP server only the variables named in its env_vars; Gemini
// takes the secret-looking ones (PARTY_RUNTIME_TOKEN) out, and all but
// PATH and a few others under strict sanitization (GITHUB_SHA set),
// unless its settings allow them.
var mcpEnv = []string{"PARTY_SESSION", "PARTY_STATE_DIR", "PARTY_ROLE", "PARTY_RUNTIME_TOKEN", "PARTY_TMUX_SOCKET",
	"XDG_STATE_HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME"}

// wireMCP registers party's MCP server (d.Exe mcp) with each claude and
// codex pane that wireHooks wired, through the session's own files and
// flags, never the user's agent configuration: claude gets --mcp-config
// with a file in the state dir, and unless cfg.Prompt an allow rule for
// the server's tools in the settings file wireHooks wrote; codex gets -c
// overrides of mcp_servers.party, with its tools approved unless
// cfg.Prompt. The server inherits the pane's environment (its token): no
// token is written anywhere. Gemini has no flag for either: wireHooks puts
// its server into the folder's settings with its hooks (geminiMCP).
func wireMCP(d Deps, dir string, panes []PaneSpec, cfg config.MCP) error {
	if !cfg.Enabled {
		return nil
	}
	for i, p := range panes {
		switch {
		case p.Agent == agent.Claude && p.Hooks == "claude-settings":
			path := filepath.Join(dir, claudeMCPFile)
			if err := writeJSONFile(path, map[string]any{"mcpServers": map[string]any{
				MCPServerName: map[string]any{"type": "stdio", "command": d.Exe, "args": []string{"mcp"}},
			}}); err != nil {
				return err
			}
			if !cfg.Prompt {
				if err := hook.AllowClaude(filepath.Join(dir, "claude-settings.json"), "mcp__"+MCPServerName); err != nil {
					return err
				}
			}
			panes[i].launch = append(slices.Clone(panes[i].launch), "--mcp-config", path)
			panes[i].MCP = true
		case p.Agent == agent.Codex && p.Hooks == "codex-notify":
			panes[i].launch = append(slices.Clone(panes[i].launch), CodexMCPArgs(d.Exe, cfg.Prompt)...)
			panes[i].MCP = true
		}
	}
	return nil
}

// CodexMCPArgs are the -c overrides that give Codex party's MCP server,
// running exe mcp with the pane's party variables (env_vars); unless
// prompt, its tools run without an approval prompt.
func CodexMCPArgs(exe string, prompt bool) []string {
	key := "mcp_servers." + MCPServerName + "."
	args := []string{"-c", key + "command=" + tomlValue(exe), "-c", key + "args=" + tomlValue([]string{"mcp"}),
		"-c", key + "env_vars=" + tomlValue(mcpEnv)}
	if !prompt {
		args = append(args, "-c", key+"default_tools_approval_mode="+tomlValue("approve"))
	}
	return args
}

// tomlValue is v (a string or a list of strings) as a TOML value: JSON's
// strings and arrays of strings are TOML's too.
func tomlValue(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// geminiMCP is party's MCP server as Deps.Gemini writes it into a folder's
// Gemini settings, or nil when cfg disables it: d.Exe mcp, trusted (no
// confirmation) unless cfg.Prompt, with the pane's party variables let
// through Gemini's redaction of a server's environment (mcpEnv).
func geminiMCP(d Deps, cfg config.MCP) *hook.GeminiMCP {
	if !cfg.Enabled {
		return nil
	}
	return &hook.GeminiMCP{Command: d.Exe, Args: []string{"mcp"}, Trust: !cfg.Prompt, Allow: slices.Clone(mcpEnv)}
}

// MCPEnv are the names of the variables of a pane that party mcp needs
// (mcpEnv): what an agent configured by hand (party mcp install) must let
// through to it.
func MCPEnv() []string { return slices.Clone(mcpEnv) }
