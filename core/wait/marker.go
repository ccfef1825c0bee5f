// Package wait knows when an agent has finished the turn party gave it.
// Most trusted first: the agent's own hook events (Claude Code's
// UserPromptSubmit/Stop, Codex's notify), then a nonce marker the agent is
// asked to print. Waiting is driven by wake-ups (pane output seen by a
// control-mode client, hook events), with a slow poll as a safety net only.
package wait

import (
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
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

// FindMarker reports whether screen holds the marker of nonce, and returns
// the text between the submission and the marker: the answer. The
// submission is found by position, never by the prompt's words: the last
// line before the marker that holds the nonce (the echoed instruction), or
// else the last echo line of the prompt (the agent's prompt glyph, then
// the prompt's first line, or a paste placeholder). With neither on screen
// the answer was cut: err wraps ErrAnswerCut. Wrapped lines are expected
// to be joined already (capture -J).
func FindMarker(screen, nonce, prompt string) (answer string, found bool, err error) {
	re := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(Marker(nonce)) + `($|[^A-Za-z0-9])`)
	lines := strings.Split(screen, "\n")
	at := -1
	for i := len(lines) - 1; i >= 0; i-- {
		if re.MatchString(lines[i]) {
			at = i
			break
		}
	}
	if at < 0 {
		return "", false, nil
	}
	start := -1
	for i := at - 1; i >= 0 && start < 0; i-- {
		if strings.Contains(lines[i], nonce) {
			start = i + 1 // the last line of the echoed instruction
		}
	}
	first, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	for i := at - 1; i >= 0 && start < 0; i-- {
		if isEcho(lines[i], strings.TrimSpace(first)) {
			start = i + 1
		}
	}
	if start < 0 {
		return "", true, fmt.Errorf("marker %s found, but neither the prompt nor its instruction is in the %d lines read: %w", Marker(nonce), len(lines), ErrAnswerCut)
	}
	body := lines[start:at]
	// The marker line may carry answer text before the marker.
	if before := strings.TrimSpace(re.Split(lines[at], 2)[0]); before != "" {
		body = append(body, before)
	}
	return CleanAnswer(strings.Join(body, "\n")), true, nil
}

// isEcho reports whether line echoes a prompt whose first line is first:
// the whole line, after a prompt glyph or a space ("❯ q", " > q",
// "mock> q"), never a word inside other text; or a paste placeholder
// echoed in its place.
func isEcho(line, first string) bool {
	t := strings.TrimRight(strings.TrimLeft(line, " \u00a0"), " \u00a0")
	if pastedEcho.MatchString(t) {
		return true
	}
	if first == "" {
		return false
	}
	if t == first {
		return true
	}
	head, ok := strings.CutSuffix(t, first)
	head = strings.TrimRight(head, " \u00a0")
	if !ok || head == "" || strings.ContainsAny(head, " \u00a0") {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(head)
	return strings.ContainsRune(">❯›$#:", last) // a prompt: "❯", "mock>"
}

// pastedEcho is a paste placeholder echoed in place of a long prompt.
var pastedEcho = regexp.MustCompile(`^(?:[❯›>]\s*)?\[Pasted (?:text|Text|Content)[^\]]*\]`)

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
