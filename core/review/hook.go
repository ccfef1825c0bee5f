package review

import (
	"os"
	"path/filepath"

	"github.com/partyhq/party/core/hook"
)

// Hooks is what a session's review makes of its agents' hook events
// (hook.Review). Cwd is the folder that role works in, in the session
// whose state dir is given (its worktree, else the session's), to tell
// code edits from others.
type Hooks struct {
	Cwd func(stateDir, role string) (string, error)
}

// Gate returns the gate's denial of the Bash command cmd in the session
// whose state dir is stateDir, "" when it is allowed or there is no review.
func (Hooks) Gate(stateDir, cmd string) string {
	s, err := Current(Dir(stateDir))
	if err != nil {
		return ""
	}
	return Gate(s, cmd)
}

// Signal tells the session's coordinator, if it has one, what a hook
// event means for it: a code edit, or Claude's session id.
func (h Hooks) Signal(stateDir string, ev hook.Event) error {
	dir := Dir(stateDir)
	if _, err := os.Stat(filepath.Join(dir, StateFile)); err != nil {
		return nil
	}
	var sig Event
	switch {
	case ev.Kind == hook.ToolUsed && editTools[ev.Tool]:
		cwd, err := h.Cwd(stateDir, ev.Role)
		if err != nil || !CodeEdit(ev.File, cwd) {
			return err
		}
		sig = Event{Kind: EvEdit, Reason: ev.File}
	case ev.Kind == hook.SessionStart && ev.Session != "":
		sig = Event{Kind: EvSession, Text: ev.Session}
	default:
		return nil
	}
	sig.At = ev.Time
	_, err := WriteSignal(dir, sig)
	return err
}

// editTools are Claude's tools that change files.
var editTools = map[string]bool{"Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true}
