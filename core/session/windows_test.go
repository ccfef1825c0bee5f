package session

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/launch"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/state"
)

func TestStartWritesTheRecordReadRecordReads(t *testing.T) {
	cwd := t.TempDir()
	env := map[string]string{"HOME": t.TempDir(), "XDG_STATE_HOME": t.TempDir(), "PWD": cwd}
	d, _ := testDeps(t, &fakeTmux{}, env)
	res, err := Start(context.Background(), d, StartOptions{Name: "team", Panes: []string{"notes", "x=/bin/true -v"}, Size: "100x30"})
	require.NoError(t, err)

	rec, err := ReadRecord(res.StateDir)
	require.NoError(t, err)
	assert.Equal(t, res.Session, rec.Session)
	assert.Equal(t, res.StateDir, rec.StateDir)
	require.Len(t, rec.Panes, 2)
	assert.Equal(t, []string{"notes", "%1"}, []string{rec.Panes[0].Role, rec.Panes[1].ID})
	assert.Equal(t, cwd, rec.Cwd)
	require.Contains(t, rec.Launch, "x")
	assert.Equal(t, launch.Command(d.Exe, filepath.Join(res.StateDir, "launch", "x.json")), rec.Launch["x"].Argv,
		"a pane is respawned the way tmux started it")
	assert.Contains(t, rec.Launch, "notes")

	_, err = ReadRecord(t.TempDir())
	assert.ErrorIs(t, err, os.ErrNotExist)
	bad := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bad, RecordFile), []byte("{"), 0o600))
	_, err = ReadRecord(bad)
	assert.ErrorContains(t, err, RecordFile)
}

func TestStartCoordinator(t *testing.T) {
	t.Run("runs the supervisor in the hidden window", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ft := &fakeTmux{}
			d, _ := testDeps(t, ft, nil)
			d.Environ = []string{"PATH=/bin", "PARTY_X=1", "SECRET=s"}
			dir := t.TempDir()
			// Nobody takes the coordinator's lock here: Start gives up
			// waiting for it after 5 s of the bubble's virtual time.
			require.NoError(t, StartCoordinator(context.Background(), d, "team", dir, 4))

			assert.Equal(t, []string{"new-window team " + CoordinatorWindow}, ft.calls)
			spec, err := launch.Read(filepath.Join(dir, "launch", CoordinatorWindow+".json"))
			require.NoError(t, err)
			assert.Equal(t, []string{d.Exe, "--session", "team", "coordinator", "supervise"}, spec.Argv)
			assert.Equal(t, []string{"PARTY_SESSION=team", "PATH=/bin", "PARTY_X=1", "PARTY_STATE_DIR=" + dir}, spec.Env)
			s, err := review.Load(review.Dir(dir))
			require.NoError(t, err)
			assert.Equal(t, 4, s.MaxIterations, "the review state is initialized")
		})
	})

	t.Run("refuses while one runs", func(t *testing.T) {
		ft := &fakeTmux{}
		d, _ := testDeps(t, ft, nil)
		dir := t.TempDir()
		require.NoError(t, state.MkdirPrivate(review.Dir(dir)))
		release, err := state.Hold(context.Background(), clock.Real{}, filepath.Join(review.Dir(dir), review.CoordinatorLock))
		require.NoError(t, err)
		defer release()
		err = StartCoordinator(context.Background(), d, "team", dir, 3)
		assert.ErrorIs(t, err, review.ErrRunning)
		assert.Empty(t, ft.calls, "no second window")
	})

	t.Run("start --review starts it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cwd := t.TempDir()
			env := map[string]string{"HOME": t.TempDir(), "XDG_STATE_HOME": t.TempDir(), "PWD": cwd}
			ft := &fakeTmux{}
			d, _ := testDeps(t, ft, env)
			cfg := config.Config{}
			cfg.Review.MaxIterations = 2
			res, err := Start(context.Background(), d, StartOptions{Name: "team", Panes: []string{"notes"}, Size: "100x30", Review: true, Config: cfg})
			require.NoError(t, err)
			assert.Equal(t, "new-window team "+CoordinatorWindow, ft.calls[len(ft.calls)-1])
			s, err := review.Load(review.Dir(res.StateDir))
			require.NoError(t, err)
			assert.Equal(t, 2, s.MaxIterations)
		})
	})
}

func TestStartSwitchboard(t *testing.T) {
	ft := &fakeTmux{}
	d, _ := testDeps(t, ft, nil)
	dir := t.TempDir()
	id, err := StartSwitchboard(context.Background(), d, "team", dir, 5)
	require.NoError(t, err)
	assert.Equal(t, "%0", id)
	assert.Equal(t, []string{"new-window team " + SwitchboardWindow}, ft.calls)
	spec, err := launch.Read(filepath.Join(dir, "launch", SwitchboardWindow+".json"))
	require.NoError(t, err)
	assert.Equal(t, []string{d.Exe, "--session", "team", "route", "--hop-limit", "5"}, spec.Argv)
}
