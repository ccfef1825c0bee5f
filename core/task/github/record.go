package github

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/task"
)

// RecordFile, in a team's dir, names the GitHub repository that holds the
// team's tasks once a command put them there: a team whose tasks went to
// GitHub once stays there.
const RecordFile = "store.json"

// Record is the content of RecordFile.
type Record struct {
	Storage string `json:"storage"` // always "github"
	Repo    string `json:"repo"`
}

// ReadRecord reads the record of the team at dir; none is the zero
// record, one that does not parse is task.ErrCorrupt.
func ReadRecord(dir string) (Record, error) {
	var r Record
	path := filepath.Join(dir, RecordFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil {
		return r, fmt.Errorf("%s: %v: %w", path, err, task.ErrCorrupt)
	}
	return r, nil
}

// WriteRecord records that the tasks of the team at dir are kept in repo.
func WriteRecord(dir, repo string) error {
	b, _ := json.Marshal(Record{Storage: "github", Repo: repo})
	return state.WriteFile(filepath.Join(dir, RecordFile), append(b, '\n'), 0o600)
}
