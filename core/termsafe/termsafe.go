package termsafe

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Text returns s as it may be printed on a terminal: every control
// character except newline and tab is shown as a Go escape (ESC as \x1b,
// BEL as \a, CR as \r, DEL as \x7f, a C1 character as \u009b) and a raw
// byte 0x80-0x9F that is not part of a UTF-8 character as \x9b; a CR right
// before a newline is dropped (CRLF is a line end). Everything else, other
// non-ASCII text and invalid UTF-8 bytes above 0x9F included, is kept
// byte for byte, so printable text is unchanged and Text(Text(s)) ==
// Text(s): an escape is printable ASCII that starts with a backslash,
// which no UTF-8 character continues.
func Text(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			if c := s[i]; isC1(rune(c)) {
				fmt.Fprintf(&b, `\x%02x`, c)
			} else {
				b.WriteByte(c)
			}
		case r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
			// CRLF: the LF follows.
		case control(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// JSON returns encoded JSON (encoding/json's output) with DEL and the C1
// controls, which encoding/json writes raw inside strings, as \u escapes:
// the same value for any JSON decoder, and nothing a terminal acts on
// (encoding/json already escapes the C0 controls). A raw byte 0x80-0x9F
// that is not part of a UTF-8 character, which encoding/json never writes
// but a line read from a file may hold, becomes \ufffd, as a decoder
// reads it. Outside strings JSON is ASCII, so only strings change.
func JSON(b []byte) []byte {
	if !bytes.ContainsFunc(b, func(r rune) bool { return r == 0x7f || isC1(r) }) && utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == 0x7f || isC1(r):
			out = fmt.Appendf(out, `\u%04x`, r)
		case r == utf8.RuneError && size == 1 && isC1(rune(b[i])):
			out = append(out, `\ufffd`...)
		default:
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// control says whether r is shown escaped: C0 but newline and tab, DEL,
// C1.
func control(r rune) bool {
	return (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || isC1(r)
}

func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }

// clean says whether s has nothing to escape (the common case: no copy).
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			// A C1 character is C2 80..C2 9F; a raw byte 0x80-0x9F may
			// also stand alone. Decide by decoding.
			r, size := utf8.DecodeRuneInString(s[i:])
			if isC1(r) || (r == utf8.RuneError && size == 1 && isC1(rune(c))) {
				return false
			}
			i += size - 1
		}
	}
	return true
}
