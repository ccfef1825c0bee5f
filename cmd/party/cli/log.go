package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
	"github.com/partyhq/party/core/termsafe"
)

func newLogCmd(f *Factory) *cobra.Command {
	var opts party.LogOptions
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Show the session's event log (hook events, relay blocks and routing)",
		Args:  argsBetween(0, 0),
		// The events print as they are with --json (DEL and C1 as \u
		// escapes: termsafe.JSON), else one line each (state.FormatEvent,
		// terminal-safe).
		RunE: func(c *cobra.Command, _ []string) error {
			return party.Log(c.Context(), f.env(), opts, func(line []byte) {
				if f.JSON {
					fmt.Fprintln(f.IO.Out, string(termsafe.JSON(line)))
				} else if s, ok := party.FormatEvent(line, time.Local); ok {
					fmt.Fprintln(f.IO.Out, s)
				}
			})
		},
	}
	cmd.Flags().BoolVarP(&opts.Follow, "follow", "f", false, "keep printing new events until Ctrl-C")
	cmd.Flags().StringVar(&opts.Kind, "kind", "", "only events whose kind starts with this (relay., route., input, turn-)")
	return cmd
}
