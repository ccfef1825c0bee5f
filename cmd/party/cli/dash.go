package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

// DashOptions are the inputs of party dash.
type DashOptions struct {
	// Once prints the model once instead of running the live view.
	Once bool
	// Stream prints the model as a line of JSON each time it changes
	// until stdin ends: the other end of a dashboard on another host
	// (hidden).
	Stream bool
	// Local shows this host's sessions only: no other host is looked at.
	Local bool
}

func newDashCmd(f *Factory, runF func(context.Context, *DashOptions) error) *cobra.Command {
	opts := &DashOptions{}
	cmd := &cobra.Command{
		Use:   "dash",
		Short: "Show every agent's state live: busy, waiting for a permission, failed, dead",
		Long: `Show a live dashboard of the party sessions of the server (or the one
--session names): each agent's role, kind and state (starting, idle, busy
for how long, permission, dialog, failed, dead), the head of its running
prompt and of its last answer, the sends and talks queued for it; the
supervisor's runtimes and open triggers; the review coordinator's state and
evidence; the team's tasks. It is driven by the agents' events and tmux's
notifications. Keys: up/down select, enter jumps to the agent's pane, t
talks to it, / filters, ? helps, q quits.

With hosts configured (hosts.NAME.ssh), every host's agents show too, with
a HOST column: each host is read by the party there over ssh, on its own
(live: one connection a host, a line each time its model changed; --once:
within 10 s); a host that does not answer shows offline, never holding up
the screen. --session shows that session of this host only, --local this
host's sessions only.

--once (or --json) prints the same model once and exits, without a
terminal.`,
		Example: `  party dash
  party dash --session team --once
  party dash --json | jq '.sessions[].agents[] | {role, state}'`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, dashRun) },
	}
	cmd.Flags().BoolVar(&opts.Once, "once", false, "print the dashboard once and exit (with --json: as JSON)")
	cmd.Flags().BoolVar(&opts.Stream, "stream", false, "print the model as a line of JSON each time it changes, until stdin ends (a dashboard on another host reads it)")
	_ = cmd.Flags().MarkHidden("stream")
	cmd.Flags().BoolVar(&opts.Local, "local", false, "this host's sessions only: no configured host is looked at")
	return cmd
}

func dashRun(ctx context.Context, f *Factory, opts *DashOptions) error {
	env := f.env()
	if opts.Stream {
		return party.DashStream(ctx, env, f.IO.In, f.IO.Out)
	}
	if opts.Once || f.JSON || !f.IO.InTTY || !f.IO.OutTTY {
		m, err := party.DashSnapshot(ctx, env, opts.Local)
		if err != nil {
			return err
		}
		if f.JSON {
			writeJSON(f.IO.Out, m)
			return nil
		}
		_, err = fmt.Fprintln(f.IO.Out, party.DashPlain(m))
		return err
	}
	return party.Dash(ctx, env, f.IO.In, f.IO.Out, opts.Local)
}
