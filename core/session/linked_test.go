package session

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/task"
)

func TestSessionsIn(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "repo")
	nested := filepath.Join(repo, "nested")
	for _, d := range []string{filepath.Join(repo, ".party"), filepath.Join(nested, ".party"), filepath.Join(repo, "sub")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	for _, d := range []string{repo, nested} {
		id, err := task.NewTeamID()
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(d, task.PointerFile), []byte(`{"id":"`+id+`"}`), 0o644))
	}
	dirs := map[string]string{}
	for name, cwd := range map[string]string{"a": repo, "b": filepath.Join(repo, "sub"), "c": repo + "2", "d": "", "e": nested} {
		sd := t.TempDir()
		dirs[name] = sd
		if cwd != "" {
			b, _ := json.Marshal(map[string]string{"cwd": cwd})
			require.NoError(t, os.WriteFile(filepath.Join(sd, "session.json"), b, 0o600))
		}
	}
	assert.Equal(t, []string{"a", "b"}, sessionsIn(repo, dirs))
	assert.Equal(t, []string{"e"}, sessionsIn(nested, dirs), "a nested team's session is its own")
}
