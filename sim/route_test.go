package sim_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/route"
	"github.com/partyhq/party/sim"
)

func TestResolve(t *testing.T) {
	tests := []struct {
		name  string
		panes []string // roles, "" = untagged
		role  string
		want  int // index of the pane, -1 for an error
		err   error
	}{
		{"exactly one", []string{"codex", "claude", "shell"}, "claude", 1, nil},
		{"ambiguous", []string{"claude", "claude"}, "claude", -1, route.ErrAmbiguous},
		{"not found", []string{"codex", "claude"}, "gemini", -1, route.ErrNotFound},
		{"legacy claude is the first of two untagged", []string{"", ""}, "claude", 0, nil},
		{"legacy codex is the second", []string{"", ""}, "codex", 1, nil},
		{"legacy knows only claude and codex", []string{"", ""}, "gemini", -1, route.ErrNotFound},
		{"three untagged panes: unresolved", []string{"", "", ""}, "claude", -1, route.ErrUnresolved},
		{"one untagged pane: unresolved", []string{""}, "claude", -1, route.ErrUnresolved},
		{"partly tagged: no legacy rule", []string{"", "codex"}, "claude", -1, route.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := sim.NewMux(sim.NewClock())
			for _, r := range tt.panes {
				m.Add("s", r, sim.NewAgent("generic"))
			}
			panes, err := m.ListPanes(context.Background(), "s")
			require.NoError(t, err)
			got, err := route.Resolve(panes, tt.role)
			if tt.err != nil {
				assert.ErrorIs(t, err, tt.err)
				assert.Contains(t, err.Error(), tt.err.Error(), "the code is in the message")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, panes[tt.want].ID, got.ID)
		})
	}
}

func TestRoles(t *testing.T) {
	m := sim.NewMux(sim.NewClock())
	for _, r := range []string{"b", "", "a", "b"} {
		m.Add("s", r, sim.NewAgent("generic"))
	}
	panes, _ := m.ListPanes(context.Background(), "s")
	assert.Equal(t, []string{"b", "a"}, route.Roles(panes))
}
