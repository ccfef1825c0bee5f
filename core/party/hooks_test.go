package party

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInstallHooksWhere(t *testing.T) {
	wd, home := t.TempDir(), t.TempDir()
	env, _, _ := testEnv(t, wd)
	env.Getenv = func(k string) string { return map[string]string{"HOME": home}[k] }
	res, err := InstallHooks(env, false, true)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(wd, ".claude", "settings.json"), res.Path, "the project's by default")
	assert.NoFileExists(t, res.Path, "a dry run writes nothing")
	res, err = InstallHooks(env, true, false)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(home, ".claude", "settings.json"), res.Path, "--user: $HOME's")
	assert.FileExists(t, res.Path)

	env.Getenv = func(string) string { return "" }
	_, err = InstallHooks(env, true, false)
	assert.ErrorIs(t, err, ErrUsage, "--user without HOME")
}
