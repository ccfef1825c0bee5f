package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

// StopOptions are the inputs of party stop.
type StopOptions struct{ Session string }

func newStopCmd(f *Factory, runF func(context.Context, *StopOptions) error) *cobra.Command {
	opts := &StopOptions{}
	return &cobra.Command{Use: "stop [SESSION]", Short: "Stop a session and every agent in it",
		Long: "Kill the session's panes and their programs. Its state directory is kept.", Args: argsBetween(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Session = args[0]
			}
			return run(c, f, opts, runF, stopRun)
		}}
}

func stopRun(ctx context.Context, f *Factory, opts *StopOptions) error {
	name, err := party.Stop(ctx, f.env(), opts.Session)
	return f.show(err, map[string]string{"stopped": name}, "stopped %s", name)
}

// LsOptions are the inputs of party ls (none but the global flags).
type LsOptions struct{}

func newLsCmd(f *Factory, runF func(context.Context, *LsOptions) error) *cobra.Command {
	opts := &LsOptions{}
	return &cobra.Command{Use: "ls", Short: "List the party sessions on the server", Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, lsRun) }}
}

func lsRun(ctx context.Context, f *Factory, _ *LsOptions) error {
	tc := f.env().Tmux
	list, err := party.Sessions(ctx, f.env())
	if err != nil {
		return err
	}
	if len(list) == 0 && !f.JSON {
		fmt.Fprintf(f.IO.ErrOut, "no party sessions on %s\n", tc.Socket)
		return nil
	}
	return showRows(f, nil, nil, list, "SESSION", "ROLES", "ATTACHED")
}

// PanesOptions are the inputs of party panes (none but the global flags).
type PanesOptions struct{}

func newPanesCmd(f *Factory, runF func(context.Context, *PanesOptions) error) *cobra.Command {
	opts := &PanesOptions{}
	return &cobra.Command{Use: "panes", Short: "List the panes of a session with their roles", Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, panesRun) }}
}

func panesRun(ctx context.Context, f *Factory, _ *PanesOptions) error {
	panes, err := party.Panes(ctx, f.env())
	return showRows(f, err, nil, panes, party.PaneHeader(panes)...)
}

// ResolveOptions are the inputs of party resolve.
type ResolveOptions struct{ Role string }

func newResolveCmd(f *Factory, runF func(context.Context, *ResolveOptions) error) *cobra.Command {
	opts := &ResolveOptions{}
	return &cobra.Command{Use: "resolve ROLE", Short: "Print the pane id of the one pane with ROLE",
		Long: `Print the pane id of the pane tagged ROLE: two are ROLE_AMBIGUOUS, none
ROLE_NOT_FOUND (exit 3). Of exactly two untagged panes the first is claude
and the second codex; other untagged sessions are ROUTING_UNRESOLVED.`,
		Args: argsBetween(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Role = args[0]
			return run(c, f, opts, runF, resolveRun)
		}}
}

func resolveRun(ctx context.Context, f *Factory, opts *ResolveOptions) error {
	t, err := f.env().Resolve(ctx, opts.Role)
	return f.show(err, map[string]string{"session": t.Session, "role": opts.Role, "pane": t.Pane.ID, "agent": string(t.Profile.Kind)}, "%s", t.Pane.ID)
}
