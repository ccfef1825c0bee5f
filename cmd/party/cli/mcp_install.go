package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
	"github.com/partyhq/party/core/termsafe"
)

// MCPInstallOptions are the inputs of party mcp install and party mcp
// uninstall.
type MCPInstallOptions struct {
	Agent   string // claude, codex or gemini
	Install bool   // install; false: uninstall
	Force   bool   // replace (remove) a server named party of another command
	Print   bool   // show what would be done, do nothing
}

func newMCPInstallCmd(f *Factory, install bool, runF func(context.Context, *MCPInstallOptions) error) *cobra.Command {
	opts := &MCPInstallOptions{Install: install}
	cmd := &cobra.Command{
		Use:       "install AGENT",
		Short:     "Add party's MCP server to an agent's own user configuration",
		ValidArgs: []string{"claude", "codex", "gemini"},
		Args:      argsBetween(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Agent = args[0]
			return run(c, f, opts, runF, mcpInstallRun)
		},
	}
	cmd.Long = `Register party's MCP server (this party binary, with the argument mcp)
as the server named party in AGENT's own user configuration, for an agent
you start by hand (party start wires its own panes without it):

  claude  runs claude mcp add -s user party -- PARTY mcp (~/.claude.json)
  codex   appends [mcp_servers.party] to $CODEX_HOME/config.toml, with
          env_vars naming the pane variables party mcp needs (codex mcp
          add cannot write them), and checks it with codex mcp get
  gemini  merges mcpServers.party into ~/.gemini/settings.json, with the
          pane variables allowed through Gemini's redaction

Started in an agent pane of party's, the agent's party mcp acts as that
pane's runtime; elsewhere as the operator. The agent still asks before
each call, as for any MCP tool. A server named party that runs another
command is refused unless --force. party mcp uninstall AGENT removes
exactly what install added. --print shows what would be done.`
	cmd.Example = `  party mcp install claude
  party mcp install codex --print
  party mcp uninstall gemini`
	if !install {
		cmd.Use, cmd.Short = "uninstall AGENT", "Remove party's MCP server from an agent's user configuration"
		cmd.Long, cmd.Example = `Remove what party mcp install AGENT added: the server named party while
it runs this party's mcp (--force: whatever it runs) and, for gemini, the
variable names install allowed. Everything else is left as it was.`, ""
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.Force, "force", false, "replace (uninstall: remove) a server named party that runs another command")
	fl.BoolVar(&opts.Print, "print", false, "show what would be done and change nothing")
	return cmd
}

func mcpInstallRun(ctx context.Context, f *Factory, opts *MCPInstallOptions) error {
	res, err := party.InstallMCP(ctx, f.env(), opts.Agent, opts.Install, opts.Force, opts.Print)
	if err != nil {
		return err
	}
	what := "added party's MCP server to"
	if !opts.Install {
		what = "removed party's MCP server from"
	}
	path := termsafe.Text(res.Path)
	switch {
	case opts.Print && res.Changed:
		fmt.Fprintf(f.IO.ErrOut, "party: --print: %s not changed\n", path)
	case opts.Print:
		fmt.Fprintf(f.IO.ErrOut, "party: nothing to do in %s\n", path)
	case !res.Changed && opts.Install:
		fmt.Fprintf(f.IO.ErrOut, "party: party's MCP server already in %s; nothing changed\n", path)
	case !res.Changed:
		fmt.Fprintf(f.IO.ErrOut, "party: no MCP server of party's in %s; nothing changed\n", path)
	case res.Replaced != "":
		fmt.Fprintf(f.IO.ErrOut, "party: --force: the server named party there ran %s\n", termsafe.Text(res.Replaced))
	}
	switch {
	case f.JSON:
		writeJSON(f.IO.Out, res)
	case opts.Print:
		for _, l := range res.Lines() {
			fmt.Fprintln(f.IO.Out, termsafe.Text(l))
		}
		fmt.Fprint(f.IO.Out, termsafe.Text(res.Content))
	case res.Changed:
		fmt.Fprintf(f.IO.Out, "%s %s's %s\n", what, opts.Agent, path)
	}
	return nil
}
