package remote

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/usage"
)

func TestRoleAt(t *testing.T) {
	tests := []struct {
		name, in, role, host string
		bad                  bool
	}{
		{"this host's", "claude", "claude", "", false},
		{"another host's", "claude@box", "claude", "box", false},
		{"a destination with its user", "claude@me@box", "claude", "me@box", false},
		{"every agent there", "all@box", "all", "box", false},
		{"no role", "@box", "", "", true},
		{"no host", "claude@", "", "", true},
		{"no role name", "cl aude@box", "", "", true},
		{"a role that starts with '-'", "-x@box", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			role, host, err := RoleAt(tt.in)
			if tt.bad {
				assert.ErrorIs(t, err, usage.Err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []string{tt.role, tt.host}, []string{role, host})
		})
	}
}

// TestStartArgs: party start --host sends only plain words: each
// flag with a value as one --FLAG=VALUE word, a pane as ROLE or
// ROLE=AGENT; free text is a usage error that names the flag.
func TestStartArgs(t *testing.T) {
	tests := []struct {
		name string
		opts session.StartOptions
		want []string
		bad  string // the flag the usage error names
	}{
		{"panes and flags", session.StartOptions{Panes: []string{"claude", "rev=codex"}, Supervise: true, Cwd: "work/app", Size: "200x50"},
			[]string{"start", "--no-attach", "--supervise", "--pane=claude", "--pane=rev=codex", "--cwd=work/app", "--size=200x50"}, ""},
		{"worktrees", session.StartOptions{Worktree: []string{"impl"}, Base: "main"},
			[]string{"start", "--no-attach", "--base=main", "--worktree=impl"}, ""},
		{"a command line", session.StartOptions{Panes: []string{"claude=claude --model x"}}, nil, "--pane"},
		{"a command with a shell character", session.StartOptions{Panes: []string{"x=a;b"}}, nil, "--pane"},
		{"a cwd with a space", session.StartOptions{Cwd: "my dir"}, nil, "--cwd"},
		{"a record dir with a dollar", session.StartOptions{Record: "$HOME/rec"}, nil, "--record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Local{}.startArgs(tt.opts)
			if tt.bad != "" {
				assert.ErrorIs(t, err, usage.Err)
				assert.ErrorContains(t, err, tt.bad)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
