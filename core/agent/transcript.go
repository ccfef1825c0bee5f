package agent

import (
	"io/fs"
	"path/filepath"
	"strings"
)

// CodexRollout is the rollout file where Codex keeps thread id, under
// codexHome/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl, or "" when it
// keeps none.
func CodexRollout(codexHome, id string) string {
	if checkSessionID(id) != nil {
		return ""
	}
	suffix := "-" + id + ".jsonl"
	var found string
	_ = filepath.WalkDir(filepath.Join(codexHome, "sessions"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if name := d.Name(); strings.HasPrefix(name, "rollout-") && strings.HasSuffix(name, suffix) {
			found = path
			return fs.SkipAll
		}
		return nil
	})
	return found
}
