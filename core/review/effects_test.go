package review

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/tmux"
)

// gitRepo makes a repository with one commit on main, and returns its
// directory.
func gitRepo(t *testing.T) string {
	t.Helper()
	_, err := exec.LookPath("git")
	require.NoError(t, err, "git is required, as tmux is (apt-get install -y git)")
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t.invalid"}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
	}
	git("init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o600))
	git("add", "a.txt")
	git("commit", "-q", "-m", "init")
	git("checkout", "-q", "-b", "work")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o600))
	git("commit", "-q", "-am", "two")
	return dir
}

func TestPaneEffectsDiff(t *testing.T) {
	dir := gitRepo(t)
	e := &PaneEffects{Cwd: dir}
	ctx := context.Background()

	d, err := e.Diff(ctx, "main")
	require.NoError(t, err)
	assert.Equal(t, "main", d.Base)
	assert.Len(t, d.MergeBase, 40, "the merge base is a commit")
	assert.False(t, d.Uncommitted, "everything is committed")
	assert.Empty(t, d.Untracked)
	assert.Contains(t, string(d.Patch), "+two\n")

	// Uncommitted changes and untracked files are part of the work.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\nthree\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "new.txt"), []byte("fresh\n"), 0o600))
	d, err = e.Diff(ctx, "main")
	require.NoError(t, err)
	assert.True(t, d.Uncommitted)
	assert.Equal(t, []string{"new.txt"}, d.Untracked)
	assert.Contains(t, string(d.Patch), "+three\n")
	assert.Contains(t, string(d.Patch), "+fresh\n")

	for _, tc := range []struct{ name, base, want string }{
		{"flag", "--output=x", "is not a branch"},
		{"unknown branch", "nowhere", "git merge-base HEAD nowhere"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Diff(ctx, tc.base)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// logLines collects what a Logf wrote.
type logLines []string

func (l *logLines) logf(format string, args ...any) { *l = append(*l, fmt.Sprintf(format, args...)) }

func TestPaneEffectsSend(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		wantErr bool
		want    []string
	}{
		{"confirmed", nil, false, []string{"sent to codex (%2): hello [submitted]"}},
		{"unconfirmed counts as sent", fmt.Errorf("x: %w", deliver.ErrUnconfirmed), false, []string{"sent to codex (%2): hello [unconfirmed: not sent again]"}},
		{"refused", deliver.ErrInputBusy, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log logLines
			e := &PaneEffects{Logf: log.logf, Deliver: func(_ context.Context, role, line string) (string, deliver.Result, error) {
				assert.Equal(t, "codex", role)
				assert.Equal(t, "hello", line)
				return "%2", deliver.Result{Outcome: "submitted"}, tc.err
			}}
			err := e.Send(context.Background(), "codex", "hello")
			if tc.wantErr {
				assert.ErrorIs(t, err, tc.err)
			} else {
				assert.NoError(t, err)
			}
			assert.Equal(t, tc.want, []string(log))
		})
	}
}

// fakePanes lists panes and records respawns.
type fakePanes struct {
	panes     []mux.Pane
	listErr   error
	failOn    string // pane id whose respawn fails
	respawned map[string]tmux.Spawn
}

func (f *fakePanes) ListPanes(_ context.Context, session string) ([]mux.Pane, error) {
	return f.panes, f.listErr
}

func (f *fakePanes) RespawnPane(_ context.Context, id string, spawn tmux.Spawn) error {
	if id == f.failOn {
		return errors.New("no such pane")
	}
	if f.respawned == nil {
		f.respawned = map[string]tmux.Spawn{}
	}
	f.respawned[id] = spawn
	return nil
}

func TestPaneEffectsHealth(t *testing.T) {
	fp := &fakePanes{panes: []mux.Pane{
		{ID: "%1", Role: "claude"},                                // alive
		{ID: "%2", Role: "codex", Dead: true, DeadStatus: "1"},    // dead: respawned
		{ID: "%3", Role: "gemini", Dead: true},                    // dead, status unknown
		{ID: "%4", Dead: true},                                    // no role: not an agent
		{ID: "%5", Role: "shell", Dead: true},                     // not launched by party start
		{ID: "%6", Role: "critic", Dead: true, DeadStatus: "137"}, // respawn fails
	}, failOn: "%6"}
	var log logLines
	e := &PaneEffects{Session: "s", Cwd: "/repo", Panes: fp, Logf: log.logf, Launch: map[string]Launch{
		"claude": {Argv: []string{"claude"}},
		"codex":  {Argv: []string{"codex", "--x"}, Env: []string{"A=1"}},
		"gemini": {Argv: []string{"gemini"}},
		"critic": {Argv: []string{"critic"}},
	}}
	roles, err := e.Health(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"codex", "gemini"}, roles)
	assert.Equal(t, map[string]tmux.Spawn{
		"%2": {Cwd: "/repo", Env: []string{"A=1"}, Argv: []string{"codex", "--x"}},
		"%3": {Cwd: "/repo", Argv: []string{"gemini"}},
	}, fp.respawned)
	assert.Equal(t, []string{
		"health: codex (%2) was dead (status 1); respawned",
		"health: gemini (%3) was dead (status unknown); respawned",
		"health: respawn critic (%6): no such pane",
	}, []string(log))

	fp.listErr = mux.ErrNoSession
	_, err = e.Health(context.Background())
	assert.ErrorIs(t, err, mux.ErrNoSession)
}
