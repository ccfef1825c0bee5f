package wait

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/mux"
)

// markerPrefix starts every completion marker.
const markerPrefix = "PARTY_DONE_"

// nonceAlphabet avoids look-alike characters.
const nonceAlphabet = "abcdefghjkmnpqrstuvwxyz23456789"

// NewNonce returns an unpredictable 12-character nonce.
func NewNonce() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = nonceAlphabet[int(b[i])%len(nonceAlphabet)]
	}
	return string(b[:])
}

// Marker is the line an agent prints when done.
func Marker(nonce string) string { return markerPrefix + nonce }

// Instruction asks the agent to print the marker. It names the marker's
// two halves apart, so that the prompt echoed on screen never contains the
// marker itself: only an agent that follows it can produce the match.
func Instruction(nonce string) string {
	return fmt.Sprintf("\n\n(When you have completely finished, end your reply with one line holding "+
		"the text %s immediately followed by %s, with nothing between them.)", markerPrefix, nonce)
}

// ErrAnswerCut is a marker found whose answer starts above the history
// captured.
var ErrAnswerCut = errors.New("the start of the answer is beyond the captured history")

// instructionTail is the end of the instruction, after the nonce.
const instructionTail = ", with nothing between them.)"

// Mark is where a turn begins on a pane: the pane's rows as they stood
// just before its prompt was pasted, the position of our own paste. What
// the turn prints (the prompt's echo, the answer, the marker) comes after
// the last of those rows still as it was.
type Mark struct {
	History int      `json:"history"` // rows of scrollback then
	First   int      `json:"first"`   // the number of Rows[0] (mux.Rows)
	Rows    []string `json:"rows"`
}

// markContext is how many rows of scrollback a Mark keeps above the
// screen, so that rows the turn leaves alone are known even when the
// screen is all input box.
const markContext = 5

// NewMark reads where pane id stands. It is nil where rows have no
// stable place: the alternate screen (a full-screen program redraws it
// all).
func NewMark(ctx context.Context, m mux.Multiplexer, id string) (*Mark, error) {
	r, err := m.Rows(ctx, id, markContext)
	if err != nil || r.Alt {
		return nil, err
	}
	return &Mark{History: r.History, First: r.First, Rows: r.Raw}, nil
}

// Where the rows read after a mark say its turn begins.
type startKind int

const (
	startFound startKind = iota // at line
	startLost                   // the rows above the paste are not where they were
	startCut                    // above the rows read
)

// start finds in rows, read after m, the first line the turn printed: the
// first row that is no longer as it was. The rows above it must be found
// unchanged (unless it is the pane's very first row); a full scrollback
// drops its oldest tenth at once, so the rows are also looked for that
// many rows (or twice, …) higher. Found nowhere, the scrollback moved
// (cleared, say) and the mark says nothing.
func (m *Mark) start(rows mux.Rows) (int, startKind) {
	if rows.Alt || len(rows.LineOf) != len(rows.Raw) {
		return 0, startLost
	}
	step := max(rows.Limit/10, 1)
	for shift := 0; shift == 0 || m.First+len(m.Rows)-shift > rows.First; shift += step {
		if shift > 0 && (rows.Limit == 0 || rows.History < rows.Limit-step) {
			break // the scrollback never filled: nothing was dropped
		}
		if shift == 0 && rows.History < m.History {
			continue // some rows were dropped, or all of them
		}
		if line, how, ok := m.startAt(rows, m.First-shift, shift > 0); ok {
			return line, how
		}
	}
	return 0, startLost
}

// startAt is start with the mark's rows at number first now; ok is false
// when they are not there. A shifted mark must match on a row that is not
// blank.
func (m *Mark) startAt(rows mux.Rows, first int, shifted bool) (int, startKind, bool) {
	compared, solid := 0, false
	diff := first + len(m.Rows) // nothing changed: the turn is below
	for i, was := range m.Rows {
		at := first + i - rows.First
		if at < 0 {
			continue
		}
		if at >= len(rows.Raw) || rows.Raw[at] != was {
			diff = first + i
			break
		}
		compared++
		solid = solid || strings.TrimSpace(was) != ""
	}
	switch {
	case shifted && !solid:
		return 0, 0, false
	case compared > 0:
	case first < rows.First:
		return 0, startCut, true
	case first > 0 || m.History > 0 || shifted:
		// The first row compared already differs: the rows moved.
		return 0, 0, false
	}
	// else the pane's very first row changed: the turn starts there.
	at := diff - rows.First
	if at >= len(rows.Raw) {
		return len(rows.Lines), startFound, true
	}
	return rows.LineOf[at], startFound, true
}

// FindTurn reports whether the marker of nonce is in rows (read after
// mark, with their scrollback) and returns the answer to prompt: what the
// agent printed between the echo of the prompt and the marker. The turn
// is found by what only it has, never by the prompt's words elsewhere on
// screen: its lines start at the position of the paste (mark); its echo
// ends at the first line there holding the nonce (the echoed
// instruction), or, where the agent shortened the echo ("[N chars]"), is
// the first line printed there. A nil mark, or one the rows cannot place
// (the scrollback moved), leaves the nonce alone: the first line holding
// it. A start that cannot be found in the rows read wraps ErrAnswerCut.
func FindTurn(rows mux.Rows, mark *Mark, nonce, prompt string) (answer string, found bool, err error) {
	lines := rows.Lines
	from, how := 0, startLost
	if mark != nil {
		from, how = mark.start(rows)
	}
	at := lastMarker(lines, nonce, from)
	if at < 0 {
		return "", false, nil
	}
	if how == startCut {
		return "", true, fmt.Errorf("marker %s found, but the turn began above the %d lines read: %w", Marker(nonce), len(lines), ErrAnswerCut)
	}
	start := echoEnd(lines, nonce, from, at)
	if start >= 0 {
		start = reecho(lines, nonce, prompt, start, at)
	} else if how == startFound {
		start = shortEcho(lines, prompt, from, at)
	}
	if start < 0 {
		return "", true, fmt.Errorf("marker %s found, but the prompt's echo is not in the %d lines read: %w", Marker(nonce), len(lines), ErrAnswerCut)
	}
	return answerBetween(lines, nonce, start, at), true, nil
}

// shortEcho is where the answer starts when the echo of the prompt holds
// no nonce (the agent shortened it): after the first line printed at the
// paste, or right there when the line above it, already on screen at the
// paste, is the echo (a program that showed the prompt where it was typed).
func shortEcho(lines []string, prompt string, from, at int) int {
	first, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	if from > 0 && isEcho(lines[from-1], strings.TrimSpace(first)) {
		return from
	}
	for from < at && strings.TrimSpace(lines[from]) == "" {
		from++
	}
	return min(from+1, at)
}

// reecho skips, at start, the agent printing the whole prompt once more
// right after its echo (a program that echoes its input under the line it
// was typed on): those lines are the echo too, not the answer.
func reecho(lines []string, nonce, prompt string, start, at int) int {
	end := echoEnd(lines, nonce, start, at)
	if end < 0 {
		return start
	}
	if agent.Squeeze(strings.Join(lines[start:end], "\n")) == agent.Squeeze(prompt) {
		return end
	}
	return start
}

// FindMarker is FindTurn on a capture with no mark: the echoed
// instruction (the first line holding the nonce) starts the answer.
func FindMarker(screen, nonce, prompt string) (answer string, found bool, err error) {
	return FindTurn(mux.Rows{Lines: strings.Split(screen, "\n")}, nil, nonce, prompt)
}

// markerLine matches a line holding the marker of a nonce.
func markerLine(nonce string) *regexp.Regexp {
	return regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(Marker(nonce)) + `($|[^A-Za-z0-9])`)
}

// lastMarker is the index of the last line at or after from holding the
// marker of nonce, or -1.
func lastMarker(lines []string, nonce string, from int) int {
	re := markerLine(nonce)
	for i := len(lines) - 1; i >= from; i-- {
		if re.MatchString(lines[i]) {
			return i
		}
	}
	return -1
}

// echoEnd is the index of the line after the echoed instruction: the
// first line in [from, at) holding the nonce, with the rest of the
// instruction where the agent broke it onto the next lines; -1 when no
// line there holds the nonce.
func echoEnd(lines []string, nonce string, from, at int) int {
	tail := agent.Squeeze(instructionTail)
	for i := from; i < at; i++ {
		_, after, ok := strings.Cut(lines[i], nonce)
		if !ok {
			continue
		}
		got, j := agent.Squeeze(after), i+1
		for j < at && j <= i+3 && got != tail && strings.HasPrefix(tail, got) {
			next := agent.Squeeze(lines[j])
			if next == "" || !strings.HasPrefix(tail, got+next) {
				break
			}
			got, j = got+next, j+1
		}
		return j
	}
	return -1
}

// answerBetween is the answer in lines[start:at] and the text before the
// marker on line at.
func answerBetween(lines []string, nonce string, start, at int) string {
	body := append([]string(nil), lines[start:at]...)
	if before := strings.TrimSpace(markerLine(nonce).Split(lines[at], 2)[0]); before != "" {
		body = append(body, before)
	}
	return CleanAnswer(strings.Join(body, "\n"))
}

// chrome matches agent UI lines that are never part of an answer: rules,
// prompt lines, status footers and finished-turn lines (claude's
// "✻ Sautéed for 6s" with its random verb, codex's "Worked for 3s • 12:05").
// A line is dropped only for being such chrome, never for what an answer
// says ("> " quotes stay).
var chrome = regexp.MustCompile(`^\s*(─{3,}|\? for shortcuts.*|\d+% context left.*|[✻✢✳✶✽·*]\s+\S+ed for \d.*|Worked for .*)$`)

// answerGlyphs start an answer on the agents' screens: claude's ● (⏺ in
// older builds), codex's •, gemini's ✦; the answer's further lines are
// indented by two.
var answerGlyphs = []string{"● ", "⏺ ", "• ", "✦ "}

// CleanAnswer trims agent chrome and blank edges from an answer, and drops
// the answer glyph with the indent it gives the answer's further lines.
func CleanAnswer(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if chrome.MatchString(l) {
			continue
		}
		keep = append(keep, strings.TrimRight(l, " \u00a0"))
	}
	for i, l := range keep {
		if strings.TrimSpace(l) == "" {
			continue
		}
		for _, g := range answerGlyphs {
			if rest, ok := strings.CutPrefix(l, g); ok {
				keep[i] = rest
				for j := i + 1; j < len(keep); j++ {
					keep[j] = strings.TrimPrefix(keep[j], "  ")
				}
				break
			}
		}
		break
	}
	return strings.Trim(strings.Join(keep, "\n"), "\n")
}
