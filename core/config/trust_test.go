package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeepTrust(t *testing.T) {
	e := newEnv(t)
	store := TrustStoreFor(e.getenv)
	_, path := Paths(e.getenv, e.cwd)
	write := func(content string) func() error {
		return func() error { return os.WriteFile(path, []byte(content), 0o644) }
	}
	trusted := func() bool {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		ok, err := store.Trusted(path, b)
		require.NoError(t, err)
		return ok
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))

	require.NoError(t, store.KeepTrust(path, time.Now(), write(`{"a":1}`)))
	assert.True(t, trusted(), "a file the user's change creates is trusted")

	require.NoError(t, store.KeepTrust(path, time.Now(), write(`{"a":2}`)))
	assert.True(t, trusted(), "a trusted file stays trusted")

	require.NoError(t, os.WriteFile(path, []byte(`{"evil":1}`), 0o644))
	require.NoError(t, store.KeepTrust(path, time.Now(), write(`{"a":3}`)))
	assert.False(t, trusted(), "an untrusted file stays untrusted")
}

func TestTrustFiles(t *testing.T) {
	e := newEnv(t)
	store := TrustStoreFor(e.getenv)
	cfg := e.write(t, true, `{}`)
	missing := filepath.Join(e.cwd, ".party", "agents.json")

	_, err := store.TrustFiles([]string{missing}, false, time.Now())
	assert.ErrorIs(t, err, ErrNothingToTrust)

	got, err := store.TrustFiles([]string{cfg, missing}, false, time.Now())
	require.NoError(t, err)
	require.Len(t, got, 1, "a missing file is skipped")
	assert.Equal(t, TrustResult{File: cfg, Trusted: true, SHA256: Hash([]byte(`{}`))}, got[0])
	ok, err := store.Trusted(cfg, []byte(`{}`))
	require.NoError(t, err)
	assert.True(t, ok)

	got, err = store.TrustFiles([]string{cfg, missing}, true, time.Now())
	require.NoError(t, err)
	assert.Equal(t, []TrustResult{{File: cfg}, {File: missing}}, got, "revoke names every file")
	ok, err = store.Trusted(cfg, []byte(`{}`))
	require.NoError(t, err)
	assert.False(t, ok)
}

func TestSetIn(t *testing.T) {
	e := newEnv(t)
	path, err := SetIn(e.getenv, e.cwd, false, "defaults.timeout", "2m", time.Now())
	require.NoError(t, err)
	_, local := Paths(e.getenv, e.cwd)
	assert.Equal(t, local, path)
	c, _, err := Load(e.getenv, e.cwd)
	require.NoError(t, err)
	assert.True(t, c.LocalTrusted, "the file set made is trusted")
	assert.Equal(t, 2*time.Minute, c.Timeout)

	path, err = SetIn(e.getenv, e.cwd, true, "defaults.timeout", "3m", time.Now())
	require.NoError(t, err)
	global, _ := Paths(e.getenv, e.cwd)
	assert.Equal(t, global, path)

	_, err = SetIn(e.getenv, e.cwd, true, "no.such.key", "1", time.Now())
	assert.ErrorIs(t, err, ErrUnknownKey)
}

func TestTrustResultAsPrinted(t *testing.T) {
	assert.Equal(t, "trusted /r/.party/config.json (sha256 ab12)", TrustResult{File: "/r/.party/config.json", Trusted: true, SHA256: "ab12"}.String())
	assert.Equal(t, "no longer trusted: /r/.party/config.json", TrustResult{File: "/r/.party/config.json"}.String())
}
