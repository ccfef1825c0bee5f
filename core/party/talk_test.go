package party

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/mux"
)

func TestTalkRefusesAnEmptyMessageFirst(t *testing.T) {
	env, stderr, calls := testEnv(t, "/nonexistent")
	results, err := Talk(t.Context(), env, TalkOptions{Role: "codex", Text: " \n\t", Wait: true})
	assert.ErrorIs(t, err, deliver.ErrEmpty)
	assert.Nil(t, results)
	assert.Zero(t, *calls, "no tmux call")
	assert.Empty(t, stderr.String(), "no configuration loaded, no warning")
}

func TestRoles(t *testing.T) {
	assert.Equal(t, []string{"codex", "claude"}, roleNames([]mux.Pane{{ID: "%1", Role: "codex"}, {ID: "%2", Role: "claude"}}))
	assert.Empty(t, roleNames(nil))
}
