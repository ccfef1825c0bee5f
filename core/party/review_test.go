package party

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/session"
)

// paneEnv is the Env of an operation run inside an agent's pane of a
// session whose state dir is stateDir.
func paneEnv(stateDir string) *Env {
	return &Env{Clock: clock.Real{}, Stderr: &bytes.Buffer{},
		Getenv: func(k string) string {
			if k == "PARTY_STATE_DIR" {
				return stateDir
			}
			return os.Getenv(k) // testhome's: a runtime dir of the test's own
		}}
}

func TestReviewDirInAPane(t *testing.T) {
	dir, err := ReviewDir(context.Background(), paneEnv("/state/s"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join("/state/s", "review"), dir)
}

func TestCoordinator(t *testing.T) {
	ctx, stateDir := context.Background(), t.TempDir()
	env := paneEnv(stateDir)
	_, err := CoordinatorOf(ctx, env)
	assert.ErrorIs(t, err, review.ErrNoCoordinator, "a session started without --review")
	_, err = Signal(ctx, env, SignalOptions{Event: review.Event{Kind: review.EvRequest}})
	assert.ErrorIs(t, err, review.ErrNoCoordinator)

	require.NoError(t, review.Init(review.Dir(stateDir), time.Now().UTC(), 3))
	c, err := CoordinatorOf(ctx, env)
	require.NoError(t, err)
	assert.Equal(t, review.Dir(stateDir), c.Dir)
	assert.False(t, c.Proc.Running)
	s, err := ReviewStatus(ctx, env)
	require.NoError(t, err)
	assert.Equal(t, c.Status.State, s.State)

	critic, err := review.ParseKind("critic")
	require.NoError(t, err)
	res, err := Signal(ctx, env, SignalOptions{Event: review.Event{Kind: review.EvEvidence, Evidence: critic}})
	require.NoError(t, err)
	assert.True(t, res.Queued, "no coordinator runs to apply it")
	assert.Equal(t, s.State, res.State, "the state before the signal")
	assert.NotEmpty(t, res.ID)
}

func TestCoordinatorArgv(t *testing.T) {
	tests := []struct {
		name, session string
		want          []string
	}{
		{"the session of the environment", "", []string{"/bin/party", "coordinator", "run"}},
		{"the session named", "s", []string{"/bin/party", "--session", "s", "coordinator", "run"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, coordinatorArgv("/bin/party", tt.session))
		})
	}
}

// TestPrepareReview: a review session starts with its review state, and
// its agents may run the loop's commands, through party's own settings
// and rule files, when the configuration allows it.
func TestPrepareReview(t *testing.T) {
	dir, root := t.TempDir(), t.TempDir()
	env := map[string]string{"HOME": t.TempDir(), "CODEX_HOME": t.TempDir()}
	d := session.Deps{Clock: clock.Real{}, Getenv: func(k string) string { return env[k] }}
	settings := filepath.Join(dir, "claude-settings.json")
	require.NoError(t, os.WriteFile(settings, []byte(`{"hooks": {"Stop": "party hook claude"}}`), 0o600))
	panes := []session.PaneSpec{
		{Role: "c", Agent: agent.Claude, Argv: []string{"/bin/claude"}, Hooks: "claude-settings"},
		{Role: "x", Agent: agent.Codex, Argv: []string{"/bin/codex"}},
		{Role: "g", Agent: agent.Gemini, Argv: []string{"/bin/gemini"}},
	}
	require.NoError(t, prepareReview(d, dir, root, panes, config.Review{MaxIterations: 2, AllowCommands: true}))

	st, err := review.Load(review.Dir(dir))
	require.NoError(t, err)
	assert.Equal(t, 2, st.MaxIterations)
	b, err := os.ReadFile(settings)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"Bash(party review:*)"`)
	assert.Contains(t, string(b), "party hook claude", "the hooks stay")
	assert.FileExists(t, filepath.Join(env["CODEX_HOME"], "rules", review.CodexRulesFile))
	assert.FileExists(t, filepath.Join(env["HOME"], ".gemini", "policies", review.GeminiPolicyFile))

	other := t.TempDir()
	require.NoError(t, prepareReview(d, other, root, panes, config.Review{MaxIterations: 3}))
	_, err = os.Stat(filepath.Join(other, "claude-settings.json"))
	assert.ErrorIs(t, err, os.ErrNotExist, "no rules unless allowCommands")
}
