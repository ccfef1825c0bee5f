package mockagents

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

var (
	claudeGlyphs = []string{"·", "✢", "✳", "✶", "✻", "✽"}
	geminiGlyphs = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
)

// live is the bottom region of the screen: status, input and footer, or a
// dialog.
func (e *engine) live() []string {
	var out []string
	secs := int(time.Since(e.busySince).Seconds())
	if e.busy {
		switch e.opt.Persona {
		case "claude":
			hint := " · esc to interrupt"
			if e.opt.NoEscHint {
				hint = ""
			}
			out = append(out, fmt.Sprintf("%s Thinking… (%ds · ↑ 1.2k tokens%s)", claudeGlyphs[e.frame%len(claudeGlyphs)], secs, hint))
		case "codex":
			out = append(out, fmt.Sprintf("• Working (%ds • esc to interrupt)", secs))
		case "gemini":
			out = append(out, fmt.Sprintf("%s Thinking… (esc to cancel, %ds)", geminiGlyphs[e.frame%len(geminiGlyphs)], secs))
		default:
			out = append(out, fmt.Sprintf("working… %ds", secs))
		}
		for _, q := range e.queue {
			first, _, _ := strings.Cut(q.text, "\n")
			out = append(out, "  ⎿ queued: "+clip(first, 60))
		}
	}
	if d := e.dialog; d != nil {
		out = append(out, d.title...)
		caret := "❯"
		if e.opt.Persona == "codex" {
			caret = "›"
		}
		for i, it := range d.items {
			prefix := "  "
			if i == d.sel {
				prefix = caret + " "
			}
			out = append(out, fmt.Sprintf("%s%d. %s", prefix, i+1, it))
		}
		if d.footer != "" {
			out = append(out, "", d.footer)
		}
		return out
	}
	lines := e.inputLines()
	switch e.opt.Persona {
	case "claude":
		rule := strings.Repeat("─", max(e.w, 10))
		out = append(out, rule)
		for i, l := range lines {
			if i == 0 {
				out = append(out, "❯\u00a0"+l)
			} else {
				out = append(out, "  "+l)
			}
		}
		out = append(out, rule, "  ? for shortcuts")
	case "codex":
		if len(lines) == 1 && lines[0] == "" {
			out = append(out, "› Ask Codex to do anything")
		} else {
			for i, l := range lines {
				if i == 0 {
					out = append(out, "› "+l)
				} else {
					out = append(out, "  "+l)
				}
			}
		}
		if e.busy && e.inputText() != "" {
			out = append(out, "  tab to queue message")
		}
		out = append(out, "", "  ? for shortcuts"+strings.Repeat(" ", max(2, min(e.w, 80)-36))+"100% context left")
	case "gemini":
		if len(lines) == 1 && lines[0] == "" {
			out = append(out, " >   Type your message or @path/to/file")
		} else {
			for i, l := range lines {
				if i == 0 {
					out = append(out, " > "+l)
				} else {
					out = append(out, "   "+l)
				}
			}
		}
	default:
		for i, l := range lines {
			if i == 0 {
				out = append(out, "mock> "+l)
			} else {
				out = append(out, "      "+l)
			}
		}
	}
	return out
}

// inputLines is the input as shown: pastes may collapse to a placeholder,
// and only the last lines of a long input are shown.
func (e *engine) inputLines() []string {
	var b strings.Builder
	for _, s := range e.input {
		switch {
		case s.paste && e.opt.Persona == "claude" && (len(s.text) >= 800 || bytes.Count(s.text, []byte("\n")) > 3):
			fmt.Fprintf(&b, "[Pasted text #%d +%d lines]", s.n, bytes.Count(s.text, []byte("\n")))
		case s.paste && e.opt.Persona == "codex" && utf8.RuneCount(s.text) > 1000:
			fmt.Fprintf(&b, "[Pasted Content %d chars]", utf8.RuneCount(s.text))
		default:
			b.Write(s.text)
		}
	}
	lines := strings.Split(strings.ReplaceAll(b.String(), "\t", "    "), "\n")
	if len(lines) > 6 {
		lines = append([]string{"…"}, lines[len(lines)-5:]...)
	}
	for i, l := range lines {
		lines[i] = clip(l, 4*max(e.w, 20))
	}
	return lines
}

// draw writes the screen: new history lines above the live region (inline),
// or the whole screen (alternate screen).
func (e *engine) draw() {
	if e.opt.Replay != nil {
		return // the recording draws the screen
	}
	var b strings.Builder
	live := e.live()
	if e.opt.AltScreen {
		b.WriteString("\x1b[H\x1b[2J")
		room := e.h - rows(live, e.w)
		var top []string
		for i := len(e.history) - 1; i >= 0 && room > 0; i-- {
			room -= rows([]string{e.history[i]}, e.w)
			if room >= 0 {
				top = append([]string{e.history[i]}, top...)
			}
		}
		b.WriteString(strings.Join(append(top, live...), "\r\n"))
		io.WriteString(e.out, b.String())
		return
	}
	b.WriteString("\r")
	if e.liveRows > 1 {
		fmt.Fprintf(&b, "\x1b[%dA", e.liveRows-1)
	}
	b.WriteString("\x1b[J")
	for _, l := range e.history[e.printed:] {
		b.WriteString(l + "\r\n")
	}
	e.printed = len(e.history)
	b.WriteString(strings.Join(live, "\r\n"))
	e.liveRows = rows(live, e.w)
	io.WriteString(e.out, b.String())
}

// rows is how many terminal rows lines take at width w.
func rows(lines []string, w int) int {
	if w <= 0 {
		w = 80
	}
	n := 0
	for _, l := range lines {
		n += max(1, (width(l)+w-1)/w)
	}
	return n
}

// width is the display width of s: wide (CJK, emoji) runes take two cells.
func width(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case r < 0x20:
		case unicode.Is(unicode.Han, r), unicode.Is(unicode.Hangul, r), unicode.Is(unicode.Hiragana, r),
			unicode.Is(unicode.Katakana, r), r >= 0x1F300 && r <= 0x1FAFF, r >= 0xFF00 && r <= 0xFF60:
			n += 2
		default:
			n++
		}
	}
	return n
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
