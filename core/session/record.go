package session

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/worktree"
)

// RecordFile is the file in a session's state dir where Start records
// the session.
const RecordFile = "session.json"

// Record is what Start wrote to RecordFile: the session as started, its
// working directory and how each pane was launched, by role (the review
// coordinator respawns a dead agent from it).
type Record struct {
	Result
	Created time.Time             `json:"created"`
	Cwd     string                `json:"cwd"`
	Launch  map[string]PaneLaunch `json:"launch"`
	// Tokens are the SHA-256 (hex) of each agent pane's runtime token, by
	// role: the supervisor knows its runtimes by them.
	Tokens map[string]string `json:"runtime_tokens,omitempty"`
	// Specs are the --pane specs the team was started with (nil: the
	// default panes) and Team what else it was started with: a team
	// brought back (restore.go) comes back as it was.
	Specs []string    `json:"specs,omitempty"`
	Team  TeamOptions `json:"team"`
	// Stopped is when party stop ended the team. A team that died instead
	// (its tmux server killed, the machine rebooted) has none, and the next
	// party start brings it back.
	Stopped *time.Time `json:"stopped,omitempty"`
	// Earlier are the agents' own sessions of the teams this one replaced
	// (a fresh start over a stored team), the latest first: their
	// transcripts are the agents', and kept.
	Earlier []AgentSession `json:"earlier,omitempty"`
	// Worktrees are the panes' own git worktrees (party start --worktree):
	// kept by party stop, listed, diffed, merged and removed by role.
	Worktrees []worktree.Tree `json:"worktrees,omitempty"`
}

// TeamOptions are what a team was started with besides its panes.
type TeamOptions struct {
	Layout    string `json:"layout,omitempty"`
	Size      string `json:"size,omitempty"`
	Dashboard bool   `json:"dashboard,omitempty"`
	Review    bool   `json:"review,omitempty"`
	Supervise bool   `json:"supervise,omitempty"`
	Notify    bool   `json:"notify,omitempty"`
	Record    string `json:"record,omitempty"`
}

// ReadRecord reads the record of the session whose state dir is stateDir.
func ReadRecord(stateDir string) (Record, error) {
	var r Record
	path := filepath.Join(stateDir, RecordFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// WriteRecord writes the record of the session whose state dir is
// stateDir (Start's, after a runtime got a new token).
func WriteRecord(stateDir string, r Record) error {
	return writeJSONFile(filepath.Join(stateDir, RecordFile), r)
}
