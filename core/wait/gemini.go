package wait

import (
	"fmt"
	"regexp"
	"strings"
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
