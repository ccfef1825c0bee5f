package github

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"strings"

	"github.com/partyhq/party/core/task"

	"github.com/partyhq/party/core/ghrepo"
)

// CheckRepo validates a repository written as owner/name, by GitHub's
// rules (ghrepo.Check, which pm.repo is checked with too).
func CheckRepo(repo string) error {
	if err := ghrepo.Check(repo); err != nil {
		return fmt.Errorf("repository %q: %v: %w", repo, err, task.ErrInvalid)
	}
	return nil
}

// ParseRemote reads owner/name from a git remote's URL, in the forms git
// and GitHub use:
//
//	git@github.com:owner/name.git          scp-like ssh
//	ssh://git@github.com[:22]/owner/name.git
//	https://github.com/owner/name[.git][/] (also http, git, user@ in the host)
//
// The host is not checked (a GitHub Enterprise remote names its own);
// the path must be exactly owner/name, with or without .git.
func ParseRemote(remote string) (string, error) {
	s := strings.TrimSpace(remote)
	var path string
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return "", fmt.Errorf("remote %q: not a URL git knows: %w", remote, task.ErrInvalid)
		}
		path = u.Path
	} else {
		// scp-like: [user@]host:path, where host holds no slash.
		host, p, ok := strings.Cut(s, ":")
		if !ok || host == "" || strings.Contains(host, "/") {
			return "", fmt.Errorf("remote %q: neither a URL nor user@host:owner/name: %w", remote, task.ErrInvalid)
		}
		path = p
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	if err := CheckRepo(path); err != nil {
		return "", fmt.Errorf("remote %q: the path is not owner/name: %w", remote, task.ErrInvalid)
	}
	return path, nil
}

// RepoFromGit returns owner/name from the origin remote of the git
// repository at dir.
func RepoFromGit(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "remote", "get-url", "origin")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("the GitHub repository: git is not installed, and no repo was given (pm.repo, --repo): %w", task.ErrInvalid)
		}
		return "", fmt.Errorf("the GitHub repository: no origin remote in %s (%s); set pm.repo or pass --repo owner/name: %w",
			dir, firstLine(errb.String()), task.ErrInvalid)
	}
	return ParseRemote(strings.TrimSpace(out.String()))
}
