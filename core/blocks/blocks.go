package blocks

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

const (
	openTag  = "[[POLI:MSG"
	closeTag = "[[/POLI:MSG]]"
)

// Header is the JSON of an opening tag.
type Header struct {
	To   string `json:"to"`
	From string `json:"from,omitempty"`
	Type string `json:"type"`
	ID   string `json:"id"`
	// Re is the id of the block this one answers, when it names it.
	Re string `json:"re,omitempty"`
	// Hop counts how many times a switchboard forwarded the block.
	Hop int `json:"hop,omitempty"`
}

// Block is one complete, well-formed block.
type Block struct {
	Header
	Body string `json:"body"`
	// Line and Col locate the opening tag (1-based) in the text parsed.
	Line int `json:"line"`
	Col  int `json:"col"`
}

// Error is a malformed or unterminated block, located in the text.
type Error struct {
	Line, Col int
	Msg       string
}

func (e Error) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg) }

// StripANSI removes terminal escape sequences (CSI, OSC and two-byte ones)
// and folds CRLF to LF.
func StripANSI(s string) string {
	if strings.IndexByte(s, 0x1b) < 0 && strings.IndexByte(s, '\r') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\r' && i+1 < len(s) && s[i+1] == '\n':
			// dropped: the LF follows
		case c != 0x1b:
			b.WriteByte(c)
		case i+1 >= len(s):
		case s[i+1] == '[': // CSI: parameters, then a final byte @..~
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
		case s[i+1] == ']': // OSC: up to BEL or ESC \
			j := i + 2
			for j < len(s) && s[j] != 0x07 && !(s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\') {
				j++
			}
			if j < len(s) && s[j] == 0x1b {
				j++
			}
			i = j
		default:
			i++ // a two-byte sequence
		}
	}
	return b.String()
}

// Parse returns the complete blocks of text, one per id (the last
// well-formed copy, in order of first appearance), and the problems found.
// A block whose closing tag has not arrived yet is neither.
func Parse(text string) ([]Block, []Error) { return parse(StripANSI(text), false) }

// ParseText is Parse for what the model wrote (an agent's event, rollout
// or transcript), not a screen: a body is taken as it is between the line
// of its opening tag and the line of its closing tag, byte for byte, never
// dedented nor trimmed of anything but the newlines that end those lines.
func ParseText(text string) ([]Block, []Error) { return parse(text, true) }

func parse(text string, exact bool) ([]Block, []Error) {
	var (
		out   []Block
		errs  []Error
		index = map[string]int{}
		lines = &positions{text: text}
	)
	pos := 0
	for {
		i := strings.Index(text[pos:], openTag)
		if i < 0 {
			break
		}
		start := pos + i
		line, col := lines.at(start)
		// The header ends at the first "]]" that closes a JSON object.
		rawHead, bodyStart, ok := header(text, start)
		if !ok {
			if strings.IndexByte(text[start:], '\n') < 0 {
				break // header still arriving
			}
			errs = append(errs, Error{line, col, "opening tag without a JSON header ending in ]]"})
			pos = start + len(openTag)
			continue
		}
		closeAt := strings.Index(text[bodyStart:], closeTag)
		nextOpen := strings.Index(text[bodyStart:], openTag)
		if nextOpen >= 0 && (closeAt < 0 || nextOpen < closeAt) {
			errs = append(errs, Error{line, col, "block not closed before the next opening tag"})
			pos = bodyStart + nextOpen
			continue
		}
		if closeAt < 0 {
			break // body still arriving
		}
		var h Header
		if err := decodeHeader(rawHead, &h); err != nil {
			rawStart := start + strings.Index(text[start:], rawHead)
			hl, hc := lines.at(rawStart + jsonOffset(err))
			errs = append(errs, Error{hl, hc, "bad block header: " + err.Error()})
		} else if h.To == "" || h.ID == "" {
			errs = append(errs, Error{line, col, `block header needs "to" and "id"`})
		} else {
			b := Block{Header: h, Body: body(text[bodyStart:bodyStart+closeAt], exact), Line: line, Col: col}
			if k, seen := index[h.ID]; seen {
				out[k] = b // a redraw: keep the last copy
			} else {
				index[h.ID] = len(out)
				out = append(out, b)
			}
		}
		pos = bodyStart + closeAt + len(closeTag)
	}
	return out, errs
}

// body is a block's text between its tags: on a screen, dedented and
// trimmed (agents draw their answers indented); from the model, as
// written but for the newline after the opening tag and the one before
// the closing tag.
func body(s string, exact bool) string {
	if exact {
		return strings.TrimSuffix(strings.TrimPrefix(s, "\n"), "\n")
	}
	return strings.TrimRight(dedent(strings.Trim(s, "\n")), " \t\n")
}

// header returns the JSON between the opening tag and its "]]", and where
// the body starts. A header is one line; the JSON may itself contain "]]"
// inside strings, so the candidates are tried in order until one ends a
// balanced object.
func header(text string, start int) (string, int, bool) {
	from := start + len(openTag)
	end := strings.IndexByte(text[from:], '\n')
	if end < 0 {
		end = len(text)
	} else {
		end += from
	}
	for off := from; ; {
		j := strings.Index(text[off:end], "]]")
		if j < 0 {
			return "", 0, false
		}
		raw := strings.TrimSpace(text[from : off+j])
		if balanced(raw) {
			return raw, off + j + 2, true
		}
		off += j + 1
	}
}

// balanced reports whether s is a {…} whose braces outside strings balance.
func balanced(s string) bool {
	if !strings.HasPrefix(s, "{") {
		return s == "" || !strings.Contains(s, "{") // let decode report it
	}
	depth, inStr, esc := 0, false, false
	for _, r := range s {
		switch {
		case esc:
			esc = false
		case inStr && r == '\\':
			esc = true
		case r == '"':
			inStr = !inStr
		case !inStr && r == '{':
			depth++
		case !inStr && r == '}':
			depth--
		}
	}
	return depth == 0 && !inStr
}

func decodeHeader(raw string, h *Header) error {
	dec := json.NewDecoder(strings.NewReader(raw))
	if err := dec.Decode(h); err != nil {
		return err
	}
	if dec.More() {
		return &json.SyntaxError{Offset: dec.InputOffset()}
	}
	return nil
}

// jsonOffset is the byte offset of a JSON error within the header.
func jsonOffset(err error) int {
	switch e := err.(type) {
	case *json.SyntaxError:
		return int(max(e.Offset-1, 0))
	case *json.UnmarshalTypeError:
		return int(max(e.Offset-1, 0))
	}
	return 0
}

// positions turns byte offsets into 1-based lines and columns (in runes),
// counting lines incrementally for offsets that only grow.
type positions struct {
	text      string
	off, line int // lines counted up to off
}

func (p *positions) at(i int) (int, int) {
	if i < p.off || p.line == 0 {
		p.off, p.line = 0, 1
	}
	p.line += strings.Count(p.text[p.off:i], "\n")
	p.off = i
	lineStart := strings.LastIndexByte(p.text[:i], '\n') + 1
	return p.line, utf8.RuneCountInString(p.text[lineStart:i]) + 1
}

// dedent removes the indentation all non-blank lines of s share: agents
// draw their answers indented.
func dedent(s string) string {
	lines := strings.Split(s, "\n")
	prefix := ""
	first := true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		switch {
		case first:
			prefix, first = ind, false
		case !strings.HasPrefix(ind, prefix):
			for !strings.HasPrefix(ind, prefix) {
				prefix = prefix[:len(prefix)-1]
			}
		}
	}
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, prefix)
	}
	return strings.Join(lines, "\n")
}
