package termsafe

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain ASCII", "The answer is 42.", "The answer is 42."},
		{"non-ASCII kept exact", "● ✦ é 中 🎉 …€", "● ✦ é 中 🎉 …€"},
		{"newline and tab kept", "a\tb\nc\n", "a\tb\nc\n"},
		{"CRLF is a line end", "a\r\nb\r\n", "a\nb\n"},
		{"lone CR escaped", "100%\rdone", `100%\rdone`},
		{"backslashes kept", `C:\tmp\x1b`, `C:\tmp\x1b`},
		{"CSI clear screen", "a\x1b[2Jb", `a\x1b[2Jb`},
		{"CSI colours", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"OSC 52 clipboard, BEL terminated", "\x1b]52;c;cm0gLXJmIH4=\x07", `\x1b]52;c;cm0gLXJmIH4=\a`},
		{"OSC 0 title, ST terminated", "\x1b]0;pwned\x1b\\", `\x1b]0;pwned\x1b\`},
		{"DCS", "\x1bPq#0;2;0;0;0\x1b\\", `\x1bPq#0;2;0;0;0\x1b\`},
		{"SS2 and SS3", "\x1bNa\x1bOb", `\x1bNa\x1bOb`},
		{"BEL, NUL, backspace, DEL", "\x07\x00\b\x7f", `\a\x00\b\x7f`},
		{"C1 CSI as a character", "a\u009b2Jb", `a\u009b2Jb`},
		{"C1 OSC and ST as characters", "\u009d0;t\u009c", `\u009d0;t\u009c`},
		{"NEL as a character", "a\u0085b", `a\u0085b`},
		{"raw 8-bit CSI byte", "a\x9b2Jb", `a\x9b2Jb`},
		{"raw C1 bytes", "\x80\x9f", `\x80\x9f`},
		{"raw C1 byte after a lead byte", "\xe2\x9b[2J", "\xe2" + `\x9b[2J`},
		{"other invalid UTF-8 kept", "a\xffb\xc0", "a\xffb\xc0"},
		{"continuation bytes 0x80-0x9F of a character kept", "é…€ \u00a0", "é…€ \u00a0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Text(tt.in)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, got, Text(got), "idempotent")
		})
	}
}

func TestJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string // a value to encode
		want string // its encoding, after JSON
	}{
		{"plain", "é 中", `"é 中"`},
		{"C0 escaped by encoding/json", "\x1b]52;c;x\x07", `"\u001b]52;c;x\u0007"`},
		{"C1 and DEL escaped", "a\u009b2J\u0085\x7f", `"a\u009b2J\u0085\u007f"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.in)
			require.NoError(t, err)
			got := JSON(b)
			assert.Equal(t, tt.want, string(got))
			var back string
			require.NoError(t, json.Unmarshal(got, &back))
			assert.Equal(t, tt.in, back, "exact for a decoder")
		})
	}
	t.Run("a raw C1 byte read from a file", func(t *testing.T) {
		assert.Equal(t, `{"a":"x\ufffdy"}`, string(JSON([]byte("{\"a\":\"x\x9by\"}"))))
	})
}

// unsafe reports the first thing in s a terminal would act on: ESC, BEL,
// another C0 control but newline and tab, DEL, a C1 character or a raw
// byte 0x80-0x9F; -1 when there is none.
func unsafe(s string) int {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			if s[i] >= 0x80 && s[i] <= 0x9f {
				return i
			}
		} else if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return i
		}
		i += size
	}
	return -1
}

// FuzzText: the output holds nothing a terminal acts on, Text is
// idempotent, text with nothing to escape is unchanged, and no character
// of the input is lost (each printable rune of the input is in the output,
// in order).
func FuzzText(f *testing.F) {
	for _, s := range []string{"hello", "a\x1b[2Jb", "\x1b]52;c;eA==\x07", "\x1b]0;t\x1b\\", "\u009b", "\x9b", "\xe2\x9b[", "é…€\r\n", "\xff\xfe", "● ✦ 中"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Text(in)
		require.Equal(t, -1, unsafe(out), "%q -> %q", in, out)
		assert.Equal(t, out, Text(out), "idempotent")
		if unsafe(in) < 0 {
			assert.Equal(t, in, out, "nothing to escape: unchanged")
		}
		assert.NotContains(t, out, "\x1b")
		assert.NotContains(t, out, "\x07")
		rest := out
		for _, r := range in {
			if r == utf8.RuneError || unsafe(string(r)) >= 0 {
				continue
			}
			i := strings.IndexRune(rest, r)
			require.GreaterOrEqual(t, i, 0, "%q lost from %q -> %q", r, in, out)
			rest = rest[i+utf8.RuneLen(r):]
		}
	})
}

// FuzzJSON: what JSON makes of encoding/json's output decodes to the same
// value and holds no DEL, C1 or raw C0.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{"hello", "a\u009bb", "\x7f", "\x1b]52;c;x\x07", "\x9b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		b, err := json.Marshal(map[string]string{"k": in})
		require.NoError(t, err)
		out := JSON(b)
		assert.Equal(t, -1, unsafe(string(out)), "%q", out)
		var back, want map[string]string
		require.NoError(t, json.Unmarshal(out, &back))
		require.NoError(t, json.Unmarshal(b, &want))
		assert.Equal(t, want, back)
	})
}
