package wait

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/observe"
)

// GeminiScreen is a Source for Gemini CLI turns that end without a hook:
// Gemini runs no AfterAgent when a turn is cancelled (Esc), and says so
// only on screen ("ℹ Request cancelled."). Once that line follows the
// echo of the prompt (" > first line"), the wait ends with ErrInterrupted.
// Deaf (its hook events lost), it also reads the answer off the screen
// once Gemini is idle again: from the first answer line ("✦ ") the turn
// printed after the paste (Marked) to the rule above the input box.
type GeminiScreen struct {
	first  string                 // the prompt's first line
	screen func() (string, error) // captures the pane

	// Profile and Rows read the answer off the screen when Deaf.
	Profile agent.Profile
	Rows    func() (mux.Rows, error)
	mark    *Mark
	answers bool
}

// NewGeminiScreen returns the screen source of prompt.
func NewGeminiScreen(prompt string, screen func() (string, error)) *GeminiScreen {
	first, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	return &GeminiScreen{first: strings.TrimSpace(first), screen: screen}
}

// Marked tells the source where the pane stood before the paste.
func (g *GeminiScreen) Marked(m *Mark) { g.mark = m }

// Deaf has the source read the answer off the screen.
func (g *GeminiScreen) Deaf() { g.answers = g.Rows != nil }

var geminiCancelled = regexp.MustCompile(`^\s*ℹ\s+Request cancelled\.`)

// Check implements Source.
func (g *GeminiScreen) Check() (Result, bool, error) {
	s, err := g.screen()
	if err != nil || g.first == "" {
		return Result{}, false, nil // the event log and the pane check decide
	}
	if g.answers {
		if res, done := g.answer(s); done {
			return res, true, nil
		}
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

// geminiAnswer starts an answer on Gemini's screen.
const geminiAnswer = "✦ "

// answer reads the turn's answer off the screen once Gemini, shown by
// screen, is idle again.
func (g *GeminiScreen) answer(screen string) (Result, bool) {
	st := observe.Read(g.Profile, mux.Pane{}, screen)
	if st.Busy || !st.HasInput || st.Dialog != "" || g.mark == nil {
		return Result{}, false
	}
	rows, err := g.Rows()
	if err != nil {
		return Result{}, false
	}
	from, how := g.mark.start(rows)
	if how != startFound {
		return Result{}, false
	}
	lines := rows.Lines
	start, end := -1, len(lines)
	for i := from; i < len(lines); i++ {
		if start < 0 && strings.HasPrefix(lines[i], geminiAnswer) {
			start = i
		}
		if start >= 0 && rule.MatchString(lines[i]) {
			end = i // the last rule: the input box's top
		}
	}
	if start < 0 {
		return Result{}, false
	}
	// Each model text of the turn is a block of its own: "✦ " and a
	// blank line before it, where the events join them by a newline.
	var body []string
	for i, l := range lines[start:end] {
		if rest, ok := strings.CutPrefix(l, geminiAnswer); ok && i > 0 {
			if n := len(body); n > 0 && strings.TrimSpace(body[n-1]) == "" {
				body = body[:n-1]
			}
			l = "  " + rest
		}
		body = append(body, l)
	}
	return Result{Answer: CleanAnswer(strings.Join(body, "\n")), Via: "screen"}, true
}

// rule is a line of box-drawing dashes.
var rule = regexp.MustCompile(`^\s*─{3,}\s*$`)
