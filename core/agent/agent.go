// Package agent holds the profiles of the agent TUIs party drives: which
// programs they run as, how long to let a paste settle before Enter, and the
// screen patterns that tell an empty input line, a busy agent and a dialog.
package agent

import (
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Kind names an agent family.
type Kind string

// The agent kinds party knows.
const (
	Claude  Kind = "claude"
	Codex   Kind = "codex"
	Gemini  Kind = "gemini"
	Shell   Kind = "shell"
	Generic Kind = "generic"
)

// Profile describes how one kind of agent behaves on screen.
type Profile struct {
	Kind Kind
	// Commands are the pane_current_command values that mean the agent is
	// running. Empty means any command is accepted.
	Commands []string
	// Settle is the pause between the paste and the Enter that submits it.
	Settle time.Duration
	// Prompts are the glyphs that start the input line ("❯", "›", ">").
	// Empty means the input line is unknown and submission is confirmed by
	// the screen changing.
	Prompts []string
	// Placeholders are texts an empty input line shows.
	Placeholders []string
	// Busy matches a screen line shown while the agent works.
	Busy *regexp.Regexp
	// QueueKey is the key that queues a message while the agent is busy
	// (Enter for claude, Tab for codex, whose Enter steers the running turn).
	QueueKey string
}

var shells = []string{"bash", "zsh", "sh", "dash", "fish", "ksh", "tcsh", "csh", "nu", "elvish"}

var profiles = map[Kind]Profile{
	Claude: {
		Kind:     Claude,
		Commands: []string{"claude", "node"},
		Settle:   150 * time.Millisecond,
		Prompts:  []string{"❯"},
		Busy:     regexp.MustCompile(`^\s*[·✢✳✶✻✽*]\s+\S.*…\s*\(.*\)`),
		QueueKey: "Enter",
	},
	Codex: {
		Kind:         Codex,
		Commands:     []string{"codex", "node"},
		Settle:       150 * time.Millisecond,
		Prompts:      []string{"›"},
		Placeholders: []string{"Ask Codex to do anything", "Implement {feature}", "Find and fix a bug in @filename", "Explain this codebase", "Summarize recent commits", "Improve documentation in @filename", "Write tests for @filename"},
		Busy:         regexp.MustCompile(`^\s*•\s+Working\s*\(`),
		QueueKey:     "Tab",
	},
	Gemini: {
		Kind:         Gemini,
		Commands:     []string{"gemini", "node"},
		Settle:       100 * time.Millisecond,
		Prompts:      []string{">"},
		Placeholders: []string{"Type your message or @path/to/file"},
		Busy:         regexp.MustCompile(`\(esc to cancel, \d+s\)`),
		QueueKey:     "Enter",
	},
	Shell: {
		Kind:     Shell,
		Commands: shells,
		Settle:   20 * time.Millisecond,
		QueueKey: "Enter",
	},
	Generic: {
		Kind:     Generic,
		Settle:   100 * time.Millisecond,
		QueueKey: "Enter",
	},
}

// Lookup returns the profile of kind, falling back to Generic.
func Lookup(kind Kind) Profile {
	if p, ok := profiles[kind]; ok {
		return p
	}
	return profiles[Generic]
}

// Infer returns the agent kind of a launch command: its program's base name
// decides (claude, codex, gemini, a known shell), anything else is generic.
// An empty command is the user's shell.
func Infer(argv []string) Kind {
	if len(argv) == 0 {
		return Shell
	}
	prog := filepath.Base(argv[0])
	switch Kind(prog) {
	case Claude, Codex, Gemini:
		return Kind(prog)
	}
	for _, s := range shells {
		if prog == s {
			return Shell
		}
	}
	return Generic
}

// Runs reports whether the pane's current command is this agent. A profile
// without Commands accepts any command.
func (p Profile) Runs(currentCommand string) bool {
	if len(p.Commands) == 0 {
		return true
	}
	for _, c := range p.Commands {
		if c == currentCommand {
			return true
		}
	}
	return false
}

// InputLine finds the agent's input line on screen and returns what is
// typed in it, with placeholders reported as empty. found is false when the
// profile has no prompt glyph or none is on screen.
func (p Profile) InputLine(screen string) (text string, found bool) {
	if len(p.Prompts) == 0 {
		return "", false
	}
	lines := strings.Split(screen, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		rest, ok := p.afterPrompt(lines[i])
		if !ok {
			continue
		}
		if numbered.MatchString(rest) {
			continue // a dialog's highlighted item, not the input line
		}
		for _, ph := range p.Placeholders {
			if rest == ph {
				return "", true
			}
		}
		return rest, true
	}
	return "", false
}

func (p Profile) afterPrompt(line string) (string, bool) {
	l := strings.TrimLeft(line, " \u00a0")
	for _, g := range p.Prompts {
		if !strings.HasPrefix(l, g) {
			continue
		}
		rest := l[len(g):]
		if rest != "" && !strings.HasPrefix(rest, " ") && !strings.HasPrefix(rest, "\u00a0") {
			continue
		}
		return strings.Trim(rest, " \u00a0\t"), true
	}
	return "", false
}

// IsBusy reports whether the screen shows the agent working.
func (p Profile) IsBusy(screen string) bool {
	if p.Busy == nil {
		return false
	}
	for _, l := range strings.Split(screen, "\n") {
		if p.Busy.MatchString(l) {
			return true
		}
	}
	return false
}

var (
	numbered = regexp.MustCompile(`^\d{1,2}\.\s+\S`)
	// caretItem is a highlighted item of a numbered menu: "❯ 1. Yes".
	caretItem = regexp.MustCompile(`^\s*[❯›>▶→]\s*\d{1,2}\.\s+\S`)
	plainItem = regexp.MustCompile(`^\s*\d{1,2}\.\s+\S`)
)

// dialogWindow is how many non-blank lines at the bottom of the screen are
// searched for a menu; older numbered lists in history are not dialogs.
const dialogWindow = 16

// Dialog reports whether a numbered menu or dialog is on screen, returning
// its highlighted line. A menu is a caret-marked numbered item with at least
// one other numbered item near it, within the bottom of the screen.
func Dialog(screen string) (string, bool) {
	var tail []string
	lines := strings.Split(screen, "\n")
	for i := len(lines) - 1; i >= 0 && len(tail) < dialogWindow; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			tail = append([]string{lines[i]}, tail...)
		}
	}
	for i, l := range tail {
		if !caretItem.MatchString(l) {
			continue
		}
		for j := max(0, i-4); j < min(len(tail), i+5); j++ {
			if j != i && plainItem.MatchString(tail[j]) {
				return strings.TrimSpace(l), true
			}
		}
	}
	return "", false
}
