package cli

import (
	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/launch"
)

// newExecSpecCmd is the launcher tmux runs in a pane: it replaces itself
// with the program of a spec party wrote (launch.Exec).
func newExecSpecCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:    launch.Subcommand + " FILE",
		Short:  "Run the program of a launch spec (what tmux runs in party's panes)",
		Hidden: true,
		Args:   argsBetween(1, 1),
		RunE:   func(c *cobra.Command, args []string) error { return launch.Exec(args[0], f.Environ()) },
	}
}
