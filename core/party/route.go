package party

import (
	"context"
	"path/filepath"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/relay"
	"github.com/partyhq/party/core/roles"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
)

// RouteOptions are the inputs of Route.
type RouteOptions struct {
	// HopLimit is how many hops a conversation is forwarded at most.
	HopLimit int
	// Detach runs the switchboard in a window of the session instead.
	Detach bool
}

// Route runs the switchboard of the session (relay.Router): it forwards
// each new tagged block to the pane of the role it names until ctx ends
// or the session does, logging its decisions to the event log and
// stderr. A role whose pane runs a shell or another program, not claude,
// codex or gemini, gets no block unless route.allowRoles names it. With Detach it starts the switchboard in a window of the
// session (session.StartSwitchboard) and returns that window's pane.
func Route(ctx context.Context, env *Env, opts RouteOptions) (pane string, err error) {
	sc, err := env.OpenParty(ctx)
	if err != nil {
		return "", err
	}
	if opts.Detach {
		d, err := env.SessionDeps()
		if err != nil {
			return "", err
		}
		return session.StartSwitchboard(ctx, d, sc.Session, sc.Info.StateDir, opts.HopLimit)
	}
	root, err := env.StateRoot()
	if err != nil {
		return "", err
	}
	cfg, err := env.Config()
	if err != nil {
		return "", err
	}
	events := filepath.Join(sc.Info.StateDir, state.EventLog)
	r := &relay.Router{Mux: env.Tmux, Clock: env.Clock, Session: sc.Session, Panes: sc.Panes, HopLimit: opts.HopLimit,
		Log:      func(ev map[string]any) { _ = state.AppendEvent(events, ev) },
		Events:   events,
		Progress: env.Stderr,
		Deliver:  env.Deliverer(root, sc.Info, roles.ByPane(sc.Panes)),
		Profile: func(role string, p mux.Pane) agent.Profile {
			return cfg.Tune(role, agent.ForPane(agent.Kind(p.Agent), p.Role))
		},
		Allowed: cfg.AllowsRole}
	if err := r.Start(ctx); err != nil {
		return "", err
	}
	w, err := env.Watch(ctx, sc.Session, sc.Info.StateDir, true, false)
	if err != nil {
		return "", err
	}
	defer w.Close()
	return "", r.Run(ctx, w.Any(), w.Done())
}
