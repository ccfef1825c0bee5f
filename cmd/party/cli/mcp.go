package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

// MCPOptions are the inputs of party mcp (none).
type MCPOptions struct{}

func newMCPCmd(f *Factory, runF func(context.Context, *MCPOptions) error) *cobra.Command {
	cmd := noArgsCmd(f, "mcp", "Serve party's operations to an agent as MCP tools, over stdio", &MCPOptions{}, runF, mcpRun)
	cmd.Long = `Serve the Model Context Protocol on stdin and stdout until the client
closes stdin: the tools inbox_read, inbox_send, inbox_list, heartbeat,
trigger, trigger_status, runtimes, talk, task_list, task_add, task_update
and task_show, each with a JSON schema and a typed result. The server acts
as the runtime of $PARTY_RUNTIME_TOKEN (the token party gives each agent
pane it starts), else as the operator, through the session's supervisor
API. A failure is a tool error carrying party's error code, as --json
prints it. See docs/mcp.md.`
	cmd.Example = `  party mcp install claude
  codex -c 'mcp_servers.party.command="party"' -c 'mcp_servers.party.args=["mcp"]'`
	cmd.AddCommand(newMCPInstallCmd(f, true, nil), newMCPInstallCmd(f, false, nil))
	return cmd
}

// mcpRun serves MCP on the process's stdin and stdout.
func mcpRun(ctx context.Context, f *Factory, _ *MCPOptions) error {
	return party.ServeMCP(ctx, f.env(), f.IO.In, f.IO.Out)
}
