package cli

import (
	"context"

	"github.com/spf13/cobra"
)

// DemoOptions are the inputs of party demo.
type DemoOptions struct{ MockDir string }

func newDemoCmd(f *Factory, runF func(context.Context, *DemoOptions) error) *cobra.Command {
	opts := &DemoOptions{}
	cmd := &cobra.Command{
		Use:    "demo",
		Short:  "Run a party of mock agents on a private tmux server",
		Args:   argsBetween(0, 0),
		Hidden: false,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return demoRun(c.Context(), f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.MockDir, "mock-dir", "", "directory of the mock agents (default: bin/mock beside party)")
	return cmd
}

func demoRun(ctx context.Context, f *Factory, opts *DemoOptions) error { return nil }
