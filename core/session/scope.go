package session

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/roles"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
)

// ErrUnresolved is a command that cannot tell which session it acts on.
var ErrUnresolved = errors.New("session not determined")

// Server is what finding sessions and panes needs of the tmux client
// (*tmux.Client).
type Server interface {
	Snapshot(ctx context.Context) (tmux.Snapshot, error)
	ListSessions(ctx context.Context) ([]tmux.Session, error)
	ListPanes(ctx context.Context, session string) ([]mux.Pane, error)
}

// Pick says how a command chooses its session: Name (--session), then
// $PARTY_SESSION, then the session of $TMUX_PANE (inside tmux), then the
// only party session of the server. Server names the server in messages.
type Pick struct {
	Name   string
	Getenv func(string) string
	Server string
}

// Scope is the session a command acts on, its party info and its panes.
type Scope struct {
	Session string
	Info    tmux.SessionInfo
	Panes   []mux.Pane
}

// Target is a role resolved to its pane.
type Target struct {
	Session string
	Info    tmux.SessionInfo
	Pane    mux.Pane
	Profile agent.Profile
}

// Open picks the session of pick and reads it, with one tmux command.
func Open(ctx context.Context, srv Server, pick Pick) (Scope, error) {
	snap, err := srv.Snapshot(ctx)
	if err != nil {
		return Scope{}, err
	}
	name, err := pick.Choose(snap)
	if err != nil {
		return Scope{}, err
	}
	info, ok := snap.Session(name)
	if !ok {
		return Scope{}, fmt.Errorf("session %q on %s: %w", name, pick.Server, mux.ErrNoSession)
	}
	return Scope{Session: name, Info: info, Panes: snap.PanesOf(name)}, nil
}

// OpenParty is Open for commands that need the session's state dir (its
// event log, relay steps): sessions party did not start have none.
func OpenParty(ctx context.Context, srv Server, pick Pick) (Scope, error) {
	sc, err := Open(ctx, srv, pick)
	if err == nil && sc.Info.StateDir == "" {
		err = fmt.Errorf("session %s was not started by party (it has no state dir): %w", sc.Session, ErrUnresolved)
	}
	return sc, err
}

// Choose returns the session pick selects in snap; anything ambiguous
// fails listing the candidates.
func (pick Pick) Choose(snap tmux.Snapshot) (string, error) {
	if pick.Name != "" {
		return pick.Name, nil
	}
	if s := pick.Getenv("PARTY_SESSION"); s != "" {
		return s, nil
	}
	if p := pick.Getenv("TMUX_PANE"); p != "" && pick.Getenv("TMUX") != "" {
		for _, pane := range snap.Panes {
			if pane.ID == p {
				return pane.Session, nil
			}
		}
	}
	var party, all []string
	for _, s := range snap.Sessions {
		all = append(all, s.Name)
		if s.StateDir != "" {
			party = append(party, s.Name)
		}
	}
	sort.Strings(party)
	sort.Strings(all)
	switch {
	case len(party) == 1:
		return party[0], nil
	case len(party) > 1:
		return "", fmt.Errorf("%d party sessions on %s (%s); pick one with --session or PARTY_SESSION: %w",
			len(party), pick.Server, strings.Join(party, ", "), ErrUnresolved)
	case len(all) == 0:
		return "", fmt.Errorf("no party session on %s; start one with 'party start': %w", pick.Server, ErrUnresolved)
	}
	return "", fmt.Errorf("no party session on %s (other sessions: %s); use --session or PARTY_SESSION: %w",
		pick.Server, strings.Join(all, ", "), ErrUnresolved)
}

// Resolve finds the one pane of the picked session that carries role
// (roles.Resolve).
func Resolve(ctx context.Context, srv Server, pick Pick, role string) (Target, error) {
	sc, err := Open(ctx, srv, pick)
	if err != nil {
		return Target{}, err
	}
	p, err := roles.Resolve(sc.Panes, role)
	if err != nil {
		return Target{}, fmt.Errorf("session %s: %w", sc.Session, err)
	}
	if p.Role == "" {
		p.Role = role // the legacy layout names untagged panes
	}
	return Target{Session: sc.Session, Info: sc.Info, Pane: p, Profile: agent.ForPane(agent.Kind(p.Agent), p.Role)}, nil
}

// AgentPanes are the panes of sc that run a tagged agent (not a shell):
// what "party talk all" talks to.
func (sc Scope) AgentPanes() ([]mux.Pane, error) {
	var out []mux.Pane
	for _, p := range sc.Panes {
		if p.Role != "" && p.Agent != "" && agent.Kind(p.Agent) != agent.Shell {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("session %s has no agent panes: %w", sc.Session, roles.ErrNotFound)
	}
	return out, nil
}

// Listed is one party session as party ls lists it.
type Listed struct {
	tmux.Session
	Roles []string `json:"roles"`
}

// Row is the session as party ls prints it: name, roles, attached clients.
func (l Listed) Row() []string {
	return []string{l.Name, strings.Join(l.Roles, ","), strconv.Itoa(l.Attached)}
}

// List lists the party sessions of the server (those with a state dir)
// and the roles of their panes.
func List(ctx context.Context, srv Server) ([]Listed, error) {
	sessions, err := srv.ListSessions(ctx)
	if err != nil {
		return nil, err
	}
	out := []Listed{}
	for _, s := range sessions {
		if s.StateDir == "" {
			continue
		}
		panes, err := srv.ListPanes(ctx, s.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, Listed{Session: s, Roles: roles.Names(panes)})
	}
	return out, nil
}

// PaneRow is one pane as party panes prints it.
type PaneRow struct {
	Role    string `json:"role"`
	Pane    string `json:"pane"`
	Agent   string `json:"agent"`
	PID     int    `json:"pid"`
	Dead    bool   `json:"dead"`
	Status  string `json:"dead_status,omitempty"`
	Command string `json:"command"`
	Window  int    `json:"window"`
	Index   int    `json:"index"`
	// Worktree and Branch are the pane's own git worktree (party start
	// --worktree), when it runs in one.
	Worktree string `json:"worktree,omitempty"`
	Branch   string `json:"branch,omitempty"`
	// branches says the table has a BRANCH column (a pane of the team
	// runs in a worktree).
	branches bool
}

// Row is the pane as party panes prints it; "-" stands for an empty
// field, and a dead pane shows its exit status.
func (r PaneRow) Row() []string {
	dead := "-"
	if r.Dead {
		dead = "dead"
		if r.Status != "" {
			dead += "(" + r.Status + ")"
		}
	}
	row := []string{dash(r.Role), r.Pane, dash(r.Agent), strconv.Itoa(r.PID), dead, r.Command}
	if r.branches {
		row = append(row, dash(r.Branch))
	}
	return row
}

// WithWorktrees adds to rows the worktree and branch of each pane that
// runs in one, as rec records them, and a BRANCH column when any does.
func WithWorktrees(rows []PaneRow, rec Record) []PaneRow {
	has := false
	for i, r := range rows {
		for _, p := range rec.Panes {
			if p.ID == r.Pane && p.Role == r.Role && p.Worktree != "" {
				rows[i].Worktree, rows[i].Branch, has = p.Worktree, p.Branch, true
			}
		}
	}
	for i := range rows {
		rows[i].branches = has
	}
	return rows
}

// PaneHeader is the header of party panes' table of rows.
func PaneHeader(rows []PaneRow) []string {
	h := []string{"ROLE", "PANE", "AGENT", "PID", "DEAD", "COMMAND"}
	if len(rows) > 0 && rows[0].branches {
		h = append(h, "BRANCH")
	}
	return h
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Rows are the panes of sc as party panes prints them.
func (sc Scope) Rows() []PaneRow {
	out := make([]PaneRow, len(sc.Panes))
	for i, p := range sc.Panes {
		out[i] = PaneRow{Role: p.Role, Pane: p.ID, Agent: p.Agent, PID: p.PID, Dead: p.Dead,
			Status: p.DeadStatus, Command: p.CurrentCommand, Window: p.WindowIndex, Index: p.Index}
	}
	return out
}

// LastLines returns the last n lines of a captured screen.
func LastLines(screen string, n int) []string {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// StateDir is the state dir of the session of info: its @party_state_dir,
// or for a session party did not start one under root (state.SessionDir),
// for its event log, long messages and request records.
func StateDir(root string, info tmux.SessionInfo) string {
	if info.StateDir != "" {
		return info.StateDir
	}
	return state.SessionDir(root, info.SocketPath, info.Name)
}

// PartyInfos are the party sessions (those with a state dir) of tc's
// server, whose socket's path is socket: the one named name, else all.
func PartyInfos(ctx context.Context, tc *tmux.Client, name, socket string) ([]tmux.SessionInfo, error) {
	if name != "" {
		info, err := tc.SessionInfo(ctx, name)
		if err != nil {
			return nil, err
		}
		if info.StateDir == "" {
			return nil, fmt.Errorf("session %s was not started by party (it has no state dir): %w", info.Name, ErrUnresolved)
		}
		return []tmux.SessionInfo{info}, nil
	}
	list, err := tc.ListSessions(ctx)
	if err != nil {
		return nil, err
	}
	var out []tmux.SessionInfo
	for _, s := range list {
		if s.StateDir != "" {
			out = append(out, tmux.SessionInfo{Name: s.Name, StateDir: s.StateDir, SocketPath: socket})
		}
	}
	return out, nil
}
