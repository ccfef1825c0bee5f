package party

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/session"
)

func TestRedactorOf(t *testing.T) {
	r, err := redactorOf([]string{`hunter\d`})
	require.NoError(t, err)
	assert.Equal(t, "pw [REDACTED], key [REDACTED]", r.Redact("pw hunter2, key AKIAABCDEFGHIJKLMNOP"), "the extra pattern and the default ones")

	_, err = redactorOf([]string{`(`})
	assert.ErrorIs(t, err, session.ErrUsage, "a bad --redact")
}
