package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

// ExecSpecOptions are the inputs of party exec-spec: the spec file.
type ExecSpecOptions struct{ File string }

// newExecSpecCmd is the launcher tmux runs in a pane: it replaces itself
// with the program of a spec party wrote (party.Exec).
func newExecSpecCmd(f *Factory, runF func(context.Context, *ExecSpecOptions) error) *cobra.Command {
	opts := &ExecSpecOptions{}
	return &cobra.Command{
		Use:    party.ExecSpec + " FILE",
		Short:  "Run the program of a launch spec (what tmux runs in party's panes)",
		Hidden: true,
		Args:   argsBetween(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.File = args[0]
			return run(c, f, opts, runF, execSpecRun)
		},
	}
}

func execSpecRun(_ context.Context, f *Factory, opts *ExecSpecOptions) error {
	return party.Exec(opts.File, f.Environ())
}
