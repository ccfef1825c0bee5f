package shellwords

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"
)

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"one word", "claude", []string{"claude"}},
		{"blanks", " a\tb \n c ", []string{"a", "b", "c"}},
		{"nothing", "  ", nil},
		{"single quotes", `codex -c 'notify=["a b"]' --no-alt-screen`, []string{"codex", "-c", `notify=["a b"]`, "--no-alt-screen"}},
		{"double quotes", `a "b \"c\" $HOME" d\ e`, []string{"a", `b "c" $HOME`, "d e"}},
		{"empty quotes", `x '' ""`, []string{"x", "", ""}},
		{"quotes inside a word", `a'b c'"d e"f`, []string{"ab cd ef"}},
		{"backslash outside quotes escapes", `C:\tmp\x`, []string{"C:tmpx"}},
		{"backslash in single quotes is literal", `'C:\tmp\x'`, []string{`C:\tmp\x`}},
		{"backslash in double quotes before a letter is literal", `"C:\tmp\x"`, []string{`C:\tmp\x`}},
		{"backslash in double quotes escapes $ ` \" \\", `"\$ \` + "`" + ` \" \\"`, []string{"$ ` \" \\"}},
		{"escaped backslash", `a\\`, []string{`a\`}},
		{"joined lines", "a\\\nb \"c\\\nd\" 'e\\\nf'", []string{"ab", "cd", "e\\\nf"}},
		{"a substitution is literal", `$(x) "$(y)" ` + "`z`", []string{"$(x)", "$(y)", "`z`"}},
		{"variables and globs are literal", `$HOME ${x:-y} *.go ~/x {a,b}`, []string{"$HOME", "${x:-y}", "*.go", "~/x", "{a,b}"}},
		{"operators are words", `a ; b;c && d | e > f (g) &`, []string{"a", ";", "b;c", "&&", "d", "|", "e", ">", "f", "(g)", "&"}},
		{"a comment is words", `a # b #c`, []string{"a", "#", "b", "#c"}},
		{"escaped operators", `a\; 'a\;' "a\;"`, []string{"a;", `a\;`, `a\;`}},
		{"carriage return is a character", "a\rb", []string{"a\rb"}},
		{"utf-8", `é 'ü ß' "日本"`, []string{"é", "ü ß", "日本"}},
		{"unbalanced parens and braces", `${ $(( a) }`, []string{"${", "$((", "a)", "}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SplitCommand(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSplitCommandErrors(t *testing.T) {
	for _, bad := range []string{`a 'b`, `a "b`, `a\`, `"a\"`, `'`, `a \\\`} {
		t.Run(bad, func(t *testing.T) {
			got, err := SplitCommand(bad)
			assert.ErrorIs(t, err, ErrSyntax)
			assert.Nil(t, got)
		})
	}
}

func TestCommands(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want [][]string
	}{
		{"one", "party review request", [][]string{{"party", "review", "request"}}},
		{"a list", "cd /r && party -L x review approve; echo ok", [][]string{{"cd", "/r"}, {"party", "-L", "x", "review", "approve"}, {"echo", "ok"}}},
		{"quoted text is an argument", `echo "party review request"`, [][]string{{"echo", "party review request"}}},
		{"a subshell and a pipe", "(party a | grep b) &", [][]string{{"party", "a"}, {"grep", "b"}}},
		{"a substitution", "x=$(party a) y", [][]string{{"y"}, {"party", "a"}}},
		{"backquotes", "echo `party a`", [][]string{{"echo", "`party a`"}, {"party", "a"}}},
		{"assignments and redirections are not words", "A=1 party a >/dev/null 2>&1", [][]string{{"party", "a"}}},
		{"an expansion is kept as written", `"$HOME/bin/party" a`, [][]string{{"$HOME/bin/party", "a"}}},
		{"conditionals and loops", "if true; then party a; fi; for i in 1; do party b; done",
			[][]string{{"true"}, {"party", "a"}, {"party", "b"}}},
		{"backslashes as in bash", `party C:\tmp\x "C:\tmp\x"`, [][]string{{"party", "C:tmpx", `C:\tmp\x`}}},
		{"a syntax error ends the list", "party a\nparty b; fi\nparty c", [][]string{{"party", "a"}, {"party", "b"}}},
		{"an unclosed quote", `party a "`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Commands(tt.in))
		})
	}
}

// FuzzSplitCommandRoundTrip quotes words as mvdan.cc/sh writes them and
// reads them back.
func FuzzSplitCommandRoundTrip(f *testing.F) {
	f.Add("a", `b c`, `C:\tmp\x`)
	f.Add("$(x)", ";", `'"\`)
	f.Add("#", "", "\n\t")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		var quoted []string
		for _, w := range []string{a, b, c} {
			q, err := syntax.Quote(w, syntax.LangPOSIX)
			if err != nil {
				return // not valid UTF-8, or a byte POSIX cannot quote
			}
			quoted = append(quoted, q)
		}
		got, err := SplitCommand(strings.Join(quoted, " "))
		require.NoError(t, err)
		assert.Equal(t, []string{a, b, c}, got)
	})
}

// FuzzSplitCommandMatchesOracle compares SplitCommand with a scanner that
// states the rules directly.
func FuzzSplitCommandMatchesOracle(f *testing.F) {
	for _, s := range []string{`a "b \"c\" $HOME" d\ e`, `C:\tmp\x "C:\tmp\x"`, "a\\\nb", `x ; # $(y`, `'a\'b`, "\r\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, wantOK := oracle(s)
		got, err := SplitCommand(s)
		require.Equal(t, wantOK, err == nil, "%q: got error %v, want ok %v", s, err, wantOK)
		if wantOK {
			assert.Equal(t, want, got, "%q", s)
		}
	})
}

// oracle splits s by the rules SplitCommand documents: blanks split,
// single quotes keep everything, double quotes let a backslash escape only
// $ ` " \ and newline, outside quotes a backslash escapes anything, an
// escaped newline disappears; an unclosed quote or trailing backslash fails.
func oracle(s string) (words []string, ok bool) {
	var (
		w      strings.Builder
		inWord bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
					if s[i] == '\n' {
						continue
					}
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			inWord = true
		case c == '\\':
			if i+1 == len(s) {
				return nil, false
			}
			i++
			if s[i] != '\n' {
				w.WriteByte(s[i])
				inWord = true
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, true
}

func TestJoinRoundTrips(t *testing.T) {
	argv := []string{"tmux", "-u", "-S", "/tmp/my dir/sock", "attach-session", "-t", "=team:", "it's", "", "a;b", "$HOME", "x\x1by"}
	line := Join(argv)
	assert.Equal(t, `tmux -u -S '/tmp/my dir/sock' attach-session -t '=team:' "it's" '' 'a;b' '$HOME' $'x\x1by'`, line)
	back, err := SplitCommand(strings.ReplaceAll(line, `$'x\x1by'`, "xy"))
	require.NoError(t, err)
	assert.Equal(t, append(argv[:len(argv)-1:len(argv)-1], "xy"), back)
}
