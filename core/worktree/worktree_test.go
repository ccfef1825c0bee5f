package worktree

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/usage"
)

// run runs git in dir and returns its output, failing the test on an error.
func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// newRepo is a repository on branch main with one commit: a.txt.
func newRepo(t *testing.T) (Repo, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.Mkdir(dir, 0o755))
	run(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, "a.txt"), "one\ntwo\nthree\n")
	run(t, dir, "add", "a.txt")
	run(t, dir, "commit", "-q", "-m", "first")
	r, err := Open(context.Background(), dir)
	require.NoError(t, err)
	return r, dir
}

// newTree makes role's worktree of r from main.
func newTree(t *testing.T, r Repo, role string) Tree {
	t.Helper()
	ctx := context.Background()
	base, err := r.Resolve(ctx, "main")
	require.NoError(t, err)
	tr := Tree{Role: role, Path: r.Path(filepath.Join(filepath.Dir(r.Root), "trees"), "s", role), Branch: Branch("s", role), Base: "main", BaseCommit: base}
	made, err := r.Create(ctx, tr, false)
	require.NoError(t, err)
	require.Equal(t, Made{Tree: true, Branch: true}, made)
	require.NoError(t, r.Checkout(ctx, tr))
	return tr
}

func TestOpenRefuses(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	_, err := Open(ctx, tmp)
	assert.ErrorIs(t, err, ErrNotRepo)

	bare := filepath.Join(tmp, "bare.git")
	run(t, tmp, "init", "-q", "--bare", bare)
	_, err = Open(ctx, bare)
	assert.ErrorIs(t, err, ErrBare)

	_, dir := newRepo(t)
	_, err = Open(ctx, filepath.Join(dir, ".git"))
	assert.ErrorIs(t, err, ErrNotRepo, "inside .git")
	write(t, filepath.Join(dir, ".gitmodules"), "[submodule \"x\"]\n\tpath = x\n")
	_, err = Open(ctx, dir)
	assert.ErrorIs(t, err, ErrSubmodules)
}

func TestOpenFromSubfolderAndLinkedTree(t *testing.T) {
	r, dir := newRepo(t)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	got, err := Open(context.Background(), filepath.Join(dir, "sub"))
	require.NoError(t, err)
	assert.Equal(t, r.Root, got.Root)
	tr := newTree(t, r, "claude")
	got, err = Open(context.Background(), tr.Path)
	require.NoError(t, err)
	assert.Equal(t, r.Root, got.Root, "a linked worktree's repository is the main tree's")
}

func TestCreate(t *testing.T) {
	ctx := context.Background()
	r, dir := newRepo(t)
	tr := newTree(t, r, "claude")
	assert.Equal(t, "party/s/claude", run(t, tr.Path, "branch", "--show-current"))
	assert.FileExists(t, filepath.Join(tr.Path, "a.txt"))
	assert.Contains(t, run(t, dir, "worktree", "list"), tr.Path)
	assert.False(t, strings.HasPrefix(tr.Path, dir+string(filepath.Separator)), "outside the repository's tree")

	made, err := r.Create(ctx, tr, false)
	require.NoError(t, err, "the same tree again is kept")
	assert.Equal(t, Made{}, made)

	t.Run("path taken", func(t *testing.T) {
		other := tr
		other.Branch = "party/s/other"
		_, err := r.Create(ctx, other, false)
		assert.ErrorIs(t, err, ErrTaken)
		plain := filepath.Join(t.TempDir(), "plain")
		require.NoError(t, os.Mkdir(plain, 0o755))
		other.Path = plain
		_, err = r.Create(ctx, other, false)
		assert.ErrorIs(t, err, ErrTaken)
		assert.Contains(t, err.Error(), plain)
	})
	t.Run("branch taken", func(t *testing.T) {
		run(t, dir, "branch", "party/s/codex")
		other := tr
		other.Role, other.Branch, other.Path = "codex", "party/s/codex", filepath.Join(t.TempDir(), "codex")
		_, err := r.Create(ctx, other, false)
		assert.ErrorIs(t, err, ErrTaken)
		assert.NoDirExists(t, other.Path, "nothing left behind")
		made, err := r.Create(ctx, other, true)
		require.NoError(t, err, "the team's own branch is checked out again")
		assert.Equal(t, Made{Tree: true}, made)
		require.NoError(t, r.Undo(ctx, other, made))
		assert.NoDirExists(t, other.Path)
		assert.Contains(t, run(t, dir, "branch", "--list"), "party/s/codex", "undo keeps a branch Create did not make")
	})
	t.Run("folder removed by hand", func(t *testing.T) {
		// Another tree of the user's whose folder is gone too (a drive not
		// mounted): its record is not Create's to prune.
		mine := filepath.Join(t.TempDir(), "mine")
		run(t, dir, "worktree", "add", "-q", "-b", "mine", mine)
		require.NoError(t, os.RemoveAll(mine))
		require.NoError(t, os.RemoveAll(tr.Path))
		made, err := r.Create(ctx, tr, true)
		require.NoError(t, err, "made again from its branch")
		assert.Equal(t, Made{Tree: true}, made)
		require.NoError(t, r.Checkout(ctx, tr))
		assert.FileExists(t, filepath.Join(tr.Path, "a.txt"))
		assert.Contains(t, run(t, dir, "worktree", "list"), mine, "the user's tree stays recorded")
	})
	t.Run("bad branch", func(t *testing.T) {
		other := tr
		other.Branch, other.Path = "party/s/a..b", filepath.Join(t.TempDir(), "x")
		_, err := r.Create(ctx, other, false)
		assert.ErrorIs(t, err, usage.Err)
	})
}

func TestSymlinkedDataDir(t *testing.T) {
	ctx := context.Background()
	r, _ := newRepo(t)
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(real, link))
	dir, err := Dir(func(k string) string { return map[string]string{"XDG_DATA_HOME": link}[k] })
	require.NoError(t, err)
	realDir, err := filepath.EvalSymlinks(real)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(realDir, "party", "worktrees"), dir)
	base, err := r.Resolve(ctx, "main")
	require.NoError(t, err)
	tr := Tree{Role: "claude", Path: r.Path(dir, "s", "claude"), Branch: Branch("s", "claude"), Base: "main", BaseCommit: base}
	_, err = r.Create(ctx, tr, false)
	require.NoError(t, err)
	made, err := r.Create(ctx, tr, true)
	require.NoError(t, err, "a second start finds the tree git recorded")
	assert.Equal(t, Made{}, made)
}

func TestOffItsBranch(t *testing.T) {
	ctx := context.Background()
	r, _ := newRepo(t)
	tr := newTree(t, r, "claude")
	run(t, tr.Path, "checkout", "-q", "--detach")
	write(t, filepath.Join(tr.Path, "a.txt"), "detached work\n")
	run(t, tr.Path, "commit", "-q", "-am", "detached")
	_, err := r.Changes(ctx, tr)
	assert.ErrorIs(t, err, ErrTaken)
	_, err = r.Merge(ctx, tr, MergeOptions{})
	assert.ErrorIs(t, err, ErrTaken)
	assert.ErrorIs(t, r.Remove(ctx, tr, false), ErrTaken)
	removed, kept, err := r.Prune(ctx, []Tree{tr})
	require.NoError(t, err)
	assert.Empty(t, removed)
	assert.ErrorIs(t, kept["claude"], ErrTaken, "kept, not pruned with its detached commit")
	assert.DirExists(t, tr.Path)
}

func TestSquashedIsMerged(t *testing.T) {
	ctx := context.Background()
	r, dir, a, _ := mergeSetup(t)
	m, err := r.Merge(ctx, a, MergeOptions{Squash: true})
	require.NoError(t, err)
	assert.Equal(t, 1, m.Commits)
	m, err = r.Merge(ctx, a, MergeOptions{})
	require.NoError(t, err, "merging again after a squash")
	assert.Equal(t, 0, m.Commits, "its work is in already")
	removed, kept, err := r.Prune(ctx, []Tree{a})
	require.NoError(t, err)
	assert.Empty(t, kept)
	assert.Equal(t, []Tree{a}, removed)
	assert.NotContains(t, run(t, dir, "branch", "--list"), "party/s/claude")
}

func TestResolve(t *testing.T) {
	ctx := context.Background()
	r, dir := newRepo(t)
	c, err := r.Resolve(ctx, "main")
	require.NoError(t, err)
	assert.Equal(t, run(t, dir, "rev-parse", "HEAD"), c)
	_, err = r.Resolve(ctx, "nope")
	assert.ErrorIs(t, err, ErrNoBase)
	_, err = r.Resolve(ctx, "--help")
	assert.ErrorIs(t, err, usage.Err)
}

func TestChanges(t *testing.T) {
	ctx := context.Background()
	r, _ := newRepo(t)
	tr := newTree(t, r, "claude")
	c, err := r.Changes(ctx, tr)
	require.NoError(t, err)
	assert.Empty(t, c.Files)
	assert.False(t, c.Dirty)

	write(t, filepath.Join(tr.Path, "a.txt"), "one\nTWO\nthree\n")
	run(t, tr.Path, "commit", "-q", "-am", "two")
	write(t, filepath.Join(tr.Path, "a.txt"), "one\nTWO\nthree\nfour\n") // uncommitted
	write(t, filepath.Join(tr.Path, "new", "b.txt"), "b\n")              // untracked
	write(t, filepath.Join(tr.Path, "bin.dat"), "\x00\x01\x02")
	write(t, filepath.Join(tr.Path, ".gitignore"), "*.log\n")
	write(t, filepath.Join(tr.Path, "x.log"), "ignored\n")
	index, err := os.ReadFile(filepath.Join(r.Root, ".git", "worktrees", "claude", "index"))
	require.NoError(t, err)

	c, err = r.Changes(ctx, tr)
	require.NoError(t, err)
	assert.Equal(t, []FileChange{
		{Path: ".gitignore", Added: 1}, {Path: "a.txt", Added: 2, Removed: 1},
		{Path: "bin.dat", Binary: true}, {Path: "new/b.txt", Added: 1},
	}, c.Files)
	assert.Equal(t, 4, c.Added)
	assert.Equal(t, 1, c.Removed)
	assert.Equal(t, 1, c.Ahead)
	assert.True(t, c.Dirty)
	after, err := os.ReadFile(filepath.Join(r.Root, ".git", "worktrees", "claude", "index"))
	require.NoError(t, err)
	assert.Equal(t, index, after, "the agent's index is untouched")
	assert.Contains(t, run(t, tr.Path, "status", "--porcelain"), "?? new/", "new files stay untracked")

	cmd, done, err := r.ShowCmd(ctx, tr, false)
	require.NoError(t, err)
	out, err := cmd.Output()
	done()
	require.NoError(t, err)
	assert.Contains(t, string(out), "+four")
	assert.Contains(t, string(out), "+b")
}

// mergeSetup is a repository whose claude and codex trees each changed
// line two of a.txt and committed it.
func mergeSetup(t *testing.T) (Repo, string, Tree, Tree) {
	r, dir := newRepo(t)
	a, b := newTree(t, r, "claude"), newTree(t, r, "codex")
	for _, tr := range []Tree{a, b} {
		write(t, filepath.Join(tr.Path, "a.txt"), "one\n"+tr.Role+"\nthree\n")
		run(t, tr.Path, "commit", "-q", "-am", tr.Role)
	}
	return r, dir, a, b
}

func TestMergeConflictLeavesBaseUnchanged(t *testing.T) {
	ctx := context.Background()
	r, dir, a, b := mergeSetup(t)
	m, err := r.Merge(ctx, a, MergeOptions{})
	require.NoError(t, err)
	assert.Equal(t, 1, m.Commits)
	assert.Equal(t, run(t, dir, "rev-parse", "HEAD"), m.Head)
	assert.Equal(t, "one\nclaude\nthree\n", read(t, filepath.Join(dir, "a.txt")))

	before := run(t, dir, "rev-parse", "HEAD")
	_, err = r.Merge(ctx, b, MergeOptions{})
	var ce *ConflictError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, ErrConflict)
	assert.Equal(t, []string{"a.txt"}, ce.Files)
	assert.Equal(t, before, run(t, dir, "rev-parse", "HEAD"), "main unchanged")
	assert.Empty(t, run(t, dir, "status", "--porcelain"), "nothing half-merged")
	assert.NoFileExists(t, filepath.Join(dir, ".git", "MERGE_HEAD"))

	_, err = r.Merge(ctx, b, MergeOptions{Squash: true})
	require.ErrorAs(t, err, &ce, "a squash conflicts too")
	assert.Empty(t, run(t, dir, "status", "--porcelain"))
	assert.Equal(t, before, run(t, dir, "rev-parse", "HEAD"))
}

func TestMergeRefuses(t *testing.T) {
	ctx := context.Background()
	r, dir, a, _ := mergeSetup(t)

	write(t, filepath.Join(a.Path, "c.txt"), "new\n")
	_, err := r.Merge(ctx, a, MergeOptions{})
	assert.ErrorIs(t, err, ErrDirty, "the agent's tree has new work")
	assert.Contains(t, err.Error(), "--commit -m")

	write(t, filepath.Join(dir, "a.txt"), "dirty\n")
	_, err = r.Merge(ctx, a, MergeOptions{Commit: "c"})
	assert.ErrorIs(t, err, ErrDirty, "the main tree is dirty")
	assert.FileExists(t, filepath.Join(a.Path, "c.txt"), "nothing committed before the refusal")
	run(t, dir, "checkout", "-q", "--", "a.txt")

	run(t, dir, "checkout", "-q", "-b", "other")
	_, err = r.Merge(ctx, a, MergeOptions{})
	assert.ErrorIs(t, err, ErrTaken, "main worktree on another branch")
	run(t, dir, "checkout", "-q", "main")

	m, err := r.Merge(ctx, a, MergeOptions{Commit: "add c", Squash: true})
	require.NoError(t, err)
	assert.Equal(t, 2, m.Commits)
	assert.Equal(t, "new\n", read(t, filepath.Join(dir, "c.txt")))
	assert.Contains(t, run(t, dir, "log", "-1", "--format=%s"), "Squashed party/s/claude")

	a.Base = "v1.0"
	run(t, dir, "tag", "v1.0")
	_, err = r.Merge(ctx, a, MergeOptions{})
	assert.ErrorIs(t, err, usage.Err, "a base that is not a branch needs --into")
}

func TestRemoveAndPrune(t *testing.T) {
	ctx := context.Background()
	r, dir, a, b := mergeSetup(t)
	err := r.Remove(ctx, a, false)
	assert.ErrorIs(t, err, ErrUnmerged)
	_, err = r.Merge(ctx, a, MergeOptions{})
	require.NoError(t, err)

	write(t, filepath.Join(a.Path, "junk"), "x")
	assert.ErrorIs(t, r.Remove(ctx, a, false), ErrDirty)
	require.NoError(t, os.Remove(filepath.Join(a.Path, "junk")))

	c := newTree(t, r, "gemini")
	removed, kept, err := r.Prune(ctx, []Tree{a, b, c})
	require.NoError(t, err)
	assert.Equal(t, []Tree{a, c}, removed)
	assert.ErrorIs(t, kept["codex"], ErrUnmerged)
	assert.NoDirExists(t, a.Path)
	assert.NotContains(t, run(t, dir, "branch", "--list"), "party/s/claude")
	assert.DirExists(t, b.Path)

	require.NoError(t, r.Remove(ctx, b, true))
	assert.NoDirExists(t, b.Path)
	assert.Equal(t, "* main", run(t, dir, "branch", "--list"))
	assert.NotContains(t, run(t, dir, "worktree", "list"), "codex")
}

func TestSetup(t *testing.T) {
	ctx := context.Background()
	r, dir := newRepo(t)
	write(t, filepath.Join(dir, ".env"), "SECRET=1\n")
	write(t, filepath.Join(dir, "conf", "local.json"), "{}\n")
	tr := newTree(t, r, "claude")
	require.NoError(t, r.Setup(ctx, tr, []string{".env", "conf/*.json", "a.txt"}, []string{"sh", "-c", "echo $PARTY_ROLE > ready"}, []string{"PARTY_ROLE=claude"}))
	assert.Equal(t, "SECRET=1\n", read(t, filepath.Join(tr.Path, ".env")))
	assert.Equal(t, "{}\n", read(t, filepath.Join(tr.Path, "conf", "local.json")))
	assert.Equal(t, "claude\n", read(t, filepath.Join(tr.Path, "ready")))

	err := r.Setup(ctx, tr, nil, []string{"sh", "-c", "for i in $(seq 1 30); do echo line $i; done; exit 3"}, nil)
	var se *SetupError
	require.ErrorAs(t, err, &se)
	assert.ErrorIs(t, err, ErrSetup)
	assert.True(t, strings.HasPrefix(se.Tail, "line 11\n"), "the last 20 lines: %q", se.Tail)
	assert.True(t, strings.HasSuffix(se.Tail, "line 30"))

	assert.Error(t, r.Setup(ctx, tr, []string{"../*"}, nil, nil), "a glob outside the repository")

	// A symbolic link in the tree that points out of it does not take the
	// copy there.
	out := t.TempDir()
	require.NoError(t, os.Symlink(out, filepath.Join(tr.Path, "sub")))
	write(t, filepath.Join(dir, "sub", "secret.env"), "S=1\n")
	assert.Error(t, r.Setup(ctx, tr, []string{"sub/*.env"}, nil, nil))
	assert.NoFileExists(t, filepath.Join(out, "secret.env"))
	assert.Error(t, r.Setup(ctx, tr, []string{".git/config"}, nil, nil))
	assert.True(t, errors.Is(r.Setup(ctx, tr, nil, []string{"/nonexistent/setup"}, nil), ErrSetup))
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
