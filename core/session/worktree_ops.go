package session

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"

	"github.com/partyhq/party/core/worktree"
)

// WorktreeScope is which team a worktree command acts on: the team Name
// names, else the one with worktrees started in Cwd (WorktreeTeam).
type WorktreeScope struct {
	Name, Cwd string
}

// open is the record of the team, the repository and role's worktree.
func (sc WorktreeScope) open(ctx context.Context, d Deps, role string) (Record, worktree.Repo, worktree.Tree, error) {
	rec, err := WorktreeTeam(ctx, d, sc.Name, sc.Cwd)
	if err != nil {
		return rec, worktree.Repo{}, worktree.Tree{}, err
	}
	t, err := rec.TreeOf(role)
	if err != nil {
		return rec, worktree.Repo{}, t, err
	}
	repo, err := worktree.Open(ctx, rec.Cwd)
	return rec, repo, t, err
}

// Diff says what role's agent changed in its worktree against its base.
func (sc WorktreeScope) Diff(ctx context.Context, d Deps, role string) (worktree.Changes, error) {
	_, repo, t, err := sc.open(ctx, d, role)
	if err != nil {
		return worktree.Changes{}, err
	}
	return repo.Changes(ctx, t)
}

// DiffCmd is the git command that shows role's changes, for the caller to
// run with its terminal; done cleans up after it.
func (sc WorktreeScope) DiffCmd(ctx context.Context, d Deps, role string, stat bool) (*exec.Cmd, func(), error) {
	_, repo, t, err := sc.open(ctx, d, role)
	if err != nil {
		return nil, nil, err
	}
	return repo.ShowCmd(ctx, t, stat)
}

// Merge merges role's branch into its base in the main worktree.
func (sc WorktreeScope) Merge(ctx context.Context, d Deps, role string, opts worktree.MergeOptions) (worktree.Merged, error) {
	_, repo, t, err := sc.open(ctx, d, role)
	if err != nil {
		return worktree.Merged{}, err
	}
	return repo.Merge(ctx, t, opts)
}

// WorktreeStatus is a team's worktree with what it holds, as party
// worktree list shows it.
type WorktreeStatus struct {
	worktree.Tree
	Ahead int    `json:"commits_ahead"`
	Dirty bool   `json:"dirty"`
	Error string `json:"error,omitempty"` // why the rest is unknown (its folder gone)
}

// Row is the worktree as party worktree list prints it.
func (w WorktreeStatus) Row() []string {
	state := fmt.Sprintf("%d ahead", w.Ahead)
	if w.Dirty {
		state += ", uncommitted changes"
	}
	if w.Error != "" {
		state = w.Error
	}
	return []string{w.Role, w.Branch, w.Base, state, w.Path}
}

// Worktrees are the team's worktrees; none where no team has any.
func (sc WorktreeScope) Worktrees(ctx context.Context, d Deps) ([]WorktreeStatus, error) {
	rec, err := WorktreeTeam(ctx, d, sc.Name, sc.Cwd)
	if errors.Is(err, ErrNoWorktree) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	repo, err := worktree.Open(ctx, rec.Cwd)
	if err != nil {
		return nil, err
	}
	out := make([]WorktreeStatus, len(rec.Worktrees))
	for i, t := range rec.Worktrees {
		out[i].Tree = t
		c, err := repo.Changes(ctx, t)
		if err != nil {
			out[i].Error = err.Error()
			continue
		}
		out[i].Ahead, out[i].Dirty = c.Ahead, c.Dirty
	}
	return out, nil
}

// RemoveWorktree removes role's worktree and branch (worktree.Repo.Remove)
// and takes it out of the team's record. A live team's agent may not
// lose the folder it runs in, unless force.
func (sc WorktreeScope) RemoveWorktree(ctx context.Context, d Deps, role string, force bool) (worktree.Tree, error) {
	rec, repo, t, err := sc.open(ctx, d, role)
	if err != nil {
		return t, err
	}
	if !force && rec.DirOf(role) != rec.Cwd {
		if live, _ := d.Tmux.HasSession(ctx, rec.Session); live {
			return t, fmt.Errorf("%s's agent runs in %s (party stop %s first, or --force): %w", role, t.Path, rec.Session, worktree.ErrTaken)
		}
	}
	if err := repo.Remove(ctx, t, force); err != nil {
		return t, err
	}
	return t, forgetTrees(rec, []worktree.Tree{t})
}

// PruneWorktrees removes the team's worktrees that hold no work: nothing
// uncommitted, nothing unmerged, and no live agent in them; kept says why
// each other stays.
func (sc WorktreeScope) PruneWorktrees(ctx context.Context, d Deps) (removed []worktree.Tree, kept map[string]string, err error) {
	rec, err := WorktreeTeam(ctx, d, sc.Name, sc.Cwd)
	if err != nil {
		return nil, nil, err
	}
	repo, err := worktree.Open(ctx, rec.Cwd)
	if err != nil {
		return nil, nil, err
	}
	kept = map[string]string{}
	trees := rec.Worktrees
	if live, _ := d.Tmux.HasSession(ctx, rec.Session); live {
		trees = nil
		for _, t := range rec.Worktrees {
			if rec.DirOf(t.Role) != rec.Cwd {
				kept[t.Role] = "its agent runs in it"
				continue
			}
			trees = append(trees, t)
		}
	}
	removed, why, err := repo.Prune(ctx, trees)
	for role, e := range why {
		kept[role] = e.Error()
	}
	if ferr := forgetTrees(rec, removed); err == nil {
		err = ferr
	}
	return removed, kept, err
}

// forgetTrees takes gone out of rec's worktrees and writes it.
func forgetTrees(rec Record, gone []worktree.Tree) error {
	if len(gone) == 0 {
		return nil
	}
	rec.Worktrees = slices.DeleteFunc(rec.Worktrees, func(t worktree.Tree) bool {
		return slices.ContainsFunc(gone, func(g worktree.Tree) bool { return g.Branch == t.Branch })
	})
	return WriteRecord(rec.StateDir, rec)
}
