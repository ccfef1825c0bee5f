package hook

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/config"
)

func TestInstallClaude(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	dir := t.TempDir()
	path := filepath.Join(dir, ".claude", "settings.json")

	res, err := InstallClaude(path, partyCmd, true, now)
	require.NoError(t, err)
	assert.Equal(t, Installed{Path: path, Changed: true, DryRun: true, Settings: []byte(partyOnly)}, res)
	assert.NoFileExists(t, path, "a dry run writes nothing")

	res, err = InstallClaude(path, partyCmd, false, now)
	require.NoError(t, err)
	assert.Equal(t, Installed{Path: path, Changed: true}, res, "a new file has no backup")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, partyOnly, string(b))

	res, err = InstallClaude(path, partyCmd, false, now)
	require.NoError(t, err)
	assert.Equal(t, Installed{Path: path}, res, "installing again changes nothing")

	// A file of the user's, behind a symlink, twice in the same second.
	real := filepath.Join(dir, "real.json")
	require.NoError(t, os.WriteFile(real, []byte(`{"model":"opus"}`), 0o640))
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Symlink(real, path))
	res, err = InstallClaude(path, partyCmd, false, now)
	require.NoError(t, err)
	assert.Equal(t, path+".bak-20260102T030405Z", res.Backup)
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode()&os.ModeSymlink, "the symlink stays")
	st, err := os.Stat(real)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), st.Mode().Perm(), "the mode is kept")
	b, err = os.ReadFile(res.Backup)
	require.NoError(t, err)
	assert.Equal(t, `{"model":"opus"}`, string(b))

	require.NoError(t, os.WriteFile(real, []byte(`{"model":"sonnet"}`), 0o640))
	res, err = InstallClaude(path, partyCmd, false, now)
	require.NoError(t, err)
	assert.Equal(t, path+".bak-20260102T030405Z.1", res.Backup, "an older backup is never overwritten")

	require.NoError(t, os.WriteFile(real, []byte(`{`), 0o640))
	_, err = InstallClaude(path, partyCmd, false, now)
	assert.ErrorIs(t, err, config.ErrInvalid)
}
