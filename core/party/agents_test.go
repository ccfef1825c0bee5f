package party

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/registry"
	"github.com/partyhq/party/core/usage"
)

func TestAgentsRegistry(t *testing.T) {
	wd := t.TempDir()
	env, _, calls := testEnv(t, wd)

	r, err := Agents(env)
	require.NoError(t, err)
	assert.Empty(t, r.Agents, "no registry is an empty one")
	_, err = os.Stat(filepath.Join(wd, registry.File))
	assert.ErrorIs(t, err, os.ErrNotExist, "reading writes nothing")

	path, err := InitAgents(env)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(wd, registry.File), path)
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.JSONEq(t, `{"agents": {}}`, string(before))

	assert.ErrorIs(t, RemoveAgent(env, "codex"), registry.ErrNotRegistered)
	_, err = RegisterAgent(t.Context(), env, "codex", "%1", nil, true)
	assert.ErrorIs(t, err, usage.Err, "update of a name never added")
	assert.Zero(t, *calls, "refused before asking tmux")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "a refused change is not saved")
}
