package task

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// This file is a placeholder: the GitHub store is built on another branch,
// whose github.go replaces this one.

// GitHubConfig configures the GitHub store.
type GitHubConfig struct {
	Dir  string // the team's dir under the state root (id-map.json lives there)
	Team Team
	Repo string   // owner/name
	Gh   string   // the gh binary ("gh" when empty)
	Env  []string // gh's environment (nil: this process's)
	Now  func() time.Time
}

var errNotBuilt = errors.New("the GitHub store is not built into this party")

// NewGitHub opens the GitHub store. ErrUnavailable when gh is missing,
// unauthenticated or offline.
func NewGitHub(ctx context.Context, c GitHubConfig) (Store, error) {
	return nil, fmt.Errorf("%w: %w", errNotBuilt, ErrUnavailable)
}

// RepoFromGit returns owner/name from the origin remote of the git
// repository at dir.
func RepoFromGit(ctx context.Context, dir string) (string, error) {
	return "", fmt.Errorf("%w: %w", errNotBuilt, ErrUnavailable)
}
