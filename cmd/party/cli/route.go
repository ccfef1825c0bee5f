package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

func newRouteCmd(f *Factory, runF func(context.Context, *party.RouteOptions) error) *cobra.Command {
	opts := &party.RouteOptions{}
	cmd := &cobra.Command{
		Use:   "route",
		Short: "Run the switchboard: forward every tagged block to the role it names",
		Long: `Watch the session's role panes and forward each new tagged block to the pane
of the role its "to" names, once per block id. Blocks naming no role, and
blocks past the hop limit (a ping-pong), are logged, not forwarded. Runs
until Ctrl-C or the session ends; --detach runs it in a window instead.`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			if opts.HopLimit < 1 {
				return fmt.Errorf("%w: --hop-limit must be at least 1", party.ErrUsage)
			}
			return run(c, f, opts, runF, routeRun)
		},
	}
	cmd.Flags().IntVar(&opts.HopLimit, "hop-limit", 8, "forward a conversation at most this many hops")
	cmd.Flags().BoolVar(&opts.Detach, "detach", false, "run in a new window of the session (party-route)")
	return cmd
}

func routeRun(ctx context.Context, f *Factory, opts *party.RouteOptions) error {
	pane, err := party.Route(ctx, f.env(), *opts)
	if err != nil || !opts.Detach {
		return err
	}
	return f.show(nil, map[string]string{"pane": pane}, "switchboard running in %s", pane)
}
