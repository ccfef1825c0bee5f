package worktree

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// SetupError is a worktree.setup command that failed: the command and the
// last lines it wrote.
type SetupError struct {
	Role    string
	Command []string
	Tail    string
	Err     error
}

func (e *SetupError) Error() string {
	return fmt.Sprintf("%s's worktree setup %q failed: %v\n%s", e.Role, strings.Join(e.Command, " "), e.Err, e.Tail)
}

func (e *SetupError) Unwrap() error { return ErrSetup }

// setupTail is how many of a failed setup's last lines are shown.
const setupTail = 20

// Setup readies t's new worktree for its agent: it copies the files of
// the main worktree that globs match (untracked ones, such as .env; a
// file the tree already has is left alone), then runs command (argv, in
// the tree, with env added) when there is one.
func (r Repo) Setup(ctx context.Context, t Tree, globs []string, command []string, env []string) error {
	for _, g := range globs {
		if err := r.copyGlob(g, t.Path); err != nil {
			return fmt.Errorf("worktree.copy %q: %w", g, err)
		}
	}
	if len(command) == 0 {
		return nil
	}
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Dir, cmd.Env = t.Path, append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return &SetupError{Role: t.Role, Command: command, Tail: lastLines(out.String(), setupTail), Err: err}
	}
	return nil
}

// copyGlob copies the regular files of the main worktree that glob
// matches into the tree at dst, keeping their paths and modes. The copy
// stays inside dst (os.Root): a symbolic link in the tree cannot lead it
// out.
func (r Repo) copyGlob(glob, dst string) error {
	if filepath.IsAbs(glob) {
		return fmt.Errorf("must be relative to the repository")
	}
	matches, err := filepath.Glob(filepath.Join(r.Root, glob))
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }() // read-only use: nothing to lose on close
	for _, src := range matches {
		rel, err := filepath.Rel(r.Root, src)
		if err != nil || rel == ".git" || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || strings.HasPrefix(rel, ".git"+string(filepath.Separator)) {
			return fmt.Errorf("%s is outside the repository's files", src)
		}
		st, err := os.Lstat(src)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if _, err := root.Lstat(rel); err == nil {
			continue
		}
		if err := copyFile(root, src, rel, st.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// copyFile copies the file src to rel in root.
func copyFile(root *os.Root, src, rel string, perm os.FileMode) error {
	if err := root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
