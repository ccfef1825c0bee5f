package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/route"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/tmux"
)

// StopOptions are the inputs of party stop.
type StopOptions struct{ Session string }

func newStopCmd(f *Factory, runF func(context.Context, *StopOptions) error) *cobra.Command {
	opts := &StopOptions{}
	return &cobra.Command{
		Use:   "stop [SESSION]",
		Short: "Stop a session and every agent in it",
		Long:  "Kill the session's panes and their programs. Its state directory is kept.",
		Args:  argsBetween(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Session = args[0]
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return stopRun(c.Context(), f, opts)
		},
	}
}

func stopRun(ctx context.Context, f *Factory, opts *StopOptions) error {
	tc := f.Tmux()
	name := opts.Session
	if name == "" {
		var err error
		if name, err = resolveSession(ctx, f, tc); err != nil {
			return err
		}
	}
	d, err := sessionDeps(f, tc)
	if err != nil {
		return err
	}
	if err := session.Stop(ctx, d, name); err != nil {
		return err
	}
	if f.JSON {
		writeJSON(f.IO.Out, map[string]string{"stopped": name})
	} else {
		fmt.Fprintf(f.IO.Out, "stopped %s\n", name)
	}
	return nil
}

// LsOptions are the inputs of party ls.
type LsOptions struct{}

func newLsCmd(f *Factory, runF func(context.Context, *LsOptions) error) *cobra.Command {
	opts := &LsOptions{}
	return &cobra.Command{
		Use:   "ls",
		Short: "List the party sessions on the server",
		Args:  argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return lsRun(c.Context(), f)
		},
	}
}

type lsEntry struct {
	tmux.Session
	Roles []string `json:"roles"`
}

func lsRun(ctx context.Context, f *Factory) error {
	tc := f.Tmux()
	sessions, err := tc.ListSessions(ctx)
	if err != nil {
		return err
	}
	out := []lsEntry{}
	for _, s := range sessions {
		if s.StateDir == "" {
			continue
		}
		panes, err := tc.ListPanes(ctx, s.Name)
		if err != nil {
			return err
		}
		out = append(out, lsEntry{Session: s, Roles: route.Roles(panes)})
	}
	if f.JSON {
		writeJSON(f.IO.Out, out)
		return nil
	}
	if len(out) == 0 {
		fmt.Fprintf(f.IO.ErrOut, "no party sessions on %s\n", tc.Socket)
		return nil
	}
	t := newTable(f.IO.Out, "SESSION", "ROLES", "ATTACHED")
	for _, e := range out {
		t.row(e.Name, strings.Join(e.Roles, ","), strconv.Itoa(e.Attached))
	}
	return t.flush()
}

// PanesOptions are the inputs of party panes.
type PanesOptions struct{}

func newPanesCmd(f *Factory, runF func(context.Context, *PanesOptions) error) *cobra.Command {
	opts := &PanesOptions{}
	return &cobra.Command{
		Use:   "panes",
		Short: "List the panes of a session with their roles",
		Args:  argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return panesRun(c.Context(), f)
		},
	}
}

type paneJSON struct {
	Role    string `json:"role"`
	Pane    string `json:"pane"`
	Agent   string `json:"agent"`
	PID     int    `json:"pid"`
	Dead    bool   `json:"dead"`
	Status  string `json:"dead_status,omitempty"`
	Command string `json:"command"`
	Window  int    `json:"window"`
	Index   int    `json:"index"`
}

func panesRun(ctx context.Context, f *Factory) error {
	tc := f.Tmux()
	sc, err := openScope(ctx, f, tc)
	if err != nil {
		return err
	}
	panes := sc.Panes
	out := make([]paneJSON, len(panes))
	for i, p := range panes {
		out[i] = paneJSON{Role: p.Role, Pane: p.ID, Agent: p.Agent, PID: p.PID, Dead: p.Dead,
			Status: p.DeadStatus, Command: p.CurrentCommand, Window: p.WindowIndex, Index: p.Index}
	}
	if f.JSON {
		writeJSON(f.IO.Out, out)
		return nil
	}
	t := newTable(f.IO.Out, "ROLE", "PANE", "AGENT", "PID", "DEAD", "COMMAND")
	for _, p := range out {
		dead := "-"
		if p.Dead {
			dead = "dead"
			if p.Status != "" {
				dead += "(" + p.Status + ")"
			}
		}
		t.row(orDash(p.Role), p.Pane, orDash(p.Agent), strconv.Itoa(p.PID), dead, p.Command)
	}
	return t.flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ResolveOptions are the inputs of party resolve.
type ResolveOptions struct{ Role string }

func newResolveCmd(f *Factory, runF func(context.Context, *ResolveOptions) error) *cobra.Command {
	opts := &ResolveOptions{}
	return &cobra.Command{
		Use:   "resolve ROLE",
		Short: "Print the pane id of the one pane with ROLE",
		Long: `Print the pane id of the pane tagged ROLE. Exactly one pane must carry
the role: two are ROLE_AMBIGUOUS and none ROLE_NOT_FOUND (exit 3). A
session of exactly two untagged panes resolves claude to the first and codex
to the second; other untagged sessions are ROUTING_UNRESOLVED.`,
		Args: argsBetween(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Role = args[0]
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return resolveRun(c.Context(), f, opts)
		},
	}
}

// target is a resolved role.
type target struct {
	Session string
	Info    tmux.SessionInfo
	Pane    mux.Pane
	Profile agent.Profile
}

// resolveRole finds the session and the one pane carrying role.
func resolveRole(ctx context.Context, f *Factory, tc *tmux.Client, role string) (target, error) {
	if t, ok, err := registeredTarget(ctx, f, role); ok || err != nil {
		return t, err
	}
	sc, err := openScope(ctx, f, tc)
	if err != nil {
		return target{}, err
	}
	p, err := route.Resolve(sc.Panes, role)
	if err != nil {
		return target{}, fmt.Errorf("session %s: %w", sc.Session, err)
	}
	if p.Role == "" {
		p.Role = role // the legacy layout names untagged panes
	}
	return target{Session: sc.Session, Info: sc.Info, Pane: p, Profile: profileOf(p)}, nil
}

// profileOf is the profile of a pane's agent: its @party_agent, else what
// its role's name says (the legacy two-pane layout).
func profileOf(p mux.Pane) agent.Profile {
	kind := agent.Kind(p.Agent)
	if kind == "" {
		kind = agent.Infer([]string{p.Role})
	}
	return agent.Lookup(kind)
}

func resolveRun(ctx context.Context, f *Factory, opts *ResolveOptions) error {
	t, err := resolveRole(ctx, f, f.Tmux(), opts.Role)
	if err != nil {
		return err
	}
	if f.JSON {
		writeJSON(f.IO.Out, map[string]string{"session": t.Session, "role": opts.Role, "pane": t.Pane.ID, "agent": string(t.Profile.Kind)})
		return nil
	}
	fmt.Fprintln(f.IO.Out, t.Pane.ID)
	return nil
}
