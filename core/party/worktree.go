package party

import (
	"context"
	"os/exec"

	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/worktree"
)

// WorktreeStatus is a team's worktree as party worktree list shows it.
type WorktreeStatus = session.WorktreeStatus

// worktreeScope is the session deps and the team a worktree command acts
// on: --session (or PARTY_SESSION), else the one with worktrees here.
func worktreeScope(env *Env) (session.Deps, session.WorktreeScope, error) {
	d, err := env.SessionDeps()
	if err != nil {
		return d, session.WorktreeScope{}, err
	}
	cwd, err := env.Getwd()
	return d, session.WorktreeScope{Name: env.Session, Cwd: cwd}, err
}

// Diff says what role's agent changed in its worktree (party diff --json).
func Diff(ctx context.Context, env *Env, role string) (worktree.Changes, error) {
	d, sc, err := worktreeScope(env)
	if err != nil {
		return worktree.Changes{}, err
	}
	return sc.Diff(ctx, d, role)
}

// DiffCmd is the git command that shows role's changes (party diff).
func DiffCmd(ctx context.Context, env *Env, role string, stat bool) (*exec.Cmd, func(), error) {
	d, sc, err := worktreeScope(env)
	if err != nil {
		return nil, nil, err
	}
	return sc.DiffCmd(ctx, d, role, stat)
}

// Merge merges role's branch into its base (party merge).
func Merge(ctx context.Context, env *Env, role string, opts worktree.MergeOptions) (worktree.Merged, error) {
	d, sc, err := worktreeScope(env)
	if err != nil {
		return worktree.Merged{}, err
	}
	return sc.Merge(ctx, d, role, opts)
}

// Worktrees are the team's worktrees (party worktree list).
func Worktrees(ctx context.Context, env *Env) ([]WorktreeStatus, error) {
	d, sc, err := worktreeScope(env)
	if err != nil {
		return nil, err
	}
	return sc.Worktrees(ctx, d)
}

// RemoveWorktree removes role's worktree and branch (party worktree remove).
func RemoveWorktree(ctx context.Context, env *Env, role string, force bool) (worktree.Tree, error) {
	d, sc, err := worktreeScope(env)
	if err != nil {
		return worktree.Tree{}, err
	}
	return sc.RemoveWorktree(ctx, d, role, force)
}

// PruneWorktrees removes the team's worktrees that hold no work (party
// worktree prune).
func PruneWorktrees(ctx context.Context, env *Env) ([]worktree.Tree, map[string]string, error) {
	d, sc, err := worktreeScope(env)
	if err != nil {
		return nil, nil, err
	}
	return sc.PruneWorktrees(ctx, d)
}
