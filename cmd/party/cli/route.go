package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/relay"
	"github.com/partyhq/party/core/route"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
)

// RouteOptions are the inputs of party route.
type RouteOptions struct {
	HopLimit int
	Detach   bool
}

func newRouteCmd(f *Factory, runF func(context.Context, *RouteOptions) error) *cobra.Command {
	opts := &RouteOptions{}
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
				return fmt.Errorf("%w: --hop-limit must be at least 1", errUsage)
			}
			return run(c, f, opts, runF, routeRun)
		},
	}
	cmd.Flags().IntVar(&opts.HopLimit, "hop-limit", 8, "forward a conversation at most this many hops")
	cmd.Flags().BoolVar(&opts.Detach, "detach", false, "run in a new window of the session (party-route)")
	return cmd
}

func routeRun(ctx context.Context, f *Factory, opts *RouteOptions) error {
	tc := f.Tmux()
	sc, err := f.env().OpenParty(ctx)
	if err != nil {
		return err
	}
	if opts.Detach {
		d, err := f.env().SessionDeps()
		if err != nil {
			return err
		}
		id, err := session.StartSwitchboard(ctx, d, sc.Session, sc.Info.StateDir, opts.HopLimit)
		if err != nil {
			return err
		}
		return f.show(map[string]string{"pane": id}, "switchboard running in %s", id)
	}
	root, err := f.env().StateRoot()
	if err != nil {
		return err
	}
	cfg, err := f.env().Config()
	if err != nil {
		return err
	}
	events := filepath.Join(sc.Info.StateDir, state.EventLog)
	r := &relay.Router{Mux: tc, Clock: f.Clock, Session: sc.Session, Panes: sc.Panes, HopLimit: opts.HopLimit,
		Log:      func(ev map[string]any) { _ = state.AppendEvent(events, ev) },
		Progress: f.IO.ErrOut,
		Deliver:  f.env().Deliverer(root, sc.Info, route.RolesByPane(sc.Panes)),
		Profile: func(role string, p mux.Pane) agent.Profile {
			return cfg.Tune(role, agent.ForPane(agent.Kind(p.Agent), p.Role))
		}}
	if err := r.Start(ctx); err != nil {
		return err
	}
	w, err := f.env().Watch(ctx, sc.Session, sc.Info.StateDir, true)
	if err != nil {
		return err
	}
	defer w.Close()
	return r.Run(ctx, w.Any(), w.Done())
}
