package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
	"github.com/partyhq/party/core/termsafe"
)

// MCPOptions are the inputs of party mcp: stdio, else streamable HTTP on
// HTTP (a loopback HOST:PORT) or Socket (a unix socket).
type MCPOptions struct {
	HTTP   string
	Socket string
}

func newMCPCmd(f *Factory, runF func(context.Context, *MCPOptions) error) *cobra.Command {
	opts := &MCPOptions{}
	cmd := noArgsCmd(f, "mcp", "Serve party's operations to an agent as MCP tools, over stdio or HTTP", opts, runF, mcpRun)
	cmd.Long = `Serve the Model Context Protocol on stdin and stdout until the client
closes stdin: the tools inbox_read, inbox_send, inbox_list, heartbeat,
trigger, trigger_status, runtimes, talk, task_list, task_add, task_update
and task_show, each with a JSON schema and a typed result. The server acts
as the runtime of $PARTY_RUNTIME_TOKEN (the token party gives each agent
pane it starts), else as the operator, through the session's supervisor
API. A failure is a tool error carrying party's error code, as --json
prints it. See docs/mcp.md.

With --http 127.0.0.1:PORT (a loopback address only) or --socket PATH (a
unix socket, 0600), it serves streamable HTTP for clients outside tmux
until interrupted, for the session it picks. Each client acts as the
identity of its bearer token (Authorization: Bearer TOKEN): a runtime's
token is that runtime, the operator's (the session's mcp.token, made on
first use, named on stderr) the operator. --http requires a token; on the
socket a request without one is the operator's.`
	cmd.Example = `  party mcp install claude
  party mcp --http 127.0.0.1:8765
  codex -c 'mcp_servers.party.command="party"' -c 'mcp_servers.party.args=["mcp"]'`
	fl := cmd.Flags()
	fl.StringVar(&opts.HTTP, "http", "", "serve streamable HTTP on this loopback `HOST:PORT` (a bearer token required)")
	fl.StringVar(&opts.Socket, "socket", "", "serve streamable HTTP on this unix socket `PATH` (0600)")
	cmd.AddCommand(newMCPInstallCmd(f, true, nil), newMCPInstallCmd(f, false, nil), newMCPTokenCmd(f, nil))
	return cmd
}

// mcpRun serves MCP on the process's stdin and stdout, or over HTTP.
func mcpRun(ctx context.Context, f *Factory, opts *MCPOptions) error {
	switch {
	case opts.HTTP != "" && opts.Socket != "":
		return fmt.Errorf("%w: --http and --socket cannot be used together", party.ErrUsage)
	case opts.HTTP != "" || opts.Socket != "":
		return party.ServeMCPHTTP(ctx, f.env(), party.MCPHTTPOptions{Addr: opts.HTTP, Socket: opts.Socket,
			Ready: func(url, tokenFile string) {
				fmt.Fprintf(f.IO.ErrOut, "party mcp: serving streamable HTTP at %s; the operator's bearer token is in %s\n",
					termsafe.Text(url), termsafe.Text(tokenFile))
			}})
	}
	return party.ServeMCP(ctx, f.env(), f.IO.In, f.IO.Out)
}
