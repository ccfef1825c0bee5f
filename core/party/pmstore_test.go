package party

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/task"
)

// fixedClock always tells the same time; its waits are real.
type fixedClock struct{ clock.Real }

func (fixedClock) Now() time.Time { return time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC) }

func TestOpenPicksTheStore(t *testing.T) {
	ctx := context.Background()
	root, repo := t.TempDir(), t.TempDir()
	_, err := task.Init(ctx, task.InitOptions{Root: root, Dir: repo, Actor: "human", Clock: fixedClock{}})
	require.NoError(t, err)
	noGh := filepath.Join(t.TempDir(), "gh-missing")
	var warned []string
	warn := func(s string) { warned = append(warned, s) }

	st, err := openTaskStore(ctx, taskStoreOptions{Root: root, Cwd: repo, Storage: "fs", Clock: fixedClock{}, Warn: warn})
	require.NoError(t, err)
	assert.IsType(t, &task.FS{}, st)

	st, err = openTaskStore(ctx, taskStoreOptions{Root: root, Cwd: repo, Storage: "fs", Repo: "o/r", Gh: noGh, Clock: fixedClock{}, Warn: warn})
	require.NoError(t, err)
	assert.IsType(t, &task.FS{}, st, "unset storage, a repo, no gh: fs")
	require.Len(t, warned, 1)
	assert.Contains(t, warned[0], "gh not found")

	_, err = openTaskStore(ctx, taskStoreOptions{Root: root, Cwd: repo, Storage: "github", StorageSet: true, Repo: "o/r", Gh: noGh, Clock: fixedClock{}, Warn: warn})
	assert.ErrorIs(t, err, task.ErrUnavailable, "github asked for: no fallback")
	assert.Len(t, warned, 1)

	_, err = openTaskStore(ctx, taskStoreOptions{Root: root, Cwd: t.TempDir(), Clock: fixedClock{}})
	assert.ErrorIs(t, err, task.ErrNoTeam)
	_, err = openTaskStore(ctx, taskStoreOptions{Root: t.TempDir(), Cwd: repo, Clock: fixedClock{}})
	assert.ErrorIs(t, err, task.ErrNotFound, "a pointer to a team this state root lacks")
}

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
