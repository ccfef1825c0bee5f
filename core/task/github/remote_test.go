package github

import (
	"context"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/partyhq/party/core/task"
	"github.com/stretchr/testify/require"
)

func TestParseRemote(t *testing.T) {
	for _, tc := range []struct {
		name, url, want string
	}{
		{"scp-like ssh", "git@github.com:acme/widgets.git", "acme/widgets"},
		{"scp-like without .git", "git@github.com:acme/widgets", "acme/widgets"},
		{"https with .git", "https://github.com/acme/widgets.git", "acme/widgets"},
		{"https without .git", "https://github.com/acme/widgets", "acme/widgets"},
		{"https with a trailing slash", "https://github.com/acme/widgets/", "acme/widgets"},
		{"https with a user", "https://bob@github.com/acme/widgets.git", "acme/widgets"},
		{"ssh URL with a port", "ssh://git@github.com:22/acme/widgets.git", "acme/widgets"},
		{"enterprise host", "git@ghe.example.com:team/tool.git", "team/tool"},
		{"dots and dashes", "https://github.com/my-org/my.repo_x.git", "my-org/my.repo_x"},
		{"surrounding whitespace", "  git@github.com:acme/widgets.git\n", "acme/widgets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRemote(tc.url)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	for _, bad := range []string{
		"", "widgets", "https://github.com/acme", "https://github.com/acme/widgets/tree/main",
		"git@github.com:acme", "git@github.com:acme/../x", "/srv/git/acme/widgets.git", "https://github.com/acme/wid gets",
	} {
		t.Run("refuses "+bad, func(t *testing.T) {
			got, err := ParseRemote(bad)
			assert.ErrorIs(t, err, task.ErrInvalid, "got %q", got)
		})
	}
}

func TestCheckRepo(t *testing.T) {
	require.NoError(t, CheckRepo("acme/widgets"))
	for _, bad := range []string{"acme", "acme/", "/widgets", "a/b/c", "../x", "a/..", "a/b?x=1", "a/{repo}",
		"-x/y", "my_org/y", "my.org/y", "x-/y", "a--b/y", "o/."} {
		assert.ErrorIs(t, CheckRepo(bad), task.ErrInvalid, bad)
	}
}

func TestRepoFromGit(t *testing.T) {
	git, err := exec.LookPath("git")
	require.NoError(t, err, "git is required")
	for _, url := range []string{"git@github.com:acme/widgets.git", "https://github.com/acme/widgets.git"} {
		dir := t.TempDir()
		for _, args := range [][]string{{"init", "-q", dir}, {"-C", dir, "remote", "add", "origin", url}} {
			out, err := exec.Command(git, args...).CombinedOutput()
			require.NoError(t, err, "%s", out)
		}
		repo, err := RepoFromGit(context.Background(), dir)
		require.NoError(t, err)
		assert.Equal(t, "acme/widgets", repo, url)
	}
	dir := t.TempDir()
	out, err := exec.Command(git, "init", "-q", dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	_, err = RepoFromGit(context.Background(), dir)
	assert.ErrorIs(t, err, task.ErrInvalid, "no origin remote")
}
