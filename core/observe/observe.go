package observe

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
)

// State is what a pane shows at one moment.
type State struct {
	Pane   mux.Pane
	Screen string
	// Input is the text in the agent's input box, placeholders excluded;
	// HasInput is false when no input box is on screen.
	Input    string
	HasInput bool
	Busy     bool
	Dialog   string // the highlighted line of a dialog on screen
	Menu     bool   // a completion menu is open over the input
}

// Read reads a screen of pane with the agent's profile.
func Read(p agent.Profile, pane mux.Pane, screen string) State {
	s := State{Pane: pane, Screen: screen}
	s.Input, s.HasInput = p.InputLine(screen)
	s.Busy = p.IsBusy(screen)
	s.Dialog, _ = agent.Dialog(screen)
	s.Menu = p.MenuOpen(screen)
	return s
}

// Ready reports whether the agent shows an input box it takes text into:
// it has started and no dialog or menu covers the box. An agent whose
// input box is unknown (no prompt glyph) is ready when it runs.
func (s State) Ready(p agent.Profile) bool {
	if len(p.Prompts) == 0 {
		return true
	}
	return s.HasInput && s.Dialog == "" && !s.Menu
}

// Events reads the agent events of a session's event log.
type Events struct {
	Path string // the session's event log; empty: no events
}

// Mark is the current end of the log: events after it are new.
func (e Events) Mark() int64 {
	if e.Path == "" {
		return 0
	}
	st, err := os.Stat(e.Path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// Submitted reports whether, since mark, the agent in pane announced a
// submission holding text (Claude's UserPromptSubmit, Gemini's
// BeforeAgent): held, not equal, since queued texts arrive merged.
func (e Events) Submitted(pane string, mark int64, text string) bool {
	_, ok := e.SubmittedPrompt(pane, mark, text)
	return ok
}

// SubmittedPrompt is the first prompt holding text that the agent in pane
// announced since mark, as the agent reported it.
func (e Events) SubmittedPrompt(pane string, mark int64, text string) (string, bool) {
	var prompt string
	found := false
	e.Each(pane, mark, func(ev hook.Event) bool {
		if ev.Kind != hook.PromptSubmit {
			return true
		}
		for _, p := range ev.Prompts {
			if agent.ContainsText(p, text) {
				prompt, found = p, true
				return false
			}
		}
		return true
	})
	return prompt, found
}

// Each calls f with every event of pane ("" : of every pane) logged since
// mark, in order, until f returns false. Lines it cannot read are skipped.
func (e Events) Each(pane string, mark int64, f func(hook.Event) bool) {
	if e.Path == "" {
		return
	}
	fh, err := os.Open(e.Path)
	if err != nil {
		return
	}
	defer fh.Close()
	if _, err := fh.Seek(mark, io.SeekStart); err != nil {
		return
	}
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var ev hook.Event
		if json.Unmarshal(sc.Bytes(), &ev) != nil || (pane != "" && ev.Pane != pane) {
			continue
		}
		if !f(ev) {
			return
		}
	}
}

// Young reports whether the process pid started less than d ago, as far
// as /proc tells (elsewhere, or for an unknown pid, it is not young).
func Young(pid int, d time.Duration) bool {
	if pid <= 0 {
		return false
	}
	st, err := os.Stat("/proc/" + strconv.Itoa(pid))
	if err != nil {
		return false
	}
	return time.Since(st.ModTime()) < d
}
