package deliver

import (
	"strings"
	"unicode/utf8"
)

// Sanitize returns text as it will be delivered: CRLF becomes LF, and
// control characters other than tab and LF are removed (ESC included, so a
// payload can never end the bracketed paste early), as are C1 controls and
// DEL: as characters (U+0080-U+009F) and as raw bytes 0x80-0x9F that are
// not part of a UTF-8 character (0x9B is CSI to an 8-bit terminal). Other
// invalid UTF-8 bytes are kept as they are.
func Sanitize(text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			if c := text[i]; c < 0x80 || c > 0x9f {
				b.WriteByte(c)
			}
		case r == '\t' || r == '\n':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			// dropped
		default:
			b.WriteString(text[i : i+size])
		}
		i += size
	}
	return b.String()
}
