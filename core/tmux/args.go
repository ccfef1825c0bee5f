package tmux

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// What tmux does to the words of a command line (tmux 3.2 to 3.7, in
// cmd_parse_from_arguments and format_single), and how this package keeps
// every word party hands it from being parsed:
//
//   - An argument ending in ';' ends the command there and loses the ';'
//     (a lone ";" is the separator of two commands), unless the ';' is
//     written "\;". Argv escapes every argument that ends in ';'; the
//     separators this package puts between commands are cmdSep.
//   - The values of new-session -s, new-window -n, -c directories and
//     select-pane -T are expanded as formats ("#{…}", "#(shell command)",
//     "##" for one '#'). They go through Literal, which doubles every '#'.
//   - -e values, option values (set-option) and the words of a pane's
//     command are not expanded. A pane command of one word is run by "sh
//     -c"; Spawn never hands tmux one word.

// cmdSep separates two commands run by one tmux process in an argv built by
// this package; Argv turns it into tmux's ";". It holds a NUL byte, which
// no argument of a real argv can.
const cmdSep = "\x00;"

// EscapeArg returns a written so that tmux hands the command exactly a: a
// trailing ';' becomes "\;", which tmux reads back as ';'.
func EscapeArg(a string) string {
	if strings.HasSuffix(a, ";") {
		return a[:len(a)-1] + `\;`
	}
	return a
}

// Literal returns s for a place where tmux expands formats (session and
// window names, -c directories, titles): every '#' doubled, so tmux's
// expansion gives back s and runs nothing.
func Literal(s string) string { return strings.ReplaceAll(s, "#", "##") }

// ErrName is a session name tmux would not keep as given.
var ErrName = errors.New("bad session name")

// CheckSessionName refuses a session name that tmux would change or that
// party could not target exactly: empty or blank, with ':' or '.' (tmux
// makes them '_'), with a control character, tab, newline, '\' or '$'
// (tmux escapes them with a backslash), not UTF-8, or starting with '='
// (an exact-match target prefix). '#' and ';' are fine: Literal and Argv
// keep them. NewSession also checks the name tmux kept.
func CheckSessionName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return fmt.Errorf("session name %q is blank: %w", name, ErrName)
	case !utf8.ValidString(name):
		return fmt.Errorf("session name %q is not UTF-8: %w", name, ErrName)
	case strings.ContainsAny(name, ":."):
		return fmt.Errorf("session name %q: tmux turns ':' and '.' into '_': %w", name, ErrName)
	case strings.ContainsAny(name, `\$`):
		return fmt.Errorf("session name %q: tmux escapes '\\' and '$' with a backslash: %w", name, ErrName)
	case strings.HasPrefix(name, "="):
		return fmt.Errorf("session name %q starts with '=': %w", name, ErrName)
	case len(name) > 200:
		return fmt.Errorf("session name of %d bytes is too long (200 at most): %w", len(name), ErrName)
	}
	for _, r := range name {
		if unicode.IsControl(r) || r == 0x7f {
			return fmt.Errorf("session name %q holds a control character: %w", name, ErrName)
		}
	}
	return nil
}
