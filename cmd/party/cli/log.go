package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
	"github.com/partyhq/party/core/termsafe"
)

func newLogCmd(f *Factory, runF func(context.Context, *party.LogOptions) error) *cobra.Command {
	opts := &party.LogOptions{}
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Show the session's event log (hook events, relay blocks and routing)",
		Args:  argsBetween(0, 0),
		RunE:  func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, logRun) },
	}
	cmd.Flags().BoolVarP(&opts.Follow, "follow", "f", false, "keep printing new events until Ctrl-C")
	cmd.Flags().StringVar(&opts.Kind, "kind", "", "only events whose kind starts with this (relay., route., input, turn-)")
	return cmd
}

// logRun prints the events as they are with --json (DEL and C1 as \u
// escapes: termsafe.JSON), else one line each (party.FormatEvent,
// terminal-safe).
func logRun(ctx context.Context, f *Factory, opts *party.LogOptions) error {
	return party.Log(ctx, f.env(), *opts, func(line []byte) {
		if f.JSON {
			fmt.Fprintln(f.IO.Out, string(termsafe.JSON(line)))
		} else if s, ok := party.FormatEvent(line, time.Local); ok {
			fmt.Fprintln(f.IO.Out, s)
		}
	})
}
