package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
	"github.com/partyhq/party/core/termsafe"
)

// MCPTokenOptions are the inputs of party mcp token add|list|revoke.
type MCPTokenOptions struct {
	Verb string // add, list or revoke
	Name string // the operator's name (add, revoke)
}

func newMCPTokenCmd(f *Factory, runF func(context.Context, *MCPTokenOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Named operator identities for party mcp (an orchestrator outside the team)",
		Long: `A named operator identity is the operator under a name of its own: an
orchestrator agent outside the team that holds its token acts through
party mcp as the operator — it sees every inbox and trigger — and is the
sender of its messages and the actor of its task changes, so the trail
says which orchestrator did what. Give its token as the bearer token of
party mcp --http/--socket, or in $PARTY_MCP_TOKEN to party mcp on stdio.
The session's state dir keeps each token's SHA-256 only (mcp-operators.json,
0600); add prints the token once. A name cannot be a role of the session.`,
		Args: argsBetween(0, 0),
	}
	verb := func(use, short string, args int) *cobra.Command {
		opts := &MCPTokenOptions{}
		c := &cobra.Command{Use: use, Short: short, Args: argsBetween(args, args),
			RunE: func(c *cobra.Command, a []string) error {
				opts.Verb = c.Name()
				if len(a) > 0 {
					opts.Name = a[0]
				}
				return run(c, f, opts, runF, mcpTokenRun)
			}}
		return c
	}
	cmd.AddCommand(verb("add NAME", "Make the token of the operator NAME (printed once)", 1),
		verb("list", "List the named operators", 0),
		verb("revoke NAME", "Take the operator NAME's token out: refused from then on", 1))
	return cmd
}

func mcpTokenRun(ctx context.Context, f *Factory, opts *MCPTokenOptions) error {
	env := f.env()
	switch opts.Verb {
	case "add":
		t, err := party.MCPTokenAdd(ctx, env, opts.Name)
		if err != nil {
			return err
		}
		if f.JSON {
			writeJSON(f.IO.Out, t)
			return nil
		}
		fmt.Fprintln(f.IO.Out, t.Token)
		fmt.Fprintf(f.IO.ErrOut, "party: operator %s of session %s: its token is shown once; give it as party mcp's bearer token or $PARTY_MCP_TOKEN\n",
			termsafe.Text(t.Name), termsafe.Text(t.Session))
		return nil
	case "revoke":
		if err := party.MCPTokenRevoke(ctx, env, opts.Name); err != nil {
			return err
		}
		return f.show(nil, map[string]string{"revoked": opts.Name}, "revoked operator %s", opts.Name)
	}
	ts, err := party.MCPTokens(ctx, env)
	if err != nil {
		return err
	}
	if f.JSON {
		writeJSON(f.IO.Out, map[string]any{"operators": ts})
		return nil
	}
	for _, t := range ts {
		fmt.Fprintf(f.IO.Out, "%s\t%s\n", termsafe.Text(t.Name), t.Created.Format("2006-01-02T15:04:05Z"))
	}
	return nil
}
