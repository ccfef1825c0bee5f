// Package blocks finds tagged blocks in agent output:
//
//	[[POLI:MSG {"to":"EXECUTER","type":"plan","id":"t1-plan"}]]
//	…body…
//	[[/POLI:MSG]]
//
// It reads captured screen text (ANSI escapes stripped, CRLF folded),
// ignores a block until its closing tag arrives, reports a malformed header
// with its line and column and skips it, and counts a block repeated by
// redraws once, by id, keeping its last well-formed copy. An opener that
// meets another opener before its closer is reported as unterminated and
// abandoned; the later opener starts the block.
package blocks

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
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

var ansi = regexp.MustCompile(`\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])`)

// StripANSI removes terminal escape sequences and folds CRLF to LF.
func StripANSI(s string) string {
	s = ansi.ReplaceAllString(s, "")
	return strings.ReplaceAll(s, "\r\n", "\n")
}

// Parse returns the complete blocks of text, one per id (the last
// well-formed copy, in order of first appearance), and the problems found.
// A block whose closing tag has not arrived yet is neither.
func Parse(text string) ([]Block, []Error) {
	text = StripANSI(text)
	var (
		out   []Block
		errs  []Error
		index = map[string]int{}
	)
	pos := 0
	for {
		i := strings.Index(text[pos:], openTag)
		if i < 0 {
			break
		}
		start := pos + i
		line, col := lineCol(text, start)
		if !strings.Contains(text[start:], "]]") {
			break // header still arriving
		}
		// The header ends at the first "]]" that closes a JSON object.
		rawHead, bodyStart, ok := header(text, start)
		if !ok {
			if !strings.Contains(text[start+len(openTag):], "\n") && !strings.Contains(text[start+len(openTag):], closeTag) {
				break // still arriving
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
			hl, hc := lineCol(text, rawStart+jsonOffset(err))
			errs = append(errs, Error{hl, hc, "bad block header: " + err.Error()})
		} else if h.To == "" || h.ID == "" {
			errs = append(errs, Error{line, col, `block header needs "to" and "id"`})
		} else {
			b := Block{Header: h, Body: strings.TrimRight(dedent(strings.Trim(text[bodyStart:bodyStart+closeAt], "\n")), " \t\n"), Line: line, Col: col}
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

// header returns the JSON between the opening tag and its "]]", and where
// the body starts. The JSON may itself contain "]]" inside strings, so the
// candidates are tried in order until one ends a balanced object.
func header(text string, start int) (string, int, bool) {
	from := start + len(openTag)
	for off := from; ; {
		j := strings.Index(text[off:], "]]")
		if j < 0 {
			return "", 0, false
		}
		raw := strings.TrimSpace(text[from : off+j])
		if balanced(raw) {
			return raw, off + j + 2, true
		}
		if nl := strings.IndexByte(text[from:off+j], '\n'); nl >= 0 {
			return "", 0, false // headers are one line
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

// lineCol returns the 1-based line and column (in runes) of byte offset i.
func lineCol(text string, i int) (int, int) {
	line := strings.Count(text[:i], "\n") + 1
	lineStart := strings.LastIndexByte(text[:i], '\n') + 1
	return line, len([]rune(text[lineStart:i])) + 1
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
