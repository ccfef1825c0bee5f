package worktree

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Changes are what an agent changed in its worktree against its base:
// committed and uncommitted, new files included (ignored ones not).
type Changes struct {
	Role   string `json:"role"`
	Path   string `json:"path"`
	Branch string `json:"branch"`
	Base   string `json:"base"`
	// MergeBase is the commit the changes are counted from: where the
	// branch left its base.
	MergeBase string       `json:"merge_base"`
	Files     []FileChange `json:"files"`
	Added     int          `json:"added"`
	Removed   int          `json:"removed"`
	// Ahead counts the branch's commits that the base does not have;
	// Dirty says the tree holds uncommitted work.
	Ahead int  `json:"commits_ahead"`
	Dirty bool `json:"dirty"`
}

// FileChange is one changed file: lines added and removed (none for a
// binary file).
type FileChange struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Binary  bool   `json:"binary,omitempty"`
}

// Changes says what t's agent changed against its base.
func (r Repo) Changes(ctx context.Context, t Tree) (Changes, error) {
	c := Changes{Role: t.Role, Path: t.Path, Branch: t.Branch, Base: t.Base, Files: []FileChange{}}
	if err := onBranch(ctx, t); err != nil {
		return c, err
	}
	cmd, done, err := r.diff(ctx, t, &c, "--numstat", "-z", "--no-renames")
	if err != nil {
		return c, err
	}
	defer done()
	out, err := cmd.Output()
	if err != nil {
		return c, &GitError{Args: cmd.Args[3:], Err: err, ExitCode: cmd.ProcessState.ExitCode(), Stderr: stderrOf(err)}
	}
	for _, rec := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		added, rest, ok1 := strings.Cut(rec, "\t")
		removed, path, ok2 := strings.Cut(rest, "\t")
		if !ok1 || !ok2 {
			continue
		}
		f := FileChange{Path: path}
		if added == "-" {
			f.Binary = true
		} else {
			f.Added, _ = strconv.Atoi(added)
			f.Removed, _ = strconv.Atoi(removed)
		}
		c.Added += f.Added
		c.Removed += f.Removed
		c.Files = append(c.Files, f)
	}
	if c.Ahead, err = count(ctx, t.Path, c.MergeBase+"..HEAD"); err != nil {
		return c, err
	}
	c.Dirty, err = dirty(ctx, t.Path, true)
	return c, err
}

// ShowCmd is the git command that shows t's changes against its base
// (git diff, or git diff --stat with stat), for the caller to run with
// its own stdout: on a terminal git pages with the user's pager and
// colors. done removes what the command needs once it has run.
func (r Repo) ShowCmd(ctx context.Context, t Tree, stat bool) (cmd *exec.Cmd, done func(), err error) {
	if err := onBranch(ctx, t); err != nil {
		return nil, nil, err
	}
	args := []string{}
	if stat {
		args = append(args, "--stat")
	}
	return r.diff(ctx, t, &Changes{}, args...)
}

// diff builds git diff of t's tree against the merge base with its base
// (set in c.MergeBase). New files show as added without touching the
// agent's index: git adds everything to a copy of it.
func (r Repo) diff(ctx context.Context, t Tree, c *Changes, args ...string) (*exec.Cmd, func(), error) {
	mb, err := git(ctx, t.Path, nil, "merge-base", r.base(ctx, t), "HEAD")
	if err != nil {
		return nil, nil, err
	}
	c.MergeBase = strings.TrimSpace(mb)
	index, err := git(ctx, t.Path, nil, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return nil, nil, err
	}
	tmp, err := os.CreateTemp("", "party-index-*")
	if err != nil {
		return nil, nil, err
	}
	done := func() { os.Remove(tmp.Name()) }
	b, err := os.ReadFile(strings.TrimSpace(index))
	if err == nil {
		_, err = tmp.Write(b)
	} else if os.IsNotExist(err) {
		err = nil // a tree without an index yet: git makes one
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	env := []string{"GIT_INDEX_FILE=" + tmp.Name()}
	if err == nil {
		_, err = git(ctx, t.Path, env, "add", "--all", "--", ".")
	}
	if err != nil {
		done()
		return nil, nil, err
	}
	cmd := exec.CommandContext(ctx, "git", append(append([]string{"-C", t.Path, "diff", "--cached"}, args...), c.MergeBase, "--")...)
	cmd.Env = append(cmd.Environ(), env...)
	cmd.Dir = filepath.Clean(t.Path)
	return cmd, done, nil
}

// stderrOf is what a failed command wrote on stderr, when Output kept it.
func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
