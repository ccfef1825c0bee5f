package mockagents

import (
	"fmt"
	"strings"
	"time"
)

// Words and boxes the personas share: boxes, claude's verbs, durations as
// each agent shows them.

// box is lines in a rounded box w columns wide.
func box(w int, lines ...string) []string {
	inner := w - 4
	out := []string{"╭" + strings.Repeat("─", w-2) + "╮"}
	for _, l := range lines {
		pad := max(0, inner-width(l))
		out = append(out, "│ "+l+strings.Repeat(" ", pad)+" │")
	}
	return append(out, "╰"+strings.Repeat("─", w-2)+"╯")
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return s
}

// The words of claude's busy line and of its turn summary.
var (
	gerunds = []string{"Skedaddling", "Pondering", "Whirring", "Cogitating", "Noodling", "Percolating", "Ruminating",
		"Simmering", "Moseying", "Schlepping", "Unravelling", "Fluttering", "Sock-hopping", "Hatching", "Marinating", "Wrangling"}
	pastVerbs = []string{"Sautéed", "Churned", "Worked", "Brewed", "Cooked", "Baked", "Crunched", "Cogitated", "Mulled"}
)

// shownDur is a duration in whole seconds as the agents show it: 6s,
// 1m 52s, 1h 2m 3s (claude rounds, gemini truncates), or with padded
// minutes and seconds as codex does: 1m 04s, 1h 02m 03s.
func shownDur(d time.Duration, padded bool) string {
	s := int(d / time.Second)
	hms, ms := "%dh %dm %ds", "%dm %ds"
	if padded {
		hms, ms = "%dh %02dm %02ds", "%dm %02ds"
	}
	switch {
	case s >= 3600:
		return fmt.Sprintf(hms, s/3600, s%3600/60, s%60)
	case s >= 60:
		return fmt.Sprintf(ms, s/60, s%60)
	}
	return fmt.Sprintf("%ds", s)
}

func claudeDur(d time.Duration) string { return shownDur(d.Round(time.Second), false) }

func codexDur(d time.Duration) string { return shownDur(d, true) }

func geminiDur(d time.Duration) string { return shownDur(d, false) }
