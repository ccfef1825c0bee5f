package party

import (
	"testing"

	"github.com/partyhq/party/core/usage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRedactorOf(t *testing.T) {
	r, err := redactorOf([]string{`hunter\d`})
	require.NoError(t, err)
	assert.Equal(t, "pw [REDACTED], key [REDACTED]", r.Redact("pw hunter2, key AKIAABCDEFGHIJKLMNOP"), "the extra pattern and the default ones")

	_, err = redactorOf([]string{`(`})
	assert.ErrorIs(t, err, usage.Err, "a bad --redact")
}
