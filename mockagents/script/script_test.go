package script

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScriptErrors(t *testing.T) {
	tests := []struct{ script, want string }{
		{"  think 1s\n", "s:1:3: step \"think\" before any 'on' rule"},
		{"on *\n  think soon\n", "s:2:9: think: bad duration \"soon\""},
		{"on /(/\n", "s:1:4: error parsing regexp"},
		{"on *\n  dance\n", "s:2:3: unknown step \"dance\""},
		{"on *\n  crash 300\n", "s:2:9: crash: exit status \"300\" is not 0-255"},
	}
	for _, tt := range tests {
		_, err := Parse("s", tt.script)
		require.Error(t, err, tt.script)
		assert.True(t, strings.HasPrefix(err.Error(), tt.want), "got %q, want prefix %q", err, tt.want)
	}
	s, err := Parse("s", "# c\non /question (\\w+)/\n  say answer $1\non *\n  echo\n")
	require.NoError(t, err)
	steps, groups := s.Plan("question two")
	assert.Equal(t, "answer two", Expand(steps[0].Arg, groups))
	steps, _ = s.Plan("other")
	assert.Equal(t, "echo", steps[0].Kind)
}

func TestScriptSayEscapes(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"newline, tab, backslash", `a\nb\tc\\n`, "a\nb\tc\\n"},
		{"bytes", `\x1b]52;c;eA==\x07 \xc2\x9b2J \x9b`, "\x1b]52;c;eA==\x07 \u009b2J \x9b"},
		{"not an escape", `C:\tmp\xZZ \x1 \q \`, "C:\tmp\\xZZ \\x1 \\q \\"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("s", "on *\n  say "+tt.in+"\n")
			require.NoError(t, err)
			steps, _ := s.Plan("x")
			assert.Equal(t, tt.want, steps[0].Arg)
		})
	}
}

func TestWriteArgs(t *testing.T) {
	s, err := Parse("s", "on /make (\\w+)/\n  write out/$1.txt line\\n$1\\x21\n")
	require.NoError(t, err)
	steps, groups := s.Plan("make report")
	path, text := steps[0].WriteArgs(groups)
	assert.Equal(t, "out/report.txt", path)
	assert.Equal(t, "line\nreport!", text)
}
