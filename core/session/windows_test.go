package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/launch"
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

func TestStartReviewStartsTheCoordinator(t *testing.T) {
	cwd := t.TempDir()
	env := map[string]string{"HOME": t.TempDir(), "XDG_STATE_HOME": t.TempDir(), "PWD": cwd}
	ft := &fakeTmux{}
	d, _ := testDeps(t, ft, env)
	var started []string
	d.PrepareReview = func(_ Deps, stateDir, _ string, panes []PaneSpec, cfg config.Review) error {
		started = append(started, fmt.Sprintf("prepare %s %d %d", stateDir, len(panes), cfg.MaxIterations))
		return nil
	}
	d.Coordinator = func(_ context.Context, _ Deps, session, stateDir string, maxIterations int) error {
		started = append(started, fmt.Sprintf("%s %s %d", session, stateDir, maxIterations))
		return nil
	}
	cfg := config.Config{}
	cfg.Review.MaxIterations = 2
	res, err := Start(context.Background(), d, StartOptions{Name: "team", Panes: []string{"notes"}, Size: "100x30", Review: true, Config: cfg})
	require.NoError(t, err)
	assert.Equal(t, []string{"prepare " + res.StateDir + " 1 2", "team " + res.StateDir + " 2"}, started,
		"Deps.PrepareReview, then Deps.Coordinator, once each, with the review's iterations")

	d.Coordinator = nil
	_, err = Start(context.Background(), d, StartOptions{Name: "team2", Panes: []string{"notes"}, Size: "100x30", Review: true, Config: cfg})
	assert.Error(t, err, "no Coordinator: --review cannot be kept")
}

func TestStartSwitchboard(t *testing.T) {
	ft := &fakeTmux{}
	d, _ := testDeps(t, ft, nil)
	dir := t.TempDir()
	id, err := StartSwitchboard(context.Background(), d, "team", dir, 5)
	require.NoError(t, err)
	assert.Equal(t, "%0", id)
	assert.Equal(t, []string{"new-window team " + daemon.SwitchboardWindow}, ft.calls)
	spec, err := launch.Read(filepath.Join(dir, "launch", daemon.SwitchboardWindow+".json"))
	require.NoError(t, err)
	assert.Equal(t, []string{d.Exe, "--session", "team", "route", "--hop-limit", "5"}, spec.Argv)
}
