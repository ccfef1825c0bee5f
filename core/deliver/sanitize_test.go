package deliver

import (
	"testing"

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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Sanitize(tt.in))
		})
	}
}
