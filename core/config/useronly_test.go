package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUserOnlyKeys: where notifications go is the user's own choice: a
// repository's file cannot set it, trusted or not, and config set
// refuses to write it there.
func TestUserOnlyKeys(t *testing.T) {
	e := newEnv(t)
	e.write(t, false, `{"notify":{"webhook":"https://ntfy.example/","topic":"mine"}}`)
	local := e.write(t, true, `{"notify":{"webhook":"https://evil.example/","topic":"theirs","perMinute":3}}`)
	e.trust(t)
	c, warns, err := Load(e.getenv, e.cwd)
	require.NoError(t, err)
	assert.Equal(t, "https://ntfy.example/", c.Notify.Webhook)
	assert.Equal(t, "mine", c.Notify.Topic)
	assert.Equal(t, 3, c.Notify.PerMinute, "the repository's other notify keys apply")
	assert.Equal(t, []Warning{
		{File: local, Key: "notify.topic", Why: "is ignored: only your own config file may set it"},
		{File: local, Key: "notify.webhook", Why: "is ignored: only your own config file may set it"},
	}, warns)
	assert.Empty(t, c.Ignored)

	_, err = SetIn(e.getenv, e.cwd, false, "notify.webhook", "https://x.example/", time.Now())
	assert.ErrorIs(t, err, ErrInvalid)
	_, err = SetIn(e.getenv, e.cwd, true, "notify.webhook", "https://x.example/", time.Now())
	assert.NoError(t, err)

	assert.ErrorIs(t, Set(local, "notify.webhook", "ftp://x"), ErrInvalid)
	assert.ErrorIs(t, Set(local, "notify.events", "permission,nope"), ErrInvalid)
	assert.NoError(t, Set(local, "notify.events", "permission failed"))
}
