package task

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
)

// SessionsIn returns the party sessions, given as name -> state dir, that
// were started in dir or below it (the working directory recorded in
// their session.json) where no other link is nearer, in name order: the
// sessions of the team linked in dir. A state dir without a readable
// session.json is left out.
func SessionsIn(dir string, stateDirs map[string]string) []string {
	dir = filepath.Clean(dir)
	var out []string
	for name, sd := range stateDirs {
		b, err := os.ReadFile(filepath.Join(sd, "session.json"))
		if err != nil {
			continue
		}
		var rec struct {
			Cwd string `json:"cwd"`
		}
		if json.Unmarshal(b, &rec) != nil || rec.Cwd == "" {
			continue
		}
		if l, err := FindLink(rec.Cwd); err == nil && l.Dir == dir {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
