package shellwords

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// ErrSyntax is a command line that cannot be split into words: a quote
// that is never closed, or a trailing backslash.
var ErrSyntax = errors.New("bad command syntax")

// SplitCommand splits s into words the way a POSIX shell splits and
// unquotes them, honouring single quotes, double quotes and backslashes,
// and nothing else: every other character is part of a word, unexpanded
// ("a ; $HOME #x" is the words a, ;, $HOME and #x). Blanks are spaces,
// tabs and newlines. An unclosed quote or a trailing backslash is an error
// wrapping ErrSyntax.
func SplitCommand(s string) ([]string, error) {
	if strings.HasSuffix(s, `\`) && !escaped(s, len(s)-1) {
		return nil, fmt.Errorf("trailing backslash in %q: %w", s, ErrSyntax)
	}
	// The parser reads a copy of s in which every byte but blanks, quotes
	// and backslashes is a letter, so it finds the words, quotes and
	// escapes of s and nothing else; each word is then read from s at the
	// same offsets.
	masked := []byte(s)
	for i, c := range masked {
		if strings.IndexByte(" \t\n'\"\\", c) < 0 {
			masked[i] = 'x'
		}
	}
	var words []string
	p := syntax.NewParser(syntax.Variant(syntax.LangPOSIX))
	for w, err := range p.WordsSeq(bytes.NewReader(masked)) {
		if err != nil {
			return nil, fmt.Errorf("%q: %v: %w", s, err, ErrSyntax)
		}
		words = append(words, unquote(w, s))
	}
	return words, nil
}

// escaped says whether the byte at i follows an escaping backslash.
func escaped(src string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && src[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// Commands returns the simple commands that the bash script src runs, in
// the order they appear (a command substitution after the command holding
// it), at any depth: in lists, pipelines, subshells, groups, conditionals,
// loops and substitutions. Each is its words after quote removal, without
// its assignments and redirections; an expansion is kept as written
// ("$HOME/bin/party"). When src has a syntax error, the commands of the
// statements before it are returned: bash runs those and stops there.
func Commands(src string) [][]string {
	var out [][]string
	p := syntax.NewParser(syntax.Variant(syntax.LangBash))
	for st, err := range p.StmtsSeq(strings.NewReader(src)) {
		if err != nil {
			break // bash runs what came before the error, and stops
		}
		syntax.Walk(st, func(n syntax.Node) bool {
			if call, ok := n.(*syntax.CallExpr); ok && len(call.Args) > 0 {
				words := make([]string, len(call.Args))
				for i, w := range call.Args {
					words[i] = unquote(w, src)
				}
				out = append(out, words)
			}
			return true
		})
	}
	return out
}

// unquote is the text of the word w of src after quote removal, read from
// src at w's offsets; a part that is not literal text or quotes is kept as
// written.
func unquote(w *syntax.Word, src string) string {
	var b strings.Builder
	// text writes src[from:to], literal text, unescaped; the parser may
	// leave an escaped newline between two parts of it.
	text := func(from, to uint, dq bool) {
		b.WriteString(unescape(src[from:to], dq))
	}
	from := w.Pos().Offset()
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			continue
		case *syntax.SglQuoted:
			text(from, p.Pos().Offset(), false)
			if p.Dollar {
				b.WriteString(source(p, src)) // bash's $'...' is an expansion
			} else {
				b.WriteString(src[p.Left.Offset()+1 : p.Right.Offset()])
			}
		case *syntax.DblQuoted:
			text(from, p.Pos().Offset(), false)
			if p.Dollar {
				b.WriteString(source(p, src)) // bash's $"..." is an expansion
				break
			}
			in := p.Left.Offset() + 1
			for _, q := range p.Parts {
				if _, lit := q.(*syntax.Lit); !lit {
					text(in, q.Pos().Offset(), true)
					b.WriteString(source(q, src))
					in = q.End().Offset()
				}
			}
			text(in, p.Right.Offset(), true)
		default:
			text(from, p.Pos().Offset(), false)
			b.WriteString(source(p, src))
		}
		from = p.End().Offset()
	}
	text(from, w.End().Offset(), false)
	return b.String()
}

// source is the text of n as written in src.
func source(n syntax.Node, src string) string {
	return src[n.Pos().Offset():n.End().Offset()]
}

// unescape removes the backslashes of literal text as a POSIX shell does:
// outside quotes each escapes the next character, inside double quotes
// (dq) only $, `, ", \ and newline; an escaped newline is removed.
func unescape(s string, dq bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		next := s[i+1]
		switch {
		case next == '\n':
			i++
		case !dq || strings.IndexByte("$`\"\\", next) >= 0:
			b.WriteByte(next)
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Join is the command line a user can paste into a shell to run argv:
// each word quoted only as much as it needs (bash quoting; a word with
// control characters gets $'…' escapes). A word with a NUL, which no shell
// can pass, is kept single-quoted with the NUL dropped.
func Join(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			q = "'" + strings.ReplaceAll(strings.ReplaceAll(a, "\x00", ""), "'", `'\''`) + "'"
		}
		words[i] = q
	}
	return strings.Join(words, " ")
}
