package cli

import (
	"github.com/partyhq/party/core/party"
	"github.com/spf13/cobra"
)

// newExecSpecCmd is the launcher tmux runs in a pane: it replaces itself
// with the program of a spec party wrote (launch.Exec).
func newExecSpecCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:    party.ExecSpec + " FILE",
		Short:  "Run the program of a launch spec (what tmux runs in party's panes)",
		Hidden: true,
		Args:   argsBetween(1, 1),
		RunE:   func(c *cobra.Command, args []string) error { return party.Exec(args[0], f.Environ()) },
	}
}
