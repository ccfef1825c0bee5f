package review

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInstructions(t *testing.T) {
	claude, ok := Instructions("claude")
	require.True(t, ok)
	assert.Contains(t, claude, "You are the implementer.")
	assert.Contains(t, claude, "`party review request`")

	codex, ok := Instructions("codex")
	require.True(t, ok)
	assert.Contains(t, codex, "You are the reviewer.")
	assert.NotContains(t, codex, "{{")
	m := regexp.MustCompile("(?s)```json\n(.*?)\n```").FindStringSubmatch(codex)
	require.NotNil(t, m, "the findings schema is in a json block")
	assert.True(t, json.Valid([]byte(m[1])), "the schema the reviewer is given is JSON")
	assert.Equal(t, FindingsSchema, m[1])

	for _, bad := range []string{"gemini", "", "../claude", "instructions/claude"} {
		_, ok := Instructions(bad)
		assert.False(t, ok, bad)
	}
}
