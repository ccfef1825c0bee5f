package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/shellwords"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/usage"
	"github.com/partyhq/party/core/worktree"
)

// AllAgents in StartOptions.Worktree gives every agent pane a worktree.
const AllAgents = "*"

// worktreeRoles are the roles of panes that opts.Worktree gives a
// worktree: every agent pane for AllAgents, else the roles named (a shell
// too, when named).
func worktreeRoles(panes []PaneSpec, want []string) ([]string, error) {
	var out []string
	for _, w := range want {
		if w == AllAgents {
			for _, p := range panes {
				if len(p.Argv) > 0 && p.Agent != agent.Shell && !slices.Contains(out, p.Role) {
					out = append(out, p.Role)
				}
			}
			continue
		}
		if !slices.ContainsFunc(panes, func(p PaneSpec) bool { return p.Role == w }) {
			return nil, fmt.Errorf("%w: --worktree %s: no pane of that role (--pane gives the roles)", usage.Err, w)
		}
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out, nil
}

// prepareWorktrees makes the worktree of each pane that opts.Worktree
// names, in the repository of cwd, from opts.Base (default: the commit
// checked out, on its branch), and readies each new one (worktree.copy,
// worktree.setup) before any agent starts. A worktree this team had
// (earlier, from its record) is kept as it is. It sets each pane's
// Worktree and Branch. undo removes the worktrees it made, for a start
// that fails after it.
func prepareWorktrees(ctx context.Context, d Deps, opts StartOptions, name, cwd string, panes []PaneSpec, earlier []worktree.Tree) (trees []worktree.Tree, undo func(), err error) {
	undo = func() {}
	if len(opts.Worktree) == 0 {
		if opts.Base != "" {
			return nil, undo, fmt.Errorf("%w: --base is the base of --worktree's branches: give --worktree too", usage.Err)
		}
		return nil, undo, nil
	}
	roles, err := worktreeRoles(panes, opts.Worktree)
	if err != nil || len(roles) == 0 {
		if err == nil {
			err = fmt.Errorf("%w: --worktree: no agent pane to give one (name a role: --worktree=ROLE)", usage.Err)
		}
		return nil, undo, err
	}
	repo, err := worktree.Open(ctx, cwd)
	if err != nil {
		return nil, undo, err
	}
	base, commit, err := baseOf(ctx, repo, opts.Base)
	if err != nil {
		return nil, undo, err
	}
	dir, err := worktree.Dir(d.Getenv)
	if err != nil {
		return nil, undo, err
	}
	setup, err := shellwords.SplitCommand(opts.Config.Worktree.Setup)
	if err != nil {
		return nil, undo, fmt.Errorf("worktree.setup: %w", err)
	}
	trees = make([]worktree.Tree, len(roles))
	for i, role := range roles {
		trees[i] = worktree.Tree{Role: role, Path: repo.Path(dir, name, role), Branch: worktree.Branch(name, role), Base: base, BaseCommit: commit}
		if k := slices.IndexFunc(earlier, func(e worktree.Tree) bool { return e.Branch == trees[i].Branch }); k >= 0 {
			trees[i] = earlier[k] // this team's from an earlier start: its base stays
		}
	}
	// One git worktree add at a time; then each tree is checked out and
	// readied at once: a large checkout is mostly the kernel's time,
	// which the cores share.
	made, errs := make([]worktree.Made, len(trees)), make([]error, len(trees))
	failed := false
	for i, t := range trees {
		ours := slices.ContainsFunc(earlier, func(e worktree.Tree) bool { return e.Branch == t.Branch })
		if made[i], errs[i] = repo.Create(ctx, t, ours); errs[i] != nil {
			errs[i], failed = fmt.Errorf("--worktree %s: %w", t.Role, errs[i]), true
			break
		}
	}
	var wg sync.WaitGroup
	for i, t := range trees {
		if !made[i].Tree || failed {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = repo.Checkout(ctx, t); errs[i] != nil {
				return
			}
			env := []string{"PARTY_SESSION=" + name, "PARTY_ROLE=" + t.Role, "PARTY_WORKTREE=" + t.Path, "PARTY_BASE=" + t.Base}
			errs[i] = repo.Setup(ctx, t, opts.Config.Worktree.Copy, setup, env)
		}()
	}
	wg.Wait()
	undo = func() {
		// What this start made, and no more: a branch the team had stays.
		for i, t := range trees {
			if err := repo.Undo(context.WithoutCancel(ctx), t, made[i]); err != nil {
				d.warn("warning: remove the worktree of %s: %v", t.Role, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		undo()
		return nil, func() {}, err
	}
	for _, t := range trees {
		i := slices.IndexFunc(panes, func(p PaneSpec) bool { return p.Role == t.Role })
		panes[i].Worktree, panes[i].Branch = t.Path, t.Branch
	}
	return trees, undo, nil
}

// baseOf is the base given (a branch, tag or commit) and its commit, or,
// with none, the branch checked out in the main worktree (its commit
// when detached).
func baseOf(ctx context.Context, repo worktree.Repo, given string) (base, commit string, err error) {
	if given != "" {
		commit, err = repo.Resolve(ctx, given)
		return given, commit, err
	}
	branch, commit, err := repo.Head(ctx)
	switch {
	case err != nil:
		return "", "", err
	case commit == "":
		return "", "", fmt.Errorf("%s has no commit yet to branch from: %w", repo.Root, worktree.ErrNoBase)
	case branch == "":
		return commit, commit, nil
	}
	return branch, commit, nil
}

// PaneRoles are the roles of rec's panes, by pane id.
func (rec Record) PaneRoles() map[string]string {
	roles := map[string]string{}
	for _, p := range rec.Panes {
		roles[p.ID] = p.Role
	}
	return roles
}

// DirOf is the folder role's pane runs in: its worktree, else the
// team's folder.
func (rec Record) DirOf(role string) string {
	for _, p := range rec.Panes {
		if p.Role == role && p.Worktree != "" {
			return p.Worktree
		}
	}
	return rec.Cwd
}

// HasMCP says party's MCP server is wired into the agent of role's pane.
func (rec Record) HasMCP(role string) bool {
	for _, p := range rec.Panes {
		if p.Role == role {
			return p.MCP
		}
	}
	return false
}

// BaseOf is the base of role's worktree when its pane runs in one.
func (rec Record) BaseOf(role string) (string, bool) {
	if rec.DirOf(role) == rec.Cwd {
		return "", false
	}
	t, err := rec.TreeOf(role)
	return t.Base, err == nil
}

// TreeOf is the worktree of role in rec.
func (rec Record) TreeOf(role string) (worktree.Tree, error) {
	for _, t := range rec.Worktrees {
		if t.Role == role {
			return t, nil
		}
	}
	if len(rec.Worktrees) == 0 {
		return worktree.Tree{}, fmt.Errorf("team %s has no worktrees (party start --worktree gives them): %w", rec.Session, ErrNoWorktree)
	}
	roles := make([]string, len(rec.Worktrees))
	for i, t := range rec.Worktrees {
		roles[i] = t.Role
	}
	return worktree.Tree{}, fmt.Errorf("%s has no worktree in team %s (those that do: %v): %w", role, rec.Session, roles, ErrNoWorktree)
}

// ErrNoWorktree is a role without a worktree.
var ErrNoWorktree = errors.New("no worktree")

// keepTrees are the worktrees a team records: those of this start, then
// the ones an earlier start made that this one does not use (kept, as
// party stop keeps them, until party worktree remove).
func keepTrees(trees, earlier []worktree.Tree) []worktree.Tree {
	out := slices.Clone(trees)
	for _, e := range earlier {
		if !slices.ContainsFunc(out, func(t worktree.Tree) bool { return t.Branch == e.Branch }) {
			out = append(out, e)
		}
	}
	return out
}

// reopenWorktrees makes again the worktree of each pane of a team coming
// back whose folder is gone (removed by hand), from the team's branch.
func reopenWorktrees(ctx context.Context, rec Record, panes []PaneSpec) error {
	for _, p := range panes {
		if p.Worktree == "" || isDir(p.Worktree) {
			continue
		}
		t, err := rec.TreeOf(p.Role)
		if err != nil {
			return err
		}
		repo, err := worktree.Open(ctx, rec.Cwd)
		if err != nil {
			return fmt.Errorf("bring back %s's worktree: %w", p.Role, err)
		}
		made, err := repo.Create(ctx, t, true)
		if err != nil {
			return fmt.Errorf("bring back %s's worktree: %w", p.Role, err)
		}
		if !made.Tree {
			continue
		}
		if err := repo.Checkout(ctx, t); err != nil {
			return fmt.Errorf("bring back %s's worktree: %w", p.Role, err)
		}
	}
	return nil
}

// WorktreeTeam is the record of the team a worktree command (party diff,
// merge, worktree) acts on: the team name names (--session,
// PARTY_SESSION); without one, the one team with worktrees started in
// cwd or at the top of its repository, the live one of several.
func WorktreeTeam(ctx context.Context, d Deps, name, cwd string) (Record, error) {
	root, err := state.Root(d.Getenv)
	if err != nil {
		return Record{}, err
	}
	if name != "" {
		rec, err := ReadRecord(state.SessionDir(root, d.SocketPath, name))
		if errors.Is(err, fs.ErrNotExist) {
			return Record{}, fmt.Errorf("%w: %q on %s (party sessions lists them)", ErrNoTeam, name, d.Server)
		}
		return rec, err
	}
	folders := []string{cwd}
	if repo, err := worktree.Open(ctx, cwd); err == nil {
		folders = append(folders, repo.Root)
	}
	teams, err := Teams(ctx, d, "")
	if err != nil {
		return Record{}, err
	}
	var found []Stored
	for _, t := range teams {
		if len(t.Worktrees) > 0 && slices.Contains(folders, t.Cwd) {
			found = append(found, t)
		}
	}
	if len(found) > 1 {
		live := slices.DeleteFunc(slices.Clone(found), func(t Stored) bool { return !t.Live })
		if len(live) != 1 {
			names := make([]string, len(found))
			for i, t := range found {
				names[i] = t.Name
			}
			return Record{}, fmt.Errorf("%d teams here have worktrees (%s); pick one with --session: %w", len(found), strings.Join(names, ", "), ErrUnresolved)
		}
		found = live
	}
	if len(found) == 0 {
		return Record{}, fmt.Errorf("no team with worktrees was started in %s (party start --worktree; --session names one elsewhere): %w", cwd, ErrNoWorktree)
	}
	return ReadRecord(found[0].StateDir)
}
