package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Errors of worktree; core/party maps each to its code and exit status.
var (
	// ErrNotRepo is a folder that is not in a git repository.
	ErrNotRepo = errors.New("not a git repository")
	// ErrBare is a bare repository: it has no tree to branch from.
	ErrBare = errors.New("bare repository")
	// ErrSubmodules is a repository with submodules, which git worktree
	// does not check out.
	ErrSubmodules = errors.New("repository has submodules")
	// ErrNoBase is a base that names no commit.
	ErrNoBase = errors.New("base not found")
	// ErrTaken is a branch or a folder a worktree would take that
	// something else already has.
	ErrTaken = errors.New("already taken")
	// ErrDirty is uncommitted work where it would be lost or merged
	// half-done.
	ErrDirty = errors.New("uncommitted changes")
	// ErrUnmerged is a branch with commits its base does not have.
	ErrUnmerged = errors.New("unmerged commits")
	// ErrConflict is a merge that conflicts (*ConflictError).
	ErrConflict = errors.New("merge conflict")
	// ErrSetup is a worktree.setup command that failed (*SetupError).
	ErrSetup = errors.New("worktree setup failed")
	// ErrGitMissing is git not found on PATH.
	ErrGitMissing = errors.New("git is not installed")
)

// GitError is a git command that failed: its arguments, exit status and
// what it wrote on stderr.
type GitError struct {
	Args     []string
	ExitCode int
	Stderr   string
	Err      error
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

func (e *GitError) Unwrap() error { return e.Err }

// ConflictError is a merge of Branch into Into that conflicts in Files;
// the merge was aborted.
type ConflictError struct {
	Branch, Into string
	Files        []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("merging %s into %s conflicts in %s; the merge was aborted, %s is unchanged",
		e.Branch, e.Into, strings.Join(e.Files, ", "), e.Into)
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// git runs git in dir with args and returns its stdout. env adds to the
// environment (KEY=VALUE).
func git(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	if len(env) > 0 {
		cmd.Env = append(cmd.Environ(), env...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("git %s: %w (party's worktrees need git 2.38 or later on PATH)", args[0], ErrGitMissing)
		}
		ge := &GitError{Args: args, Stderr: errb.String(), Err: err, ExitCode: -1}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ge.ExitCode = ee.ExitCode()
		}
		return out.String(), ge
	}
	return out.String(), nil
}

// exitCode is the exit status of a *GitError, -1 for any other error.
func exitCode(err error) int {
	var ge *GitError
	if errors.As(err, &ge) {
		return ge.ExitCode
	}
	return -1
}

// lines splits git's output into its non-empty lines.
func lines(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == '\n' })
}
