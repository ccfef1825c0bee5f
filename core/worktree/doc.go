// Package worktree gives the agents of a team a git worktree each: a
// checkout of their own, on a branch of their own, so that two agents
// never edit one tree. git does the work, exec'd with argv; nothing here
// goes through a shell.
//
// The parts:
//   - Open finds the repository of a folder and refuses what worktrees do
//     not serve (not a repository, a bare one, one with submodules).
//   - Repo.Create makes a role's worktree from a base, on the branch
//     Branch names, in the folder Path names (outside the repository's
//     tree, under party's data dir); Setup copies the untracked files
//     worktree.copy names and runs worktree.setup in it.
//   - Repo.Changes says what an agent changed against its base (files,
//     lines, commits ahead, uncommitted work), Repo.DiffArgs the git
//     command that shows it with the user's pager.
//   - Repo.Merge merges an agent's branch into the base branch in the main
//     worktree, or refuses and leaves nothing half-merged.
//   - Repo.Remove and Repo.Prune take worktrees away, refusing work that
//     would be lost unless forced.
//
// A team records its worktrees (Tree) in its session record; this package
// keeps no state of its own.
package worktree
