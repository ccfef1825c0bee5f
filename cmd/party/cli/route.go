package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/launch"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/relay"
	"github.com/partyhq/party/core/route"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
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
		Long: `Watch every role pane of the session and forward each new tagged block
whose "to" names a role to that role's pane, once per block id. Blocks that
name no role, and blocks past the hop limit (a ping-pong between agents),
are logged and not forwarded. Runs until Ctrl-C or the session ends;
--detach runs it in a window of the session instead.`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			if opts.HopLimit < 1 {
				return fmt.Errorf("%w: --hop-limit must be at least 1", errUsage)
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return routeRun(c.Context(), f, opts)
		},
	}
	cmd.Flags().IntVar(&opts.HopLimit, "hop-limit", 8, "forward a conversation at most this many hops")
	cmd.Flags().BoolVar(&opts.Detach, "detach", false, "run in a new window of the session (party-route)")
	return cmd
}

func routeRun(ctx context.Context, f *Factory, opts *RouteOptions) error {
	tc := f.Tmux()
	sc, err := openPartyScope(ctx, f, tc)
	if err != nil {
		return err
	}
	session, info := sc.Session, sc.Info
	if opts.Detach {
		return detachRoute(ctx, f, tc, session, info.StateDir, opts)
	}
	root, err := f.StateRoot()
	if err != nil {
		return err
	}
	panes := sc.Panes
	events := filepath.Join(info.StateDir, state.EventLog)
	r := &relay.Router{Mux: tc, Clock: f.Clock, Session: session, Panes: panes, HopLimit: opts.HopLimit,
		Log:      func(ev map[string]any) { _ = state.AppendEvent(events, ev) },
		Progress: f.IO.ErrOut}
	if err := r.Start(ctx); err != nil {
		return err
	}
	w, err := newWatcher(ctx, f, tc, session, info.StateDir, true)
	if err != nil {
		return err
	}
	defer w.Close()
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	r.Deliver = deliverer(f, tc, root, info, route.RolesByPane(panes))
	r.Profile = func(role string, p mux.Pane) agent.Profile { return cfg.Tune(role, profileOf(p)) }
	return r.Run(ctx, w.Any(), w.Done())
}

// detachRoute runs the switchboard in a new window of the session.
func detachRoute(ctx context.Context, f *Factory, tc *tmux.Client, session, stateDir string, opts *RouteOptions) error {
	exe, err := exeForPanes()
	if err != nil {
		return err
	}
	spawn, err := launchSpawn(stateDir, "party-route", launch.Spec{Argv: []string{exe, "--session", session, "route", "--hop-limit", fmt.Sprint(opts.HopLimit)}})
	if err != nil {
		return err
	}
	id, err := tc.NewWindow(ctx, session, "party-route", spawn)
	if err != nil {
		return err
	}
	if f.JSON {
		writeJSON(f.IO.Out, map[string]string{"pane": id})
	} else {
		fmt.Fprintf(f.IO.Out, "switchboard running in %s\n", id)
	}
	return nil
}
