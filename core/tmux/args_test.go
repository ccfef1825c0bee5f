package tmux

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tmuxCommands splits the command words of a tmux argv the way tmux 3.2 to
// 3.7 does (cmd_parse_from_arguments): an argument ending in ';' ends a
// command, unless the ';' follows a backslash, which stands for ';'.
func tmuxCommands(words []string) [][]string {
	var cmds [][]string
	var cur []string
	for _, w := range words {
		end := false
		if strings.HasSuffix(w, ";") {
			w = w[:len(w)-1]
			if strings.HasSuffix(w, `\`) {
				w = w[:len(w)-1] + ";"
			} else {
				end = true
			}
		}
		if !end || w != "" {
			cur = append(cur, w)
		}
		if end {
			if len(cur) > 0 {
				cmds = append(cmds, cur)
			}
			cur = nil
		}
	}
	if len(cur) > 0 {
		cmds = append(cmds, cur)
	}
	return cmds
}

// expandFormat is tmux's format expansion of s as far as party's inputs
// need it: "##" is one '#'; any other '#' starts something tmux would
// expand or run, and is reported as not literal.
func expandFormat(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '#' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '#' {
			b.WriteByte('#')
			i++
			continue
		}
		return "", false
	}
	return b.String(), true
}

func TestArgvKeepsEveryWord(t *testing.T) {
	tests := []struct {
		name string
		word string
	}{
		{"lone separator", ";"},
		{"trailing separator", "a;"},
		{"escaped separator", `a\;`},
		{"two", ";;"},
		{"run-shell after a separator", `; run-shell "touch /tmp/p"`},
		{"comment", "# x"},
		{"braces", "{"},
		{"quotes", `"a'b"`},
		{"backslash", `\`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Socket{Name: "s"}, nil)
			argv := c.Argv("new-window", "--", "prog", tt.word, "end")
			assert.Equal(t, [][]string{{"new-window", "--", "prog", tt.word, "end"}}, tmuxCommands(argv[4:]))
		})
	}
}

func TestLiteralIsNotExpanded(t *testing.T) {
	for _, s := range []string{"#(touch /tmp/p)", "c##d", "#{session_name}", "a#", "#"} {
		got, ok := expandFormat(Literal(s))
		assert.True(t, ok, s)
		assert.Equal(t, s, got)
	}
}

func TestNewSessionEscapesNameAndDirectory(t *testing.T) {
	r := newStub(t, stub{})
	c := New(Socket{Name: "s"}, r)
	fsep, _ := c.seps()
	r.stubs[0].out = []byte("%0" + fsep + "#(touch p);\n")
	id, err := c.NewSession(context.Background(), "#(touch p);", 80, 24, Spawn{Cwd: "/w/#(x)", Argv: []string{"a", "b;"}},
		Option{Target: "=#(touch p);:", Name: "@x", Value: "v;"})
	require.NoError(t, err)
	assert.Equal(t, "%0", id)
	cmds := tmuxCommands(r.calls[0].argv[4:])
	require.Len(t, cmds, 2)
	assert.Equal(t, []string{"-s", "##(touch p);"}, cmds[0][5:7])
	assert.Equal(t, []string{"-c", "/w/##(x)", "--", "a", "b;"}, cmds[0][11:])
	assert.Equal(t, []string{"set-option", "-t", "=#(touch p);:", "@x", "v;"}, cmds[1])
}

func TestNewSessionRefusesARenamedSession(t *testing.T) {
	r := newStub(t, stub{}, stub{})
	c := New(Socket{Name: "s"}, r)
	fsep, _ := c.seps()
	r.stubs[0].out = []byte("%0" + fsep + "a_b\n")
	_, err := c.NewSession(context.Background(), "a b", 80, 24, Spawn{})
	assert.ErrorIs(t, err, ErrName)
	assert.Equal(t, []string{"kill-session", "-t", "%0"}, r.calls[1].argv[4:])
}

func TestCheckSessionName(t *testing.T) {
	for _, ok := range []string{"t", "team a", "a#b", "#(touch /tmp/p)", "x;", "é世", "a|b", "a&b", `"q"`} {
		assert.NoError(t, CheckSessionName(ok), ok)
	}
	for _, bad := range []string{"", "  ", "a:b", "a.b", "a\nb", "a\tb", "a\x1bb", `a\b`, "$x", "=x", "\xff"} {
		assert.ErrorIs(t, CheckSessionName(bad), ErrName, "%q", bad)
	}
}

// FuzzTmuxWords round-trips what party hands tmux: any session name,
// directory and command words come out of tmux's command splitting and
// format expansion exactly as they went in, as one command each.
func FuzzTmuxWords(f *testing.F) {
	for _, seed := range [][3]string{
		{"t", "/w", "hello"},
		{"#(touch /tmp/p)", "/tmp/#(touch p)", `; run-shell "touch /tmp/p"`},
		{"a;", "c##d", `a\;`},
		{"x", "/d;", ";"},
		{"{", "#{pane_id}", "#"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, name, dir, word string) {
		if strings.ContainsRune(name+dir+word, 0) {
			t.Skip("no argv holds a NUL byte")
		}
		c := New(Socket{Name: "s"}, nil)
		spawn := Spawn{Cwd: dir, Env: []string{"K=" + word}, Argv: []string{"prog", word, word + ";"}}
		args := append([]string{"new-session", "-s", Literal(name)}, spawn.args()...)
		args = append(append(args, cmdSep), setArgs([]Option{{Target: SessionTarget(name), Name: "@v", Value: word}})...)
		cmds := tmuxCommands(c.Argv(args...)[4:])
		require.Len(t, cmds, 2, "argv %q", c.Argv(args...))
		got, ok := expandFormat(cmds[0][2])
		assert.True(t, ok && got == name, "name %q arrives as %q", name, cmds[0][2])
		i := 3
		if dir != "" {
			got, ok := expandFormat(cmds[0][4])
			assert.True(t, ok && got == dir, "dir %q arrives as %q", dir, cmds[0][4])
			i = 5
		}
		assert.Equal(t, []string{"-e", "K=" + word, "--", "prog", word, word + ";"}, cmds[0][i:])
		assert.Equal(t, []string{"set-option", "-t", SessionTarget(name), "@v", word}, cmds[1])
	})
}
