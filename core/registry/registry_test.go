package registry

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/roles"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/core/usage"
)

// fakeTmux is a server with the panes of one snapshot.
type fakeTmux struct{ snap tmux.Snapshot }

func (f fakeTmux) Snapshot(context.Context) (tmux.Snapshot, error) { return f.snap, nil }
func (f fakeTmux) ListSessions(context.Context) ([]tmux.Session, error) {
	var out []tmux.Session
	for _, s := range f.snap.Sessions {
		out = append(out, tmux.Session{Name: s.Name, StateDir: s.StateDir})
	}
	return out, nil
}
func (f fakeTmux) ListPanes(_ context.Context, s string) ([]mux.Pane, error) {
	return f.snap.PanesOf(s), nil
}
func (f fakeTmux) Pane(_ context.Context, id string) (mux.Pane, error) {
	for _, p := range f.snap.Panes {
		if p.ID == id {
			return p, nil
		}
	}
	return mux.Pane{}, mux.ErrNoPane
}
func (f fakeTmux) SessionInfo(_ context.Context, name string) (tmux.SessionInfo, error) {
	if i, ok := f.snap.Session(name); ok {
		return i, nil
	}
	return tmux.SessionInfo{}, mux.ErrNoSession
}

// Query answers display-message -t TARGET like tmux: a pane id or
// SESSION:WINDOW.PANE, falling back to the first pane for a gone id, and
// empty fields (exit 0) for a target that names no pane.
func (f fakeTmux) Query(_ context.Context, _ []string, args ...string) ([][]string, error) {
	target := args[len(args)-1]
	for _, p := range f.snap.Panes {
		if p.ID == target || p.Session+":0."+string(rune('0'+p.Index)) == target {
			return [][]string{{p.ID, p.CurrentCommand}}, nil
		}
	}
	if len(f.snap.Panes) > 0 && target[0] == '%' {
		p := f.snap.Panes[0]
		return [][]string{{p.ID, p.CurrentCommand}}, nil
	}
	return [][]string{{"", ""}}, nil
}

func server() fakeTmux {
	return fakeTmux{snap: tmux.Snapshot{
		Panes: []mux.Pane{
			{ID: "%1", Session: "work", Index: 0, CurrentCommand: "codex"},
			{ID: "%2", Session: "work", Index: 1, CurrentCommand: "bash"},
			{ID: "%3", Session: "party", Role: "claude", Agent: "claude", CurrentCommand: "claude"},
		},
		Sessions: []tmux.SessionInfo{{Name: "work"}, {Name: "party", StateDir: "/state/party"}},
	}}
}

func ptr(s string) *string { return &s }

func TestRegister(t *testing.T) {
	ctx := context.Background()
	tc := server()
	r, err := Load(Path(t.TempDir()))
	require.NoError(t, err)
	assert.Empty(t, r.Agents, "a missing file is an empty registry")

	e, err := r.Register(ctx, tc, "reviewer", "%1", ptr("the old codex"), false)
	require.NoError(t, err)
	assert.Equal(t, Entry{Pane: "%1", Agent: "codex", Remark: "the old codex"}, e, "the agent is what the pane runs")

	e, err = r.Register(ctx, tc, "claude", "work:0.1", nil, false)
	require.NoError(t, err)
	assert.Equal(t, Entry{Pane: "%2", Agent: "claude"}, e, "a tmux target becomes its id; the name says the agent")

	_, err = r.Register(ctx, tc, "reviewer", "%2", nil, false)
	assert.ErrorIs(t, err, ErrConflict)
	_, err = r.Register(ctx, tc, "nobody", "%2", nil, true)
	assert.ErrorIs(t, err, usage.Err)
	_, err = r.Register(ctx, tc, "bad name", "%2", nil, false)
	assert.ErrorIs(t, err, usage.Err)
	_, err = r.Register(ctx, tc, "gone", "%9", nil, false)
	assert.ErrorIs(t, err, mux.ErrNoPane, "tmux's fallback to another pane is caught")
	_, err = r.Register(ctx, tc, "nowhere", "notapane", nil, false)
	assert.ErrorIs(t, err, mux.ErrNoPane, "a target that names no pane is refused, not registered as pane \"\"")
	assert.NotContains(t, r.Names(), "nowhere")

	e, err = r.Register(ctx, tc, "reviewer", "%2", nil, true)
	require.NoError(t, err)
	assert.Equal(t, "the old codex", e.Remark, "update keeps the remark")
	assert.Equal(t, []string{"claude", "reviewer"}, r.Names())

	assert.ErrorIs(t, r.Remove("nobody"), ErrNotRegistered)
	require.NoError(t, r.Remove("claude"))
	assert.Equal(t, []string{"reviewer"}, r.Names())
}

func TestSaveLoad(t *testing.T) {
	home := t.TempDir()
	store := config.TrustStore{Path: filepath.Join(home, "trust.json")}
	r, err := Load(Path(home))
	require.NoError(t, err)
	r.Agents["x"] = Entry{Pane: "%4", Agent: "gemini"}
	require.NoError(t, r.Save(store, time.Now()))

	got, err := Load(r.Path)
	require.NoError(t, err)
	assert.Equal(t, r, got)
	b, err := os.ReadFile(r.Path)
	require.NoError(t, err)
	ok, err := store.Trusted(r.Path, b)
	require.NoError(t, err)
	assert.True(t, ok, "a registry the user made is trusted")

	require.NoError(t, os.WriteFile(r.Path, []byte("{"), 0o644))
	_, err = Load(r.Path)
	assert.ErrorIs(t, err, usage.Err)
}

func TestResolve(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	store := config.TrustStore{Path: filepath.Join(home, "trust.json")}
	r, err := Load(Path(home))
	require.NoError(t, err)
	r.Agents["claude"] = Entry{Pane: "%1", Agent: "codex"}
	r.Agents["gone"] = Entry{Pane: "%9"}
	require.NoError(t, r.Save(config.TrustStore{Path: filepath.Join(home, "other.json")}, time.Now())) // trusted elsewhere only

	var noted []string
	rv := Resolver{Tmux: server(), Pick: session.Pick{Getenv: func(string) string { return "" }, Server: "test"},
		Path: r.Path, Trust: store, Untrusted: func(p string) { noted = append(noted, p) }}
	got, err := rv.Resolve(ctx, "claude")
	require.NoError(t, err)
	assert.Equal(t, "%3", got.Pane.ID, "an untrusted registry is ignored")
	assert.Equal(t, []string{r.Path}, noted)

	_, err = store.Trust(r.Path, time.Now())
	require.NoError(t, err)
	got, err = rv.Resolve(ctx, "claude")
	require.NoError(t, err)
	assert.Equal(t, session.Target{Session: "work", Info: tmux.SessionInfo{Name: "work"},
		Pane: mux.Pane{ID: "%1", Session: "work", Role: "claude", CurrentCommand: "codex"}, Profile: agent.Lookup(agent.Codex)}, got,
		"a registered name wins over a tagged pane")

	_, err = rv.Resolve(ctx, "gone")
	assert.ErrorIs(t, err, mux.ErrNoPane)
	_, err = rv.Resolve(ctx, "nobody")
	assert.ErrorIs(t, err, roles.ErrNotFound)
}

func TestTargets(t *testing.T) {
	ctx := context.Background()
	tc := server()
	tc.snap.Panes = append(tc.snap.Panes,
		mux.Pane{ID: "%4", Session: "party", Role: "planner", Agent: "codex"},
		mux.Pane{ID: "%5", Session: "party", Role: "notes", Agent: "shell"},
		mux.Pane{ID: "%6", Session: "party", Role: "legacy"})
	rv := Resolver{Tmux: tc, Pick: session.Pick{Name: "party", Getenv: func(string) string { return "" }}}

	info, panes, err := rv.Targets(ctx, "all")
	require.NoError(t, err)
	assert.Equal(t, "/state/party", info.StateDir)
	var ids []string
	for _, p := range panes {
		ids = append(ids, p.ID)
	}
	assert.Equal(t, []string{"%3", "%4"}, ids, "agent panes only: no shell, no pane without an agent")

	_, panes, err = rv.Targets(ctx, "legacy")
	require.NoError(t, err)
	assert.Equal(t, "generic", panes[0].Agent, "a pane without @party_agent gets its profile's kind")

	rv.Pick.Name = "work"
	_, _, err = rv.Targets(ctx, "all")
	assert.ErrorIs(t, err, roles.ErrNotFound, "a session without agent panes")
	_, _, err = rv.Targets(ctx, "nobody")
	assert.ErrorIs(t, err, roles.ErrNotFound, "the legacy two-pane rule knows claude and codex only")
}

func TestRegistryRows(t *testing.T) {
	r := &Registry{Agents: map[string]Entry{"zed": {Pane: "%2", Agent: "codex", Remark: "the reviewer"}, "amy": {Pane: "%1"}}}
	assert.Equal(t, [][]string{{"amy", "%1", "-", ""}, {"zed", "%2", "codex", "the reviewer"}}, r.Rows(), "by name, - for no agent")
}
