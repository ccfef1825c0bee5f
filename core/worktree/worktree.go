package worktree

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/partyhq/party/core/usage"
)

// Repo is a git repository with a working tree: Root is the top of its
// main worktree.
type Repo struct {
	Root string
}

// Tree is one role's worktree, as a team records it.
type Tree struct {
	Role   string `json:"role"`
	Path   string `json:"path"`
	Branch string `json:"branch"`
	// Base is what the tree was made from, as given (a branch, a tag, a
	// commit), BaseCommit the commit it named then. Changes and merges are
	// counted against Base while it names a commit.
	Base       string `json:"base"`
	BaseCommit string `json:"base_commit"`
}

// Open is the repository of the folder dir. A folder outside any
// repository is ErrNotRepo, a bare repository ErrBare, one with
// submodules (a .gitmodules file) ErrSubmodules: git worktree add checks
// none of their trees out.
func Open(ctx context.Context, dir string) (Repo, error) {
	out, err := git(ctx, dir, nil, "rev-parse", "--is-bare-repository", "--is-inside-work-tree")
	if err != nil {
		if exitCode(err) == 128 {
			return Repo{}, fmt.Errorf("%s: %w", dir, ErrNotRepo)
		}
		return Repo{}, err
	}
	switch f := lines(out); {
	case len(f) == 2 && f[0] == "true":
		return Repo{}, fmt.Errorf("%s: %w: a worktree needs a repository with a working tree", dir, ErrBare)
	case len(f) != 2 || f[1] != "true":
		return Repo{}, fmt.Errorf("%s is not in a working tree: %w", dir, ErrNotRepo)
	}
	trees, err := list(ctx, dir)
	if err != nil {
		return Repo{}, err
	}
	if len(trees) == 0 {
		return Repo{}, fmt.Errorf("%s: git lists no worktree: %w", dir, ErrNotRepo)
	}
	r := Repo{Root: trees[0].path}
	if _, err := os.Lstat(filepath.Join(r.Root, ".gitmodules")); err == nil {
		return Repo{}, fmt.Errorf("%s: %w: git worktree add would leave them empty in each agent's tree", r.Root, ErrSubmodules)
	}
	return r, nil
}

// Dir is where party keeps worktrees: $XDG_DATA_HOME/party/worktrees,
// else ~/.local/share/party/worktrees, its symbolic links resolved.
func Dir(getenv func(string) string) (string, error) {
	dir := ""
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		dir = filepath.Join(d, "party", "worktrees")
	} else if home := getenv("HOME"); home != "" {
		dir = filepath.Join(home, ".local", "share", "party", "worktrees")
	} else {
		return "", errors.New("worktree dir: neither XDG_DATA_HOME nor HOME is set")
	}
	return realPath(dir), nil
}

// realPath is dir with the symbolic links of its existing part resolved,
// as git records a worktree's folder.
func realPath(dir string) string {
	rest := ""
	for d := dir; ; d = filepath.Dir(d) {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(real, rest)
		}
		if filepath.Dir(d) == d {
			return dir
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
}

// Path is the folder of a role's worktree of the repository: under dir
// (Dir), a folder per repository (its name and a hash of its path, so
// that two checkouts of one project never share one), then the session
// and the role.
func (r Repo) Path(dir, session, role string) string {
	h := sha256.Sum256([]byte(r.Root))
	return filepath.Join(dir, filepath.Base(r.Root)+"-"+hex.EncodeToString(h[:4]), session, role)
}

// Branch is the branch of a role's worktree: party/<session>/<role>.
func Branch(session, role string) string { return "party/" + session + "/" + role }

// Resolve is the commit that ref names, or ErrNoBase.
func (r Repo) Resolve(ctx context.Context, ref string) (string, error) {
	if ref == "" || strings.HasPrefix(ref, "-") {
		return "", fmt.Errorf("%w: base %q is not a commit, branch or tag", usage.Err, ref)
	}
	out, err := git(ctx, r.Root, nil, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		if exitCode(err) == 1 || exitCode(err) == 128 {
			return "", fmt.Errorf("base %q: %w in %s", ref, ErrNoBase, r.Root)
		}
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// Head is the branch checked out in the main worktree ("" when its HEAD
// is detached) and its commit ("" in a repository without one).
func (r Repo) Head(ctx context.Context) (branch, commit string, err error) {
	out, err := git(ctx, r.Root, nil, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil && exitCode(err) != 1 {
		return "", "", err
	}
	branch = strings.TrimSpace(out)
	out, err = git(ctx, r.Root, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil && exitCode(err) != 1 {
		return "", "", err
	}
	return branch, strings.TrimSpace(out), nil
}

// IsBranch says whether name is a local branch.
func (r Repo) IsBranch(ctx context.Context, name string) (bool, error) {
	_, err := git(ctx, r.Root, nil, "show-ref", "--verify", "--quiet", "refs/heads/"+name)
	switch {
	case err == nil:
		return true, nil
	case exitCode(err) == 1:
		return false, nil
	}
	return false, err
}

// CheckBranch checks that name can be a branch.
func (r Repo) CheckBranch(ctx context.Context, name string) error {
	if _, err := git(ctx, r.Root, nil, "check-ref-format", "--branch", name); err != nil {
		return fmt.Errorf("%w: %q cannot be a git branch name (a role or session with '..', '.lock' or the like)", usage.Err, name)
	}
	return nil
}

// Made says what Create made: the worktree, and its branch too (a
// branch that was there, the team's, is not Create's to take away).
type Made struct{ Tree, Branch bool }

// Create makes t's worktree at t.Path on a new branch t.Branch from
// t.BaseCommit, its files not yet checked out (Checkout). A worktree
// already there on that branch is this team's from an earlier start and
// is kept (nothing made); when ours, a branch of that name is the team's
// too and is checked out again, also where git still records a tree
// whose folder was removed by hand. Anything else in the way is ErrTaken.
func (r Repo) Create(ctx context.Context, t Tree, ours bool) (Made, error) {
	if err := r.CheckBranch(ctx, t.Branch); err != nil {
		return Made{}, err
	}
	trees, err := list(ctx, r.Root)
	if err != nil {
		return Made{}, err
	}
	_, statErr := os.Lstat(t.Path)
	gone := errors.Is(statErr, fs.ErrNotExist)
	force := false // the tree git records at t.Path has no folder any more
	for _, w := range trees {
		switch {
		case w.path == t.Path && w.branch == t.Branch && !gone:
			return Made{}, nil
		case w.path == t.Path && w.branch == t.Branch && ours:
			force = true
		case w.path == t.Path:
			return Made{}, fmt.Errorf("worktree %s is there on %s, not %s: %w", t.Path, cmp.Or(w.branch, "a detached HEAD"), t.Branch, ErrTaken)
		case w.branch == t.Branch:
			return Made{}, fmt.Errorf("branch %s is checked out in %s: %w", t.Branch, w.path, ErrTaken)
		}
	}
	if !gone {
		return Made{}, fmt.Errorf("folder %s is already there and is not this team's worktree: %w", t.Path, ErrTaken)
	}
	exists, err := r.IsBranch(ctx, t.Branch)
	if err != nil {
		return Made{}, err
	}
	// The files come with Checkout: one git worktree add at a time
	// (concurrent ones read each other's half-made records), the slow
	// part side by side.
	args := []string{"worktree", "add", "--quiet", "--no-checkout", "-b", t.Branch, t.Path, t.BaseCommit}
	if exists {
		if !ours {
			return Made{}, fmt.Errorf("branch %s exists and is not this team's (git branch -D %s, or another --session): %w", t.Branch, t.Branch, ErrTaken)
		}
		args = []string{"worktree", "add", "--quiet", "--no-checkout", t.Path, t.Branch}
		if force {
			// git's own safeguard against a path it records without its
			// folder, for this tree only: never a prune of every tree.
			args = []string{"worktree", "add", "--quiet", "--no-checkout", "--force", t.Path, t.Branch}
		}
	}
	if err := os.MkdirAll(filepath.Dir(t.Path), 0o755); err != nil {
		return Made{}, err
	}
	if _, err := git(ctx, r.Root, nil, args...); err != nil {
		if !exists {
			if made, _ := r.IsBranch(ctx, t.Branch); made {
				_, _ = git(ctx, r.Root, nil, "branch", "-D", "--quiet", t.Branch)
			}
		}
		return Made{}, err
	}
	return Made{Tree: true, Branch: !exists}, nil
}

// Undo takes away what Create made of t: the worktree, and the branch
// only when Create made it.
func (r Repo) Undo(ctx context.Context, t Tree, m Made) error {
	if m.Branch {
		return r.Remove(ctx, t, true)
	}
	if !m.Tree {
		return nil
	}
	_, err := git(ctx, r.Root, nil, "worktree", "remove", "--force", "--force", t.Path)
	return err
}

// Checkout fills the tree Create made with its branch's files (git reset
// --hard: git's post-checkout hook does not run; worktree.setup is the
// place for what it would do). Trees of one repository may be checked
// out at once.
func (r Repo) Checkout(ctx context.Context, t Tree) error {
	_, err := git(ctx, t.Path, nil, "reset", "--hard", "--quiet")
	return err
}

// Remove takes t's worktree and branch away. Uncommitted work in it
// (ErrDirty) or commits that its base does not have (ErrUnmerged) are
// refused unless force.
func (r Repo) Remove(ctx context.Context, t Tree, force bool) error {
	_, statErr := os.Stat(t.Path)
	live := statErr == nil
	if !force {
		if live {
			if err := onBranch(ctx, t); err != nil {
				return err
			}
			dirty, err := dirty(ctx, t.Path, true)
			if err != nil {
				return err
			}
			if dirty {
				return fmt.Errorf("%s's worktree %s has uncommitted changes (commit and merge them, or --force to drop them): %w", t.Role, t.Path, ErrDirty)
			}
		}
		ahead, err := r.unmerged(ctx, t)
		if err != nil {
			return err
		}
		if ahead > 0 {
			return fmt.Errorf("%s has %d commit(s) that %s does not (party merge %s, or --force to drop them): %w", t.Branch, ahead, t.Base, t.Role, ErrUnmerged)
		}
	}
	if live {
		args := []string{"worktree", "remove", t.Path}
		if force {
			args = []string{"worktree", "remove", "--force", "--force", t.Path}
		}
		if _, err := git(ctx, r.Root, nil, args...); err != nil {
			return err
		}
	} else if _, err := git(ctx, r.Root, nil, "worktree", "prune"); err != nil {
		return err
	}
	if ok, err := r.IsBranch(ctx, t.Branch); err != nil || !ok {
		return err
	}
	_, err := git(ctx, r.Root, nil, "branch", "-D", "--quiet", t.Branch)
	return err
}

// unmerged counts the commits of t's branch that its base does not have,
// none when merging them would change nothing (a squashed merge).
func (r Repo) unmerged(ctx context.Context, t Tree) (int, error) {
	ok, err := r.IsBranch(ctx, t.Branch)
	if err != nil || !ok {
		return 0, err
	}
	base := r.base(ctx, t)
	n, err := count(ctx, r.Root, base+"..refs/heads/"+t.Branch)
	if err != nil || n == 0 {
		return n, err
	}
	if same, err := r.mergesNothing(ctx, base, "refs/heads/"+t.Branch); err != nil || same {
		return 0, err
	}
	return n, nil
}

// mergesNothing says whether merging branch into base would leave base's
// files as they are: its work is in base already, squashed or picked.
func (r Repo) mergesNothing(ctx context.Context, base, branch string) (bool, error) {
	out, err := git(ctx, r.Root, nil, "merge-tree", "--write-tree", "--no-messages", base, branch)
	if exitCode(err) == 1 {
		return false, nil // it conflicts: there is work to merge
	}
	if err != nil {
		return false, err
	}
	tree, err := revParse(ctx, r.Root, base+"^{tree}")
	f := lines(out)
	return err == nil && len(f) > 0 && f[0] == tree, err
}

// onBranch checks that t's worktree has its branch checked out: its work
// on another branch or a detached HEAD is on no branch party merges,
// counts or keeps.
func onBranch(ctx context.Context, t Tree) error {
	out, err := git(ctx, t.Path, nil, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil && exitCode(err) != 1 {
		return err
	}
	if head := strings.TrimSpace(out); head != t.Branch {
		return fmt.Errorf("%s's worktree %s is on %s, not its branch %s (git -C %s switch %s, or --force): %w",
			t.Role, t.Path, orDetached(head), t.Branch, t.Path, t.Branch, ErrTaken)
	}
	return nil
}

// base is what t's work is counted against: its base while that names a
// commit, else the commit it named when the tree was made.
func (r Repo) base(ctx context.Context, t Tree) string {
	if c, err := r.Resolve(ctx, t.Base); err == nil {
		return c
	}
	return t.BaseCommit
}

// Prune removes each of trees that holds no work (Remove without force),
// keeps the others and says why, and lets git forget worktrees whose
// folders are gone.
func (r Repo) Prune(ctx context.Context, trees []Tree) (removed []Tree, kept map[string]error, err error) {
	kept = map[string]error{}
	for _, t := range trees {
		switch err := r.Remove(ctx, t, false); {
		case err == nil:
			removed = append(removed, t)
		case errors.Is(err, ErrDirty) || errors.Is(err, ErrUnmerged) || errors.Is(err, ErrTaken):
			kept[t.Role] = err
		default:
			return removed, kept, err
		}
	}
	_, err = git(ctx, r.Root, nil, "worktree", "prune")
	return removed, kept, err
}

// entry is one worktree that git lists.
type entry struct{ path, branch string }

// list is the worktrees git knows of the repository of dir, the main one
// first.
func list(ctx context.Context, dir string) ([]entry, error) {
	out, err := git(ctx, dir, nil, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	var trees []entry
	for _, f := range strings.Split(out, "\x00") {
		switch k, v, _ := strings.Cut(f, " "); k {
		case "worktree":
			trees = append(trees, entry{path: v})
		case "branch":
			if len(trees) > 0 {
				trees[len(trees)-1].branch = strings.TrimPrefix(v, "refs/heads/")
			}
		}
	}
	return trees, nil
}

// dirty says whether the tree at dir has uncommitted changes; untracked
// says whether new files count.
func dirty(ctx context.Context, dir string, untracked bool) (bool, error) {
	mode := "--untracked-files=no"
	if untracked {
		mode = "--untracked-files=normal"
	}
	out, err := git(ctx, dir, nil, "status", "--porcelain", mode)
	return strings.TrimSpace(out) != "", err
}

// count is the number of commits in a revision range.
func count(ctx context.Context, dir, rng string) (int, error) {
	out, err := git(ctx, dir, nil, "rev-list", "--count", rng)
	if err != nil {
		return 0, err
	}
	var n int
	_, err = fmt.Sscan(strings.TrimSpace(out), &n)
	return n, err
}
