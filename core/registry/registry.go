package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/roles"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/core/usage"
)

// File is the registry's path in a working directory.
const File = ".party/agents.json"

// Errors of the registry.
var (
	// ErrConflict is a name registered twice.
	ErrConflict = errors.New("conflict")
	// ErrNotRegistered is a name the registry does not know.
	ErrNotRegistered = fmt.Errorf("not registered: %w", mux.ErrNoPane)
)

// Entry is one registered agent.
type Entry struct {
	Pane   string `json:"pane"`
	Remark string `json:"remark,omitempty"`
	Agent  string `json:"agent,omitempty"`
}

// Registry is the registry file at Path.
type Registry struct {
	Path   string           `json:"-"`
	Agents map[string]Entry `json:"agents"`
}

// Path is the registry of the working directory wd.
func Path(wd string) string { return filepath.Join(wd, File) }

// Load reads the registry at path; a missing file is an empty registry.
func Load(path string) (*Registry, error) {
	r := &Registry{Path: path, Agents: map[string]Entry{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, r); err != nil {
		return r, fmt.Errorf("%w: %s: %v", usage.Err, path, err)
	}
	if r.Agents == nil {
		r.Agents = map[string]Entry{}
	}
	return r, nil
}

// Save writes the registry; it stays trusted when it was (or is new), as
// the change is the user's.
func (r *Registry) Save(store config.TrustStore, now time.Time) error {
	return store.KeepTrust(r.Path, now, func() error {
		if err := os.MkdirAll(filepath.Dir(r.Path), 0o755); err != nil {
			return err
		}
		b, _ := json.MarshalIndent(r, "", "  ")
		return state.WriteFile(r.Path, append(b, '\n'), 0o644)
	})
}

// Edit loads the registry at path, changes it with change and saves it
// (Save), all under its lock (state.LockFile under party's state root):
// two edits at once lose neither. untrusted says the file is not trusted
// after the edit: one that came with the repository stays untrusted (the
// rest of it is not the user's yet), so its names, the new one too, are
// ignored until the user trusts it.
func Edit(root, path string, store config.TrustStore, now time.Time, change func(*Registry) error) (r *Registry, untrusted bool, err error) {
	unlock, err := state.LockFile(root, path)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	if r, err = Load(path); err != nil {
		return nil, false, err
	}
	if err := change(r); err != nil {
		return nil, false, err
	}
	if err := r.Save(store, now); err != nil {
		return nil, false, err
	}
	if b, err := os.ReadFile(r.Path); err == nil {
		if trusted, err := store.Trusted(r.Path, b); err == nil && !trusted {
			return r, true, nil
		}
	}
	return r, false, nil
}

// Rows are the registered agents by name, as party agents list prints
// them: name, pane, agent ("-" for none), remark.
func (r *Registry) Rows() [][]string {
	var rows [][]string
	for _, n := range r.Names() {
		e := r.Agents[n]
		agent := e.Agent
		if agent == "" {
			agent = "-"
		}
		rows = append(rows, []string{n, e.Pane, agent, e.Remark})
	}
	return rows
}

// Names are the registered names, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.Agents))
	for n := range r.Agents {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Tmux is what the registry needs of the tmux client (*tmux.Client).
type Tmux interface {
	session.Server
	Query(ctx context.Context, fields []string, args ...string) ([][]string, error)
	Pane(ctx context.Context, id string) (mux.Pane, error)
	SessionInfo(ctx context.Context, session string) (tmux.SessionInfo, error)
}

// Register points name at the pane target (an id %N or a tmux target):
// a new name with update false, a known one with update true. The entry's
// agent is what the name says, else what the pane runs. A nil remark
// keeps the old one.
func (r *Registry) Register(ctx context.Context, tc Tmux, name, target string, remark *string, update bool) (Entry, error) {
	e, exists := r.Agents[name]
	switch {
	case update && !exists:
		return e, fmt.Errorf("%w: no agent %q registered (use 'party agents add')", usage.Err, name)
	case !update && exists:
		return e, fmt.Errorf("agent %q is already registered (use 'party agents update'): %w", name, ErrConflict)
	}
	if !roles.ValidRole(name) {
		return e, fmt.Errorf("%w: agent name %q: letters, digits, '_', '.' or '-'", usage.Err, name)
	}
	rows, err := tc.Query(ctx, []string{"#{pane_id}", "#{pane_current_command}"}, "display-message", "-p", "-t", target)
	if err != nil {
		return e, fmt.Errorf("pane %q: %w", target, err)
	}
	// display-message falls back to another pane when an id is gone, and
	// prints nothing for a target that names none (exit 0).
	if len(rows) != 1 || !strings.HasPrefix(rows[0][0], "%") || (strings.HasPrefix(target, "%") && rows[0][0] != target) {
		return e, fmt.Errorf("pane %q: %w", target, mux.ErrNoPane)
	}
	e.Pane, e.Agent = rows[0][0], string(agent.Infer([]string{name}))
	if e.Agent == string(agent.Generic) {
		e.Agent = string(agent.Infer([]string{rows[0][1]})) // what the pane runs
	}
	if remark != nil {
		e.Remark = *remark
	}
	r.Agents[name] = e
	return e, nil
}

// Remove forgets name.
func (r *Registry) Remove(name string) error {
	if _, ok := r.Agents[name]; !ok {
		return fmt.Errorf("no agent %q registered: %w", name, ErrNotRegistered)
	}
	delete(r.Agents, name)
	return nil
}

// Resolver resolves a role: a name of the registry at Path first, then
// the one pane of the picked session tagged with it.
type Resolver struct {
	Tmux  Tmux
	Pick  session.Pick
	Path  string // the registry; "" is none
	Trust config.TrustStore
	// Untrusted is told the registry's path when it is not trusted and
	// its names are ignored.
	Untrusted func(path string)
}

// Resolve finds the pane of role.
func (rv Resolver) Resolve(ctx context.Context, role string) (session.Target, error) {
	if t, ok, err := rv.registered(ctx, role); ok || err != nil {
		return t, err
	}
	return session.Resolve(ctx, rv.Tmux, rv.Pick, role)
}

// registered looks role up in the registry; ok says it is registered
// (and trusted).
func (rv Resolver) registered(ctx context.Context, role string) (session.Target, bool, error) {
	if rv.Path == "" {
		return session.Target{}, false, nil
	}
	r, err := Load(rv.Path)
	if err != nil {
		return session.Target{}, false, err
	}
	e, ok := r.Agents[role]
	if !ok {
		return session.Target{}, false, nil
	}
	// The registry came with the repository: until the user trusts it, its
	// names could send text to any pane (a shell), so none is used.
	if b, err := os.ReadFile(rv.Path); err == nil {
		if trusted, err := rv.Trust.Trusted(rv.Path, b); err != nil || !trusted {
			if rv.Untrusted != nil {
				rv.Untrusted(rv.Path)
			}
			return session.Target{}, false, err
		}
	}
	p, err := rv.Tmux.Pane(ctx, e.Pane)
	if err != nil {
		return session.Target{}, true, fmt.Errorf("agent %q is registered at %s: %w", role, e.Pane, err)
	}
	kind := agent.Kind(e.Agent)
	if p.Agent != "" {
		kind = agent.Kind(p.Agent)
	}
	if p.Role == "" {
		p.Role = role
	}
	info, err := rv.Tmux.SessionInfo(ctx, p.Session)
	if err != nil {
		return session.Target{}, true, err
	}
	return session.Target{Session: p.Session, Info: info, Pane: p, Profile: agent.Lookup(kind)}, true, nil
}

// Targets are the panes a message to role goes to, each with its role
// and agent, and their session: role's one pane (Resolve), or for "all"
// every agent pane of the picked session (not shells).
func (rv Resolver) Targets(ctx context.Context, role string) (tmux.SessionInfo, []mux.Pane, error) {
	if role == "all" {
		sc, err := session.Open(ctx, rv.Tmux, rv.Pick)
		if err != nil {
			return tmux.SessionInfo{}, nil, err
		}
		panes, err := sc.AgentPanes()
		return sc.Info, panes, err
	}
	t, err := rv.Resolve(ctx, role)
	if err != nil {
		return tmux.SessionInfo{}, nil, err
	}
	if t.Pane.Agent == "" {
		t.Pane.Agent = string(t.Profile.Kind)
	}
	return t.Info, []mux.Pane{t.Pane}, nil
}
