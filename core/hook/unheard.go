package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/partyhq/party/core/state"
)

// Unheard is the note a hook leaves when it could not record a pane's
// event (a read-only or full state dir): the report it sent the waiters
// listening then, kept for those that start waiting later (the
// supervisor's wait begins once its send returns, after the agent's first
// hooks). It lives beside the session's wake sockets, in the runtime dir,
// not in the state dir that failed; one per pane, the last, removed by the
// pane's next hook that records its event, and all by party stop
// (SweepUnheard).
type Unheard struct {
	At     time.Time    `json:"at"`
	Report state.Report `json:"report"`
}

// unheardSuffix names the directory of a session's notes after its wake
// dir (state.WakeDir).
const unheardSuffix = "-unheard"

// paneID is a tmux pane id: only such names a note.
var paneID = regexp.MustCompile(`^%[0-9]+$`)

// unheardPath is where the note of pane is kept for the session whose state
// dir is stateDir; "" for a pane that is not a pane id or without a
// runtime dir.
func unheardPath(getenv func(string) string, stateDir, pane string) string {
	if !paneID.MatchString(pane) {
		return ""
	}
	dir, err := state.WakeDir(getenv, stateDir)
	if err != nil {
		return ""
	}
	return filepath.Join(dir+unheardSuffix, strings.TrimPrefix(pane, "%")+".json")
}

// NoteUnheard keeps r, of a hook that could not record its event at at,
// for later waiters (LastUnheard). Where even that fails, only the
// waiters listening now know.
func NoteUnheard(getenv func(string) string, stateDir string, at time.Time, r state.Report) {
	path := unheardPath(getenv, stateDir, r.Pane)
	if path == "" {
		return
	}
	b, err := json.Marshal(Unheard{At: at.UTC(), Report: r})
	if err != nil {
		return
	}
	if err := os.Mkdir(filepath.Dir(path), 0o700); err != nil && !os.IsExist(err) {
		return
	}
	_ = state.WriteFile(path, b, 0o600)
}

// ClearUnheard removes the note of pane: its hooks record again.
func ClearUnheard(getenv func(string) string, stateDir, pane string) {
	if path := unheardPath(getenv, stateDir, pane); path != "" {
		_ = os.Remove(path)
	}
}

// LastUnheard returns the report of the last hook of pane that could not
// record its event, when that was at or after since (an earlier one is
// another turn's).
func LastUnheard(getenv func(string) string, stateDir, pane string, since time.Time) (state.Report, bool) {
	path := unheardPath(getenv, stateDir, pane)
	if path == "" {
		return state.Report{}, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return state.Report{}, false
	}
	var u Unheard
	if json.Unmarshal(b, &u) != nil || u.Report.Pane != pane || u.At.Before(since) {
		return state.Report{}, false
	}
	return u.Report, true
}

// SweepUnheard removes the notes of the session whose state dir is
// stateDir (it stopped).
func SweepUnheard(getenv func(string) string, stateDir string) {
	if dir, err := state.WakeDir(getenv, stateDir); err == nil {
		_ = os.RemoveAll(dir + unheardSuffix)
	}
}
