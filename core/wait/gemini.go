package wait

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// GeminiScreen is a Source for Gemini CLI turns that end without a hook:
// Gemini runs no AfterAgent when a turn is cancelled (Esc), and says so
// only on screen ("ℹ Request cancelled."). Once that line follows the
// echo of the prompt (" > first line"), the wait ends with ErrInterrupted.
type GeminiScreen struct {
	first  string                 // the prompt's first line
	screen func() (string, error) // captures the pane
}

// NewGeminiScreen returns the screen source of prompt.
func NewGeminiScreen(prompt string, screen func() (string, error)) *GeminiScreen {
	first, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	return &GeminiScreen{first: strings.TrimSpace(first), screen: screen}
}

var geminiCancelled = regexp.MustCompile(`^\s*ℹ\s+Request cancelled\.`)

// Check implements Source.
func (g *GeminiScreen) Check() (Result, bool, error) {
	s, err := g.screen()
	if err != nil || g.first == "" {
		return Result{}, false, nil // the event log and the pane check decide
	}
	lines := strings.Split(s, "\n")
	echo := -1
	for i := len(lines) - 1; i >= 0; i-- {
		if isEcho(lines[i], g.first) {
			echo = i
			break
		}
	}
	if echo < 0 {
		return Result{}, false, nil
	}
	for _, l := range lines[echo+1:] {
		if geminiCancelled.MatchString(l) {
			return Result{}, true, fmt.Errorf("the turn was cancelled (Esc): %w", ErrInterrupted)
		}
	}
	return Result{}, false, nil
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
