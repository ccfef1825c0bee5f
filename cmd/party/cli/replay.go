package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

// ReplayOptions are the inputs of party replay.
type ReplayOptions struct {
	File    string
	Speed   float64
	NoDelay bool
}

func newReplayCmd(f *Factory, runF func(context.Context, *ReplayOptions) error) *cobra.Command {
	opts := &ReplayOptions{}
	cmd := &cobra.Command{
		Use:   "replay FILE.cast",
		Short: "Play a recorded cast in the terminal",
		Long: `Write the output of a cast to stdout with its recorded pacing (--speed N
plays N times faster; --no-delay prints it at once). With --json it prints
the header and events instead.`,
		Args: argsBetween(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.File = args[0]
			if opts.Speed <= 0 {
				return fmt.Errorf("%w: --speed must be positive", party.ErrUsage)
			}
			return run(c, f, opts, runF, replayRun)
		},
	}
	cmd.Flags().Float64Var(&opts.Speed, "speed", 1, "play this many times faster")
	cmd.Flags().BoolVar(&opts.NoDelay, "no-delay", false, "print at once")
	return cmd
}

func replayRun(ctx context.Context, f *Factory, opts *ReplayOptions) error {
	fh, err := os.Open(opts.File)
	if err != nil {
		return fmt.Errorf("%w: %w", party.ErrUsage, err)
	}
	defer fh.Close()
	h, events, err := party.ReadRecording(fh)
	if err != nil {
		return fmt.Errorf("%s: %w", opts.File, err)
	}
	if f.JSON {
		writeJSON(f.IO.Out, map[string]any{"header": h, "events": events})
		return nil
	}
	return party.PlayRecording(ctx, f.Clock, f.IO.Out, events, opts.Speed, opts.NoDelay)
}
