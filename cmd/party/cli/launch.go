package cli

import (
	"fmt"
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/launch"
)

// newExecSpecCmd is the launcher tmux runs in a pane: it reads a spec
// written by party and replaces itself with the program.
func newExecSpecCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:    launch.Subcommand + " FILE",
		Short:  "Run the program of a launch spec (what tmux runs in party's panes)",
		Hidden: true,
		Args:   argsBetween(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			s, err := launch.Read(args[0])
			if err != nil {
				return err
			}
			prog, argv, env, err := s.Resolve(f.Environ())
			if err != nil {
				return err
			}
			if s.Dir != "" {
				if err := os.Chdir(s.Dir); err != nil {
					return fmt.Errorf("launch: %w", err)
				}
			}
			if err := syscall.Exec(prog, argv, env); err != nil {
				return fmt.Errorf("launch %s: %w", prog, err)
			}
			return nil
		},
	}
}
