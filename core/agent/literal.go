package agent

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrInterpreted is a text the agent would run as a command (a shell
// command, a slash command, its quit word) and that cannot be made plain
// text for it.
var ErrInterpreted = errors.New("the agent would run this text as a command")

// Literal returns text as it must be pasted so that the agent takes it as
// plain text for the model, never as a command. Each rule is measured on
// the real agent (docs/agents-reference.md §3; scenarios real_*_literal): the
// padding is white space the agent trims from what it submits, so the
// model still gets the text byte for byte. A text no rule makes plain is
// refused with ErrInterpreted.
func (p Profile) Literal(text string) (string, error) {
	switch p.Kind {
	case Claude:
		// A leading "!" is bash mode (every line runs), a leading "/" a
		// slash command, and "exit", "quit" or ":q" (spaces around them
		// ignored) quit. Claude keeps a leading space, so none of them
		// can be padded away.
		switch t := strings.TrimSpace(text); {
		case strings.HasPrefix(text, "!"):
			return "", fmt.Errorf("claude runs a text starting with %q as shell commands: %w", "!", ErrInterpreted)
		case strings.HasPrefix(text, "/"):
			return "", fmt.Errorf("claude runs a text starting with %q as a slash command: %w", "/", ErrInterpreted)
		case t == "exit" || t == "quit" || t == ":q":
			return "", fmt.Errorf("claude quits on %q: %w", t, ErrInterpreted)
		}
	case Codex:
		// A leading "!" runs in a shell with no approval, a leading "/"
		// is a slash command; after a space, which codex trims, both are
		// plain.
		if strings.HasPrefix(text, "!") || strings.HasPrefix(text, "/") {
			text = " " + text
		}
	case Gemini:
		// A leading "/" opens the command menu, and a full command name
		// runs even after a space: a first word that can be a command is
		// refused, another "/" (a path) is padded like codex's.
		if strings.HasPrefix(strings.TrimLeft(text, " \t"), "/") {
			if first := strings.Fields(text)[0]; geminiCommand.MatchString(first) {
				return "", fmt.Errorf("gemini runs a text starting with %q as a slash command: %w", first, ErrInterpreted)
			}
			if strings.HasPrefix(text, "/") {
				text = " " + text
			}
		}
	default:
		return text, nil
	}
	return padEnd(text), nil
}

// geminiCommand is a word gemini may read as one of its slash commands.
var geminiCommand = regexp.MustCompile(`^/[A-Za-z][A-Za-z0-9_-]*$`)

// padEnd ends text with a space where an agent acts on the word under the
// cursor: "\" before Enter is a newline (claude, gemini), a last word with
// "@" opens a file or agent completion that Enter picks from (all three),
// and a last word "$name" codex's skill menu. All three trim the space
// from what they submit.
func padEnd(text string) string {
	if strings.HasSuffix(text, `\`) {
		return text + " "
	}
	last := text[strings.LastIndexAny(text, " \t\n")+1:]
	if strings.Contains(last, "@") || skillWord.MatchString(last) {
		return text + " "
	}
	return text
}

// skillWord is a last word that opens codex's skill menu.
var skillWord = regexp.MustCompile(`\$[a-z][A-Za-z0-9_-]*$`)
