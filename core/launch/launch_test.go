package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteReadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "launch", "claude.json")
	s := Spec{Argv: []string{"/bin/echo", "hello", ";", "run-shell", `"touch /tmp/p"`, `a\;`, "#{x}", "{"},
		Env: []string{"PARTY_ROLE=claude", "PATH=/usr/bin;"}, Dir: "/w/#(touch p)"}
	require.NoError(t, Write(path, s))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	got, err := Read(path)
	require.NoError(t, err)
	assert.Equal(t, s, got)
	assert.Equal(t, []string{"/bin/party", "exec-spec", path}, Command("/bin/party", path))
}

func TestReadRefusesFilesOthersControl(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
	require.NoError(t, Write(path, Spec{Argv: []string{"/bin/true", "x"}}))

	link := filepath.Join(dir, "link.json")
	require.NoError(t, os.Symlink(path, link))
	_, err := Read(link)
	assert.ErrorIs(t, err, ErrSpec, "a symlink")

	require.NoError(t, os.Chmod(path, 0o620))
	_, err = Read(path)
	assert.ErrorIs(t, err, ErrSpec, "group-writable")
}

func TestWriteRefusesBadEnv(t *testing.T) {
	err := Write(filepath.Join(t.TempDir(), "a.json"), Spec{Argv: []string{"x", "y"}, Env: []string{"NOEQUALS"}})
	assert.ErrorIs(t, err, ErrSpec)
}

func TestResolve(t *testing.T) {
	bin := t.TempDir()
	prog := filepath.Join(bin, "agent")
	require.NoError(t, os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755))
	base := []string{"HOME=/h", "PATH=/nowhere", "SHELL=/bin/zsh"}

	p, argv, env, err := Spec{Argv: []string{"agent", "a b", ";"}, Env: []string{"PATH=" + bin, "X=1"}}.Resolve(base)
	require.NoError(t, err)
	assert.Equal(t, prog, p, "looked up on the spec's PATH")
	assert.Equal(t, []string{"agent", "a b", ";"}, argv)
	assert.Equal(t, []string{"HOME=/h", "PATH=" + bin, "SHELL=/bin/zsh", "X=1"}, env)

	p, argv, _, err = Spec{}.Resolve(base)
	require.NoError(t, err)
	assert.Equal(t, "/bin/zsh", p)
	assert.Equal(t, []string{"-zsh"}, argv, "a login shell, as tmux starts it")

	_, _, _, err = Spec{Argv: []string{"nope", "x"}}.Resolve(base)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// FuzzSpecRoundTrip: whatever words a pane command holds, the program gets
// exactly them, and tmux is handed none of them.
func FuzzSpecRoundTrip(f *testing.F) {
	f.Add("/bin/echo", "hello", `; run-shell "touch /tmp/p"`)
	f.Add("a b", `a\;`, ";")
	f.Add("#(touch p)", "{", "#{pane_id}")
	f.Add("'", `"`, "")
	f.Add("\xff\x9b", "a\xc3", "\U0001F389")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, a, b, c string) {
		if strings.ContainsRune(a+b+c, 0) {
			t.Skip("no argv holds a NUL byte")
		}
		path := filepath.Join(dir, "spec.json")
		want := Spec{Argv: []string{a, b, c}, Env: []string{"K=" + b}, Dir: c}
		require.NoError(t, Write(path, want))
		got, err := Read(path)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		assert.Equal(t, []string{"/bin/party", Subcommand, path}, Command("/bin/party", path))
	})
}
