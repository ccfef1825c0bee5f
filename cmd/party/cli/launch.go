package cli

import (
	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/launch"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/tmux"
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

// launchSpawn writes the spec of a program to run in a pane of the session
// whose state dir is stateDir and returns the Spawn that runs it
// (session.Spawn, with this party binary).
func launchSpawn(stateDir, name string, s launch.Spec) (tmux.Spawn, error) {
	exe, err := exeForPanes()
	if err != nil {
		return tmux.Spawn{}, err
	}
	return session.Spawn(exe, stateDir, name, s)
}
