package roles_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/roles"
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
		{"ambiguous", []string{"claude", "claude"}, "claude", -1, roles.ErrAmbiguous},
		{"not found", []string{"codex", "claude"}, "gemini", -1, roles.ErrNotFound},
		{"legacy claude is the first of two untagged", []string{"", ""}, "claude", 0, nil},
		{"legacy codex is the second", []string{"", ""}, "codex", 1, nil},
		{"legacy knows only claude and codex", []string{"", ""}, "gemini", -1, roles.ErrNotFound},
		{"three untagged panes: unresolved", []string{"", "", ""}, "claude", -1, roles.ErrUnresolved},
		{"one untagged pane: unresolved", []string{""}, "claude", -1, roles.ErrUnresolved},
		{"partly tagged: no legacy rule", []string{"", "codex"}, "claude", -1, roles.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			panes := listing(tt.panes...)
			got, err := roles.Resolve(panes, tt.role)
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

func TestNames(t *testing.T) {
	assert.Equal(t, []string{"b", "a"}, roles.Names(listing("b", "", "a", "b")))
}

// listing is a session's panes in order, one per role ("" untagged), as
// tmux lists them.
func listing(roles ...string) []mux.Pane {
	var out []mux.Pane
	for i, r := range roles {
		out = append(out, mux.Pane{ID: fmt.Sprintf("%%%d", i), Session: "s", WindowID: "@0", Index: i, Role: r})
	}
	return out
}

func TestValidRole(t *testing.T) {
	tests := []struct {
		role string
		want bool
	}{
		{"planner", true}, {"a.b_c-1", true}, {"9", true},
		{"", false}, {"-x", false}, {"a b", false}, {"a;b", false}, {"#{x}", false}, {strings.Repeat("a", 65), false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, roles.ValidRole(tt.role), "%q", tt.role)
	}
}
