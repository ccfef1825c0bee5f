package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/blocks"
	"github.com/partyhq/party/core/deliver"
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
	sb := &relay.Switchboard{Roles: route.Roles(panes), HopLimit: opts.HopLimit}
	roleOf := map[string]mux.Pane{}
	for _, p := range panes {
		if p.Role != "" {
			roleOf[p.Role] = p
		}
	}
	scan := func(p mux.Pane) ([]blocks.Block, error) {
		s, err := tc.Capture(ctx, p.ID, history)
		if err != nil {
			return nil, err
		}
		found, _ := blocks.Parse(s)
		return found, nil
	}
	// What is on screen now was there before the switchboard: not routed.
	for _, p := range roleOf {
		found, err := scan(p)
		if err != nil {
			return err
		}
		for _, b := range found {
			sb.Ignore(b.ID)
		}
	}
	w, err := newWatcher(ctx, f, tc, session, info.StateDir, true)
	if err != nil {
		return err
	}
	defer w.close()
	events := filepath.Join(info.StateDir, state.EventLog)
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	d := deliverer(f, tc, root, info, route.RolesByPane(panes))
	_ = state.AppendEvent(events, map[string]any{"time": f.Clock.Now().UTC(), "kind": "route.start", "roles": sb.Roles, "hop_limit": opts.HopLimit})
	fmt.Fprintf(f.IO.ErrOut, "party: switchboard on %s: %d roles, hop limit %d\n", session, len(roleOf), opts.HopLimit)
	for {
		for role, p := range roleOf {
			found, err := scan(p)
			if err != nil {
				continue // a pane that went away
			}
			for _, dec := range sb.See(role, found) {
				ev := map[string]any{"time": f.Clock.Now().UTC(), "id": dec.Block.ID, "from": role, "to": dec.Block.To, "hop": dec.Hop}
				if dec.To == "" {
					ev["kind"] = "route." + dec.Reason
					_ = state.AppendEvent(events, ev)
					fmt.Fprintf(f.IO.ErrOut, "party: block %s from %s to %q not forwarded: %s\n", dec.Block.ID, role, dec.Block.To, dec.Reason)
					continue
				}
				to := roleOf[dec.To]
				res, err := d.Send(ctx, deliver.Request{Pane: to.ID, Profile: tuned(cfg, dec.To, profileOf(to)), Text: relay.Forward(dec)})
				ev["kind"], ev["outcome"] = "route.forward", res.Outcome
				if err != nil {
					ev["error"] = err.Error()
				}
				_ = state.AppendEvent(events, ev)
				fmt.Fprintf(f.IO.ErrOut, "party: block %s %s -> %s: %s\n", dec.Block.ID, role, dec.To, res.Outcome)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-w.done():
			return nil // the session ended
		case <-w.anyC:
		case <-time.After(time.Second):
		}
	}
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
