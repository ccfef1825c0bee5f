package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

// DiffOptions are the inputs of party diff.
type DiffOptions struct {
	Role string
	Stat bool
}

func newDiffCmd(f *Factory, runF func(context.Context, *DiffOptions) error) *cobra.Command {
	opts := &DiffOptions{}
	cmd := &cobra.Command{Use: "diff ROLE", Short: "Show what an agent changed in its worktree against its base",
		Long: `Show what ROLE's agent changed in its worktree (party start --worktree)
against its base: its commits and its uncommitted work, new files
included (ignored ones not), as git diff shows them, with your pager on a
terminal. --stat summarizes; --json lists the files with the lines added
and removed, the commits ahead of the base and whether work is
uncommitted. The agent's own index is left as it is.`,
		Example: `  party diff claude
  party diff codex --stat
  party diff claude --json`,
		Args: argsBetween(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Role = args[0]
			return run(c, f, opts, runF, diffRun)
		}}
	cmd.Flags().BoolVar(&opts.Stat, "stat", false, "a summary: the files changed and their lines")
	return cmd
}

func diffRun(ctx context.Context, f *Factory, opts *DiffOptions) error {
	if f.JSON {
		c, err := party.Diff(ctx, f.env(), opts.Role)
		return f.show(err, c, "")
	}
	cmd, done, err := party.DiffCmd(ctx, f.env(), opts.Role, opts.Stat)
	if err != nil {
		return err
	}
	defer done()
	// git pages and colors itself when its stdout is a terminal.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = f.IO.In, f.IO.Out, f.IO.ErrOut
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git diff of %s: %w", opts.Role, err)
	}
	return nil
}

// MergeOptions are the inputs of party merge.
type MergeOptions struct {
	Role string
	party.MergeOptions
}

func newMergeCmd(f *Factory, runF func(context.Context, *MergeOptions) error) *cobra.Command {
	opts := &MergeOptions{}
	cmd := &cobra.Command{Use: "merge ROLE", Short: "Merge an agent's worktree branch into its base branch",
		Long: `Merge ROLE's branch (party start --worktree) into its base branch, in
the main worktree, which must have that branch checked out and no
uncommitted changes. Uncommitted work in the agent's tree is refused:
--commit -m MSG commits it first. A merge that conflicts is aborted,
nothing half-merged is left, and party merge exits 5 (CONFLICT) naming
the files. party merge never pushes.`,
		Example: `  party merge claude
  party merge codex --squash --into main
  party merge claude --commit -m 'fix the parser'`,
		Args: argsBetween(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Role = args[0]
			if c.Flags().Changed("commit") != c.Flags().Changed("message") {
				return fmt.Errorf("%w: --commit and -m MSG go together: the message of the commit of the agent's uncommitted work", party.ErrUsage)
			}
			return run(c, f, opts, runF, mergeRun)
		}}
	var commit bool
	fl := cmd.Flags()
	fl.BoolVar(&commit, "commit", false, "commit the agent's uncommitted work first (with -m)")
	fl.StringVarP(&opts.Commit, "message", "m", "", "the message of that commit")
	fl.BoolVar(&opts.Squash, "squash", false, "make the branch's work one commit")
	fl.StringVar(&opts.Into, "into", "", "the branch to merge into (default: the worktree's base)")
	return cmd
}

func mergeRun(ctx context.Context, f *Factory, opts *MergeOptions) error {
	m, err := party.Merge(ctx, f.env(), opts.Role, opts.MergeOptions)
	if err == nil && m.Commits == 0 && !f.JSON {
		return f.show(nil, m, "%s has nothing %s does not have", m.Branch, m.Into)
	}
	return f.show(err, m, "merged %s into %s: %d commit(s), %s now %s", m.Branch, m.Into, m.Commits, m.Into, shortCommit(m.Head))
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

func newWorktreeCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "worktree", Short: "List and remove the agents' git worktrees",
		Long: `The git worktrees party start --worktree gave a team's agents: each on a
branch party/SESSION/ROLE, in party's data dir. party stop keeps them.`}
	cmd.AddCommand(newWorktreeListCmd(f, nil), newWorktreeRemoveCmd(f, nil), newWorktreePruneCmd(f, nil))
	return cmd
}

// WorktreeListOptions are the inputs of party worktree list.
type WorktreeListOptions struct{}

func newWorktreeListCmd(f *Factory, runF func(context.Context, *WorktreeListOptions) error) *cobra.Command {
	opts := &WorktreeListOptions{}
	return &cobra.Command{Use: "list", Short: "List the team's worktrees: branch, base, commits ahead, uncommitted work, folder",
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, worktreeListRun) }}
}

func worktreeListRun(ctx context.Context, f *Factory, _ *WorktreeListOptions) error {
	trees, err := party.Worktrees(ctx, f.env())
	if err == nil && len(trees) == 0 && !f.JSON {
		fmt.Fprintln(f.IO.ErrOut, "no worktrees here (party start --worktree gives each agent one)")
		return nil
	}
	return showRows(f, err, nil, trees, "ROLE", "BRANCH", "BASE", "STATE", "FOLDER")
}

// WorktreeRemoveOptions are the inputs of party worktree remove.
type WorktreeRemoveOptions struct {
	Role  string
	Force bool
}

func newWorktreeRemoveCmd(f *Factory, runF func(context.Context, *WorktreeRemoveOptions) error) *cobra.Command {
	opts := &WorktreeRemoveOptions{}
	cmd := &cobra.Command{Use: "remove ROLE", Short: "Remove an agent's worktree and its branch",
		Long: `Remove ROLE's worktree and its branch. Refused while it holds work that
would be lost (uncommitted changes, commits its base does not have) or
while the team's agent runs in it; --force removes it all the same.`,
		Args: argsBetween(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Role = args[0]
			return run(c, f, opts, runF, worktreeRemoveRun)
		}}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "remove it even with uncommitted or unmerged work, or an agent in it")
	return cmd
}

func worktreeRemoveRun(ctx context.Context, f *Factory, opts *WorktreeRemoveOptions) error {
	t, err := party.RemoveWorktree(ctx, f.env(), opts.Role, opts.Force)
	return f.show(err, t, "removed %s's worktree %s and branch %s", t.Role, t.Path, t.Branch)
}

// WorktreePruneOptions are the inputs of party worktree prune.
type WorktreePruneOptions struct{}

func newWorktreePruneCmd(f *Factory, runF func(context.Context, *WorktreePruneOptions) error) *cobra.Command {
	opts := &WorktreePruneOptions{}
	return &cobra.Command{Use: "prune", Short: "Remove the team's worktrees that hold no work and no running agent",
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, worktreePruneRun) }}
}

func worktreePruneRun(ctx context.Context, f *Factory, _ *WorktreePruneOptions) error {
	removed, kept, err := party.PruneWorktrees(ctx, f.env())
	if err != nil || f.JSON {
		return f.show(err, struct {
			Removed []party.Tree      `json:"removed"`
			Kept    map[string]string `json:"kept"`
		}{nonNil(removed), kept}, "")
	}
	var b strings.Builder
	for _, t := range removed {
		fmt.Fprintf(&b, "removed %s's worktree %s\n", t.Role, t.Path)
	}
	roles := make([]string, 0, len(kept))
	for r := range kept {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	for _, r := range roles {
		fmt.Fprintf(&b, "kept %s's: %s\n", r, kept[r])
	}
	if b.Len() == 0 {
		b.WriteString("no worktrees\n")
	}
	return f.show(nil, nil, "%s", strings.TrimSuffix(b.String(), "\n"))
}
