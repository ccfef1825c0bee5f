package session

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/roles"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
)

// fakeServer lists the sessions and panes of one snapshot.
type fakeServer struct{ snap tmux.Snapshot }

func (f fakeServer) Snapshot(context.Context) (tmux.Snapshot, error) { return f.snap, nil }
func (f fakeServer) ListSessions(context.Context) ([]tmux.Session, error) {
	var out []tmux.Session
	for _, s := range f.snap.Sessions {
		out = append(out, tmux.Session{Name: s.Name, StateDir: s.StateDir})
	}
	return out, nil
}
func (f fakeServer) ListPanes(_ context.Context, s string) ([]mux.Pane, error) {
	return f.snap.PanesOf(s), nil
}

func snapshot(sessions ...tmux.SessionInfo) tmux.Snapshot {
	s := tmux.Snapshot{Sessions: sessions}
	for i, info := range sessions {
		s.Panes = append(s.Panes, mux.Pane{ID: "%" + string(rune('1'+i)), Session: info.Name, Role: "claude", Agent: "claude"})
	}
	return s
}

func TestChoose(t *testing.T) {
	one := snapshot(tmux.SessionInfo{Name: "party", StateDir: "/s/p"}, tmux.SessionInfo{Name: "other"})
	two := snapshot(tmux.SessionInfo{Name: "b", StateDir: "/s/b"}, tmux.SessionInfo{Name: "a", StateDir: "/s/a"})
	tests := []struct {
		name    string
		pick    Pick
		env     map[string]string
		snap    tmux.Snapshot
		want    string
		wantErr string
	}{
		{"--session wins", Pick{Name: "x"}, map[string]string{"PARTY_SESSION": "y"}, two, "x", ""},
		{"then PARTY_SESSION", Pick{}, map[string]string{"PARTY_SESSION": "y", "TMUX": "1", "TMUX_PANE": "%1"}, two, "y", ""},
		{"then the session of TMUX_PANE", Pick{}, map[string]string{"TMUX": "1", "TMUX_PANE": "%2"}, two, "a", ""},
		{"TMUX_PANE outside tmux is ignored", Pick{}, map[string]string{"TMUX_PANE": "%2"}, one, "party", ""},
		{"the only party session", Pick{}, nil, one, "party", ""},
		{"two party sessions", Pick{Server: "srv"}, nil, two, "", "2 party sessions on srv (a, b); pick one with --session or PARTY_SESSION: session not determined"},
		{"no session", Pick{Server: "srv"}, nil, tmux.Snapshot{}, "", "no party session on srv; start one with 'party start': session not determined"},
		{"only others", Pick{Server: "srv"}, nil, snapshot(tmux.SessionInfo{Name: "z"}, tmux.SessionInfo{Name: "y"}), "",
			"no party session on srv (other sessions: y, z); use --session or PARTY_SESSION: session not determined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.pick.Getenv = func(k string) string { return tt.env[k] }
			got, err := tt.pick.Choose(tt.snap)
			if tt.wantErr != "" {
				assert.ErrorIs(t, err, ErrUnresolved)
				assert.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestOpenResolveList(t *testing.T) {
	ctx := context.Background()
	srv := fakeServer{snap: snapshot(tmux.SessionInfo{Name: "party", StateDir: "/s/p"}, tmux.SessionInfo{Name: "other"})}
	srv.snap.Panes = append(srv.snap.Panes, mux.Pane{ID: "%9", Session: "party", Role: "notes", Agent: "shell", Dead: true, DeadStatus: "1"})
	pick := Pick{Getenv: func(string) string { return "" }, Server: "srv"}

	sc, err := OpenParty(ctx, srv, pick)
	require.NoError(t, err)
	assert.Equal(t, "/s/p", sc.Info.StateDir)
	assert.Equal(t, []PaneRow{{Role: "claude", Pane: "%1", Agent: "claude"}, {Role: "notes", Pane: "%9", Agent: "shell", Dead: true, Status: "1"}}, sc.Rows())
	panes, err := sc.AgentPanes()
	require.NoError(t, err)
	assert.Len(t, panes, 1, "not the shell")

	_, err = OpenParty(ctx, srv, Pick{Name: "other", Getenv: pick.Getenv})
	assert.ErrorIs(t, err, ErrUnresolved, "a session party did not start has no state dir")
	_, err = Open(ctx, srv, Pick{Name: "gone", Getenv: pick.Getenv, Server: "srv"})
	assert.ErrorIs(t, err, mux.ErrNoSession)

	tgt, err := Resolve(ctx, srv, pick, "claude")
	require.NoError(t, err)
	assert.Equal(t, "%1", tgt.Pane.ID)
	assert.Equal(t, "claude", string(tgt.Profile.Kind))
	_, err = Resolve(ctx, srv, pick, "codex")
	assert.ErrorIs(t, err, roles.ErrNotFound)

	list, err := List(ctx, srv)
	require.NoError(t, err)
	require.Len(t, list, 1, "party sessions only")
	assert.Equal(t, []string{"claude", "notes"}, list[0].Roles)
	list, err = List(ctx, fakeServer{})
	require.NoError(t, err)
	assert.NotNil(t, list, "none is an empty list, [] in JSON")
}

func TestLastLines(t *testing.T) {
	assert.Equal(t, []string{"b", "c"}, LastLines("a\nb\nc\n\n", 2))
	assert.Equal(t, []string{"a"}, LastLines("a", 5))
}

func TestStateDir(t *testing.T) {
	assert.Equal(t, "/s/p", StateDir("/root", tmux.SessionInfo{Name: "p", StateDir: "/s/p"}))
	assert.Equal(t, state.SessionDir("/root", "/tmp/sock", "p"), StateDir("/root", tmux.SessionInfo{Name: "p", SocketPath: "/tmp/sock"}))
}

func TestRowsAsPrinted(t *testing.T) {
	assert.Equal(t, []string{"-", "%3", "-", "0", "dead(status 1)", "bash"},
		PaneRow{Pane: "%3", Dead: true, Status: "status 1", Command: "bash"}.Row(), "empty fields are -, a dead pane says its status")
	assert.Equal(t, []string{"planner", "%0", "claude", "42", "-", "claude"},
		PaneRow{Role: "planner", Pane: "%0", Agent: "claude", PID: 42, Command: "claude"}.Row())
	assert.Equal(t, []string{"crew", "planner,executor", "1"},
		Listed{Session: tmux.Session{Name: "crew", Attached: 1}, Roles: []string{"planner", "executor"}}.Row())
}

func TestResultAsPrinted(t *testing.T) {
	r := Result{Session: "crew", Panes: []PaneSpec{{Role: "planner", ID: "%0"}, {Role: "executor", ID: "%1"}}}
	assert.Equal(t, "started crew: planner=%0 executor=%1", r.String())
}
