package review

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The names an older party wrote, and what they are read as now.
func TestLegacyNames(t *testing.T) {
	states := []struct {
		name string
		want State
	}{
		{"REVIEW", InReview},
		{"DIALOGUE", Dialogue},
		{"CODEX_REVIEW", InReview},
		{"codex-review", InReview},
		{"CODEX_DIALOGUE", Dialogue},
		{"codex_dialogue", Dialogue},
	}
	for _, tc := range states {
		t.Run("state "+tc.name, func(t *testing.T) {
			got, err := ParseState(tc.name)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	kinds := []struct {
		name string
		want Kind
	}{
		{"reviewer-ran", ReviewerRan},
		{"review-approved", ReviewApproved},
		{"codex-ran", ReviewerRan},
		{"codex", ReviewApproved},
		{"critic", Critic},
	}
	for _, tc := range kinds {
		t.Run("kind "+tc.name, func(t *testing.T) {
			var got Kind
			require.NoError(t, json.Unmarshal([]byte(`"`+tc.name+`"`), &got))
			assert.Equal(t, tc.want, got)
		})
	}
	// Every old name is gone from what party writes.
	for old, st := range legacyStates {
		assert.NotEqual(t, old, st.String())
	}
	for old, k := range legacyKinds {
		assert.NotEqual(t, old, k)
		assert.Contains(t, Kinds, k)
	}
}

// An agent may name the coordinator's evidence by its old name, and is
// refused the same way; an unknown name stays a bad event.
func TestParseKindLegacy(t *testing.T) {
	for _, name := range []string{"codex", "codex-ran", "review-approved", "reviewer-ran"} {
		_, err := ParseKind(name)
		assert.ErrorIs(t, err, ErrForbidden, name)
	}
	_, err := ParseKind("codex-approved")
	assert.ErrorIs(t, err, ErrBadEvent)
	_, err = ParseState("CODEX")
	assert.ErrorIs(t, err, ErrBadState)
	assert.ErrorContains(t, err, "states: IDLE, IMPLEMENT, SELF_REVIEW, CRITICS, REVIEW, VERIFY, PR_READY, NEEDS_DISCUSSION, PLANNING, DIALOGUE")
}

// A state file an older party wrote, with the old names in the state, an
// exchange's return state and the evidence, loads under the new names and
// is saved with them only.
func TestLoadLegacyStateFile(t *testing.T) {
	dir := t.TempDir()
	old := `{"state":"CODEX_DIALOGUE","since":"2026-11-22T10:00:00Z","max_iterations":3,"iteration":1,"reviews":1,
	"evidence":{"critic":"2026-11-22T10:00:01Z","codex-ran":"2026-11-22T10:00:02Z","codex":"2026-11-22T10:00:03Z"},
	"exchanges":[{"n":1,"kind":"dialogue","text":"q","asked":"2026-11-22T10:00:04Z","return":"CODEX_REVIEW"}]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, StateFile), []byte(old), 0o600))

	s, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, Dialogue, s.State)
	assert.Equal(t, InReview, s.Exchanges[0].Return)
	assert.Equal(t, map[Kind]time.Time{Critic: at(1), ReviewerRan: at(2), ReviewApproved: at(3)}, s.Evidence)

	require.NoError(t, Save(dir, s))
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	require.NoError(t, err)
	for _, name := range []string{"CODEX", "codex"} {
		assert.NotContains(t, string(b), name)
	}
	assert.Contains(t, string(b), `"state": "DIALOGUE"`)
	assert.Contains(t, string(b), `"reviewer-ran": "2026-11-22T10:00:02Z"`)
	assert.Contains(t, string(b), `"review-approved": "2026-11-22T10:00:03Z"`)
	assert.Contains(t, string(b), `"return": "REVIEW"`)
}

// A result an older coordinator wrote names its state by the old name.
func TestReadLegacyResult(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, resultsDir), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, resultsDir, "1.json"), []byte(`{"id":"1","state":"CODEX_REVIEW","phase":"dispatched"}`), 0o600))
	r, ok, err := ReadResult(dir, "1")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, InReview, r.State)
}
