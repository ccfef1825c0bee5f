package deliver

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestSanitize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello", "hello"},
		{"shell syntax is text", "$(rm -rf /) `x` $HOME end;", "$(rm -rf /) `x` $HOME end;"},
		{"CRLF to LF", "a\r\nb\r\n", "a\nb\n"},
		{"tab and LF kept", "a\tb\nc", "a\tb\nc"},
		{"paste terminator cannot end the paste", "x\x1b[201~y", "x[201~y"},
		{"lone CR, BEL, NUL, DEL removed", "a\rb\x07c\x00d\x7fe", "abcde"},
		{"C1 controls removed", "a\u009bb\u0085c", "abc"},
		{"emoji and CJK kept", "🎉 日本語", "🎉 日本語"},
		{"invalid UTF-8 kept", "a\xffb", "a\xffb"},
		{"raw 8-bit C1 bytes removed", "a\x9b201~b\x85c\x80\x9fd", "a201~bcd"},
		{"raw C1 byte after a lead byte", "\xe2\x9b[201~", "\xe2[201~"},
		{"UTF-8 with 0x80-0x9F continuation bytes kept", "é…€", "é…€"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Sanitize(tt.in))
		})
	}
}

// FuzzSanitize: what Sanitize returns holds no control character but tab
// and LF, neither as a character nor as a raw C1 byte, and sanitizing it
// again changes nothing.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"hello", "x\x1b[201~y", "a\x9bb", "\xe2\x9b[201~", "é…€\r\n", "\xff\xfe", "\u009b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Sanitize(in)
		assert.Equal(t, out, Sanitize(out), "idempotent")
		for i := 0; i < len(out); {
			r, size := utf8.DecodeRuneInString(out[i:])
			if r == utf8.RuneError && size == 1 {
				assert.False(t, out[i] >= 0x80 && out[i] <= 0x9f, "raw C1 byte %#x at %d in %q", out[i], i, out)
			} else {
				assert.False(t, (r < 0x20 && r != '\t' && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f), "control %U at %d in %q", r, i, out)
			}
			i += size
		}
	})
}
