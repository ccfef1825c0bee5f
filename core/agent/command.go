package agent

import (
	"errors"
	"fmt"
	"strings"
)

// ErrCommandSyntax is a launch command that cannot be split into words.
var ErrCommandSyntax = errors.New("bad command syntax")

// SplitCommand splits a launch command into argv the way a POSIX shell
// splits words, honouring single quotes, double quotes and backslashes, but
// never expanding anything: no variables, globs or substitutions.
func SplitCommand(s string) ([]string, error) {
	var (
		argv    []string
		cur     strings.Builder
		inWord  bool
		quote   rune
		escaped bool
	)
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				escaped = true
			default:
				cur.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				argv = append(argv, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c quote in %q: %w", quote, s, ErrCommandSyntax)
	}
	if escaped {
		return nil, fmt.Errorf("trailing backslash in %q: %w", s, ErrCommandSyntax)
	}
	if inWord {
		argv = append(argv, cur.String())
	}
	return argv, nil
}
