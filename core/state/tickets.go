package state

import (
	"os"
	"path/filepath"
	"strings"
)

// Queued counts, for each of keys, the callers that hold or wait for it
// (the live tickets of its queue), with one look at the directory.
func (l Locker) Queued(keys ...string) map[string]int {
	out := make(map[string]int, len(keys))
	entries, err := os.ReadDir(l.Dir)
	if err != nil {
		return out
	}
	names := make(map[string]string, len(keys)) // ticket prefix → key
	for _, k := range keys {
		names[lockName(k)+".t"] = k
	}
	for _, e := range entries {
		name := e.Name()
		i := strings.LastIndex(name, ".t")
		if i < 0 {
			continue
		}
		if k, ok := names[name[:i+2]]; ok && held(filepath.Join(l.Dir, name)) {
			out[k]++
		}
	}
	return out
}
