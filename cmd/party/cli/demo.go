package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

// DemoOptions are the inputs of party demo.
type DemoOptions struct {
	MockDir string
}

func newDemoCmd(f *Factory, runF func(context.Context, *DemoOptions) error) *cobra.Command {
	opts := &DemoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a party of mock agents on a private tmux server",
		Long: `Start the default party (codex, claude, a shell) of mock agents on a private
tmux server, deliver a message to each by role and show what each received;
then run the review loop between a claude and a codex mock in a new git
repository until PR_READY; then stop everything, leaving nothing behind.`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, demoRun) },
	}
	cmd.Flags().StringVar(&opts.MockDir, "mock-dir", "", "directory of the mock agents (default: mock/ beside the party binary)")
	return cmd
}

func demoRun(ctx context.Context, f *Factory, opts *DemoOptions) error {
	log := f.IO.Out
	if f.JSON {
		log = f.IO.ErrOut
	}
	res, err := party.Demo(ctx, f.env(), opts.MockDir, log)
	if err != nil || !f.JSON {
		return err
	}
	writeJSON(f.IO.Out, res)
	return nil
}
