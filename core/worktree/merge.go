package worktree

import (
	"context"
	"fmt"
	"strings"

	"github.com/partyhq/party/core/usage"
)

// MergeOptions say how Merge merges.
type MergeOptions struct {
	// Into is the branch merged into (empty: the tree's base, which must be
	// a branch); it must be checked out in the main worktree.
	Into string
	// Squash makes the branch's work one commit.
	Squash bool
	// Commit, when set, commits the tree's uncommitted work with this
	// message first.
	Commit string
}

// Merged is what Merge did.
type Merged struct {
	Role   string `json:"role"`
	Branch string `json:"branch"`
	Into   string `json:"into"`
	// Commits counts the branch's commits merged (0: nothing to merge);
	// Head is Into's commit after the merge.
	Commits int    `json:"commits"`
	Squash  bool   `json:"squash,omitempty"`
	Head    string `json:"head"`
}

// Merge merges t's branch into its base branch in the main worktree. It
// refuses a main worktree on another branch or with uncommitted changes,
// and a tree with uncommitted work unless opts.Commit commits it. A merge
// that conflicts is aborted, nothing half-merged left: *ConflictError
// names the files. It never pushes.
func (r Repo) Merge(ctx context.Context, t Tree, opts MergeOptions) (Merged, error) {
	m := Merged{Role: t.Role, Branch: t.Branch, Into: opts.Into, Squash: opts.Squash}
	if m.Into == "" {
		m.Into = t.Base
		if ok, err := r.IsBranch(ctx, m.Into); err != nil {
			return m, err
		} else if !ok {
			return m, fmt.Errorf("%w: %s's base %q is not a branch: say which with --into BRANCH", usage.Err, t.Role, t.Base)
		}
	}
	head, _, err := r.Head(ctx)
	if err != nil {
		return m, err
	}
	if head != m.Into {
		return m, fmt.Errorf("the main worktree %s is on %s, not %s (check %s out there first): %w",
			r.Root, orDetached(head), m.Into, m.Into, ErrTaken)
	}
	if d, err := dirty(ctx, r.Root, false); err != nil {
		return m, err
	} else if d {
		return m, fmt.Errorf("the main worktree %s has uncommitted changes (commit or stash them first): %w", r.Root, ErrDirty)
	}
	if err := onBranch(ctx, t); err != nil {
		return m, err
	}
	if opts.Commit != "" {
		if err := commitAll(ctx, t.Path, opts.Commit); err != nil {
			return m, err
		}
	}
	if d, err := dirty(ctx, t.Path, true); err != nil {
		return m, err
	} else if d {
		return m, fmt.Errorf("%s's worktree %s has uncommitted changes (party merge %s --commit -m MSG commits them first): %w",
			t.Role, t.Path, t.Role, ErrDirty)
	}
	if m.Commits, err = count(ctx, r.Root, "HEAD..refs/heads/"+t.Branch); err == nil && m.Commits > 0 {
		var same bool
		if same, err = r.mergesNothing(ctx, "HEAD", "refs/heads/"+t.Branch); same {
			m.Commits = 0 // its work is in already: a squashed merge
		}
	}
	if err != nil || m.Commits == 0 {
		m.Head, _ = revParse(ctx, r.Root, "HEAD")
		return m, err
	}
	args := []string{"merge", "--no-edit", "--quiet", "refs/heads/" + t.Branch}
	if opts.Squash {
		args = []string{"merge", "--squash", "--quiet", "refs/heads/" + t.Branch}
	}
	_, err = git(ctx, r.Root, nil, args...)
	if err == nil && opts.Squash {
		_, err = git(ctx, r.Root, nil, "commit", "--quiet", "-m", fmt.Sprintf("Squashed %s (%d commits)", t.Branch, m.Commits))
	}
	if err != nil {
		return m, r.abort(ctx, t, m.Into, err)
	}
	m.Head, err = revParse(ctx, r.Root, "HEAD")
	return m, err
}

// abort undoes a merge that failed with cause: the files in conflict are
// named, and the main worktree is as it was.
func (r Repo) abort(ctx context.Context, t Tree, into string, cause error) error {
	out, err := git(ctx, r.Root, nil, "diff", "--name-only", "--diff-filter=U", "-z")
	if err != nil {
		return fmt.Errorf("%w (and listing its conflicts: %w)", cause, err)
	}
	files := strings.FieldsFunc(out, func(r rune) bool { return r == 0 })
	if _, err := git(ctx, r.Root, nil, "reset", "--merge"); err != nil {
		return fmt.Errorf("%w (and aborting it: %w)", cause, err)
	}
	if len(files) == 0 {
		return cause // git refused before merging anything (a file in the way)
	}
	return &ConflictError{Branch: t.Branch, Into: into, Files: files}
}

// commitAll commits everything in the tree at dir, new files included,
// with msg; a clean tree commits nothing.
func commitAll(ctx context.Context, dir, msg string) error {
	if _, err := git(ctx, dir, nil, "add", "--all", "--", "."); err != nil {
		return err
	}
	if _, err := git(ctx, dir, nil, "diff", "--cached", "--quiet"); err == nil {
		return nil
	}
	_, err := git(ctx, dir, nil, "commit", "--quiet", "-m", msg)
	return err
}

func revParse(ctx context.Context, dir, rev string) (string, error) {
	out, err := git(ctx, dir, nil, "rev-parse", "--verify", rev)
	return strings.TrimSpace(out), err
}

func orDetached(branch string) string {
	if branch == "" {
		return "a detached HEAD"
	}
	return branch
}
