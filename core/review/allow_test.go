package review

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/agent"
)

func TestAllowClaude(t *testing.T) {
	path := filepath.Join(t.TempDir(), "claude-settings.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"hooks":{"Stop":[]},"permissions":{"allow":["Bash(ls:*)"]}}`), 0o600))
	require.NoError(t, AllowClaude(path))
	require.NoError(t, AllowClaude(path)) // twice: each rule once
	var cfg struct {
		Hooks       map[string]any `json:"hooks"`
		Permissions struct {
			Allow []string `json:"allow"`
		} `json:"permissions"`
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &cfg))
	assert.Contains(t, cfg.Hooks, "Stop", "the hooks stay")
	assert.Equal(t, append([]string{"Bash(ls:*)"}, ClaudeAllow...), cfg.Permissions.Allow)

	assert.Error(t, AllowClaude(filepath.Join(t.TempDir(), "missing.json")))
}

func TestAllowCodex(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	user := filepath.Join(home, "rules", "default.rules")
	require.NoError(t, os.MkdirAll(filepath.Dir(user), 0o700))
	require.NoError(t, os.WriteFile(user, []byte(`prefix_rule(pattern=["ls"], decision="allow")`+"\n"), 0o600))
	path, err := AllowCodex(root, home)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(home, "rules", CodexRulesFile), path)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, CodexRules, string(b))
	b, err = os.ReadFile(user)
	require.NoError(t, err)
	assert.Equal(t, `prefix_rule(pattern=["ls"], decision="allow")`+"\n", string(b), "the user's rules are untouched")

}

func TestWriteFindings(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, Init(dir, now, 3))
	good := []byte(`{"findings":[],"summary":"fine","stats":{"files_reviewed":1,"blocking":0,"non_blocking":0}}`)

	_, err := WriteFindings(dir, good)
	assert.ErrorIs(t, err, ErrNoReview, "no review requested")

	s, err := Load(dir)
	require.NoError(t, err)
	s.State, s.Phase, s.Review = InReview, Dispatched, &Review{N: 2}
	require.NoError(t, Save(dir, s))
	_, err = WriteFindings(dir, []byte(`{"verdict":"approve"}`))
	assert.ErrorIs(t, err, ErrFindings)
	assert.NoFileExists(t, FindingsPath(dir, 2), "nothing written")

	path, err := WriteFindings(dir, good)
	require.NoError(t, err)
	assert.Equal(t, FindingsPath(dir, 2), path)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, good, b)
	_, err = WriteFindings(dir, good)
	assert.ErrorIs(t, err, ErrIllegal, "findings are written once")
}

func TestWriteAnswer(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, Init(dir, time.Now(), 3))
	_, err := WriteAnswer(dir, 1, "LRU")
	assert.ErrorIs(t, err, ErrIllegal, "no question 1")

	s, err := Load(dir)
	require.NoError(t, err)
	s.Exchanges = []Exchange{{N: 1, Kind: "dialogue", From: "codex", To: "claude", Text: "Which?"}}
	require.NoError(t, Save(dir, s))
	_, err = WriteAnswer(dir, 1, "  ")
	assert.ErrorIs(t, err, ErrBadEvent)
	path, err := WriteAnswer(dir, 1, "LRU")
	require.NoError(t, err)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "LRU\n", string(b))
	assert.Equal(t, filepath.Join(dir, "exchanges", "1", "answer.md"), path)
	_, err = WriteAnswer(dir, 1, "again")
	assert.ErrorIs(t, err, ErrIllegal, "answered once")
}

func TestAllowGemini(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	path, err := AllowGemini(root, home)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(home, ".gemini", "policies", GeminiPolicyFile), path)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, GeminiPolicy, string(b))
	for _, cmd := range []string{"review", "evidence", "ask"} {
		assert.Contains(t, GeminiPolicy, `commandPrefix = "party `+cmd+`"`)
	}
}

func TestPrepare(t *testing.T) {
	now := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	codexHome := t.TempDir()
	getenv := func(k string) string {
		if k == "CODEX_HOME" {
			return codexHome
		}
		return ""
	}
	codex := []Pane{{Agent: agent.Codex, Hooks: "codex-notify"}}

	stateDir := t.TempDir()
	require.NoError(t, Prepare(stateDir, t.TempDir(), now, 3, false, codex, getenv))
	s, err := Load(Dir(stateDir))
	require.NoError(t, err)
	assert.Equal(t, 3, s.MaxIterations, "the review state is made")
	assert.NoFileExists(t, filepath.Join(codexHome, "rules", CodexRulesFile), "no rules unless allowed")

	require.NoError(t, Prepare(t.TempDir(), t.TempDir(), now, 3, true, codex, getenv))
	assert.FileExists(t, filepath.Join(codexHome, "rules", CodexRulesFile), "allowed: Codex's rules")
}
