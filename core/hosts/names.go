package hosts

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrName is a host name, SSH destination, program path or remote word
// that is not a plain token.
var ErrName = errors.New("not a plain token")

var (
	// nameRE is a host's name as configuration keys carry it.
	nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)
	// destRE is an SSH destination: user@machine, an alias, an address.
	destRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._@:%+-]{0,254}$`)
	// programRE is the remote party program: a path, absolute or from the
	// remote home.
	programRE = regexp.MustCompile(`^[A-Za-z0-9._/+][A-Za-z0-9._/+-]{0,511}$`)
	// wordRE is a word of a remote command: a subcommand, a flag, a
	// session or role name.
	wordRE = regexp.MustCompile(`^[A-Za-z0-9._/=:@%+-]{1,256}$`)
)

// CheckName says whether name can be a host's name: letters, digits,
// '.', '_' and '-', not starting with '-' or '.', at most 63 bytes.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("host name %q: want letters, digits, '.', '_' or '-', starting with a letter or digit: %w", name, ErrName)
	}
	return nil
}

// CheckDest says whether dest can be an SSH destination: user@machine or
// an alias of ~/.ssh/config, with no leading '-', whitespace, control
// character or shell metacharacter.
func CheckDest(dest string) error {
	if !destRE.MatchString(dest) {
		return fmt.Errorf("SSH destination %q: want user@machine or an alias of ~/.ssh/config (letters, digits, '.', '_', '-', '@', ':', '%%', '+'; no leading '-'): %w", dest, ErrName)
	}
	return nil
}

// CheckProgram says whether p can be the remote party program: a path
// of letters, digits, '.', '_', '-', '+' and '/', not starting with '-'
// (a relative one is found on the remote PATH, or from its home).
func CheckProgram(p string) error {
	if !programRE.MatchString(p) || strings.Contains(p, "//") {
		return fmt.Errorf("remote party program %q: want a path of letters, digits, '.', '_', '-', '+' and '/', not starting with '-': %w", p, ErrName)
	}
	return nil
}

// CheckWord says whether w may be a word of a remote command: a fixed
// word of party's or a validated name, never free text.
func CheckWord(w string) error {
	if !wordRE.MatchString(w) {
		return fmt.Errorf("remote command word %q: only plain tokens may go on a remote command line: %w", w, ErrName)
	}
	return nil
}

// Quote is s as one word of a POSIX shell (sh, bash, dash, zsh, and csh
// for these tokens): single-quoted, each ' in s written as a closing
// quote, an escaped quote and an opening quote. The remote
// command's words are plain tokens already (CheckWord); quoting them
// still means no word is ever split or expanded by the remote shell.
// (core/shellwords.Join quotes for bash, with $'…' escapes a plain sh
// may not know; a remote shell may be any.)
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// RemoteCommand is the remote command line's words for running program
// with args there, each checked (CheckProgram, CheckWord) and quoted
// (Quote).
func RemoteCommand(program string, args ...string) ([]string, error) {
	if err := CheckProgram(program); err != nil {
		return nil, err
	}
	out := []string{Quote(program)}
	for _, a := range args {
		if err := CheckWord(a); err != nil {
			return nil, err
		}
		out = append(out, Quote(a))
	}
	return out, nil
}
