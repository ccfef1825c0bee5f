package github

import (
	"context"
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

	st, err := Open(ctx, OpenOptions{Root: root, Cwd: repo, Storage: "fs", Clock: fixedClock{}, Warn: warn})
	require.NoError(t, err)
	assert.IsType(t, &task.FS{}, st)

	st, err = Open(ctx, OpenOptions{Root: root, Cwd: repo, Storage: "fs", Repo: "o/r", Gh: noGh, Clock: fixedClock{}, Warn: warn})
	require.NoError(t, err)
	assert.IsType(t, &task.FS{}, st, "unset storage, a repo, no gh: fs")
	require.Len(t, warned, 1)
	assert.Contains(t, warned[0], "gh not found")

	_, err = Open(ctx, OpenOptions{Root: root, Cwd: repo, Storage: "github", StorageSet: true, Repo: "o/r", Gh: noGh, Clock: fixedClock{}, Warn: warn})
	assert.ErrorIs(t, err, task.ErrUnavailable, "github asked for: no fallback")
	assert.Len(t, warned, 1)

	_, err = Open(ctx, OpenOptions{Root: root, Cwd: t.TempDir(), Clock: fixedClock{}})
	assert.ErrorIs(t, err, task.ErrNoTeam)
	_, err = Open(ctx, OpenOptions{Root: t.TempDir(), Cwd: repo, Clock: fixedClock{}})
	assert.ErrorIs(t, err, task.ErrNotFound, "a pointer to a team this state root lacks")
}
