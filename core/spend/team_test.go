package spend

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/session"
)

func TestReadTeam(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, session.WriteRecord(dir, session.Record{Cwd: "/src", Result: session.Result{Panes: []session.PaneSpec{
		{Role: "claude", Agent: agent.Claude, Argv: []string{"claude"}, ID: "%0", Hooks: "claude-settings"},
		{Role: "tui", Agent: agent.Generic, Argv: []string{"tui"}, ID: "%1"},
		{Role: "shell", Agent: agent.Shell, Argv: []string{"bash"}, ID: "%2"},
	}}}))
	ts, err := ReadTeam("team", dir, "/codex")
	require.NoError(t, err)
	assert.Equal(t, "/src", ts.Cwd)
	assert.Equal(t, []string{"claude", "tui"}, ts.Roles, "the agents, not the shell")
	assert.Equal(t, map[string]string{"%0": "claude", "%1": "tui", "%2": "shell"}, ts.Ledger.Roles)

	_, ok := ts.Guard(config.Config{}, nil)
	assert.False(t, ok, "no budget set")

	_, err = ReadTeam("none", t.TempDir(), "")
	assert.Error(t, err, "no record: no team")
}

// TestHeldWithoutBudget: a team whose folder sets no budget, or whose
// record cannot be read, holds no delivery and asks nothing of its ledger.
func TestHeldWithoutBudget(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	require.NoError(t, session.WriteRecord(dir, session.Record{Cwd: cwd}))
	getenv := func(k string) string {
		if k == "HOME" || k == "XDG_CONFIG_HOME" {
			return cwd
		}
		return ""
	}
	tests := []struct{ name, stateDir string }{{"no budget set", dir}, {"no record", t.TempDir()}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ok := GuardIn(getenv, clock.Real{}, "team", tt.stateDir, cwd)
			assert.False(t, ok)
			logged := 0
			held := Held(getenv, clock.Real{}, "team", tt.stateDir, cwd, func(string, ...any) { logged++ })
			assert.Empty(t, held(context.Background(), "claude"))
			assert.Zero(t, logged)
		})
	}
}
