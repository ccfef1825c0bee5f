package github

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/task"
)

// Storage names a task store (pm.storage).
const (
	StorageFS     = "fs"
	StorageGitHub = "github"
)

// OpenOptions are the inputs of Open.
type OpenOptions struct {
	Root string // party's state root
	Cwd  string // where to look for the team's link
	// Storage is pm.storage; StorageSet says the user set it (else it is
	// the default, fs).
	Storage    string
	StorageSet bool
	// Repo is --repo; ConfigRepo is pm.repo.
	Repo, ConfigRepo string
	Gh               string   // the gh binary ("gh" when empty)
	Env              []string // gh's environment (nil: this process's)
	Clock            clock.Clock
	// Warn reports a fallback to the file store, and what a command
	// leaves out.
	Warn func(string)
}

// Open finds the team linked from Cwd and opens its store: the file
// store (task.FS) by default; the GitHub store (New) when pm.storage
// says so (gh unusable is an error), or when it is unset
// but a repository is given (--repo, pm.repo), falling back to the files
// with a warning when gh is missing.
func Open(ctx context.Context, o OpenOptions) (task.Store, error) {
	link, err := task.FindLink(o.Cwd)
	if err != nil {
		return nil, err
	}
	dir := task.TeamDir(o.Root, link.ID)
	fs, err := task.OpenFS(ctx, dir, o.Clock)
	if errors.Is(err, task.ErrNotFound) {
		return nil, fmt.Errorf("%s names team %s, which is not in %s: %w", link.Path, link.ID, task.TeamsDir(o.Root), task.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	// A team whose tasks went to GitHub once stays there: a later command
	// without --repo or pm.repo must not read (and number) the files.
	rec, err := ReadRecord(dir)
	if err != nil {
		return nil, err
	}
	repo := cmp.Or(o.Repo, o.ConfigRepo, rec.Repo)
	if rec.Repo != "" && repo != rec.Repo {
		return nil, fmt.Errorf("team %s keeps its tasks on GitHub in %s, not %s; to move it, remove %s: %w",
			link.ID, rec.Repo, repo, filepath.Join(dir, RecordFile), task.ErrInvalid)
	}
	gh := o.Gh
	if gh == "" {
		gh = "gh"
	}
	_, noGh := LookGh(gh, o.Env)
	switch {
	case o.StorageSet && o.Storage == StorageFS:
		return fs, nil
	case o.StorageSet && o.Storage == StorageGitHub:
		if noGh != nil {
			return nil, fmt.Errorf("pm.storage is github, but %s cannot be run (%v); install gh or set pm.storage to fs: %w", gh, noGh, task.ErrUnavailable)
		}
	case repo == "":
		return fs, nil
	case noGh != nil && rec.Repo != "":
		return nil, fmt.Errorf("team %s keeps its tasks on GitHub in %s, but %s cannot be run (%v); install gh: %w", link.ID, rec.Repo, gh, noGh, task.ErrUnavailable)
	case noGh != nil:
		if o.Warn != nil {
			o.Warn(fmt.Sprintf("gh not found: the tasks of %s are kept in files (%s), not on GitHub; install gh or set pm.storage", repo, dir))
		}
		return fs, nil
	}
	team, err := fs.Team(ctx)
	if err != nil {
		return nil, err
	}
	if repo == "" {
		if repo, err = RepoFromGit(ctx, link.Dir); err != nil {
			return nil, err
		}
	}
	st, err := New(ctx, Config{Dir: dir, Team: team, Repo: repo, Gh: o.Gh, Env: o.Env, Now: o.Clock.Now, Clock: o.Clock, Warn: o.Warn})
	if err != nil || rec.Repo == repo {
		return st, err
	}
	return st, WriteRecord(dir, repo)
}
