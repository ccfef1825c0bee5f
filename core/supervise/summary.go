package supervise

import (
	"fmt"
	"strings"
)

// SummaryLimit bounds a thread's summary, in bytes.
const SummaryLimit = 4000

// Summary is what a fresh agent is told of thread before it takes a
// trigger over (spawn recovery): the thread's messages and the triggers
// answered in it, newest kept when it is too long, each entry cut to a
// few lines. It says nothing when the thread has no history.
func Summary(thread string, msgs []Message, done []Trigger, limit int) string {
	var entries []string
	for _, m := range msgs {
		entries = append(entries, fmt.Sprintf("- message from %s to %s: %s", m.From, m.To, clip(m.Text)))
	}
	for _, t := range done {
		if t.Status != Completed {
			continue
		}
		line := fmt.Sprintf("- trigger %s to %s: %s", t.ID, t.Role, clip(t.Text))
		if t.Answer != nil {
			line += "\n  answer: " + clip(*t.Answer)
		}
		entries = append(entries, line)
	}
	if len(entries) == 0 {
		return ""
	}
	head := "[BRIDGE_RECOVERY thread=" + thread + "]\nThe agent that worked on this thread stopped; you take it over. What happened in it so far:"
	tail := "[/BRIDGE_RECOVERY]"
	budget := limit - len(head) - len(tail) - 2
	var kept []string
	for i := len(entries) - 1; i >= 0; i-- {
		if budget-len(entries[i])-1 < 0 {
			kept = append(kept, "- (earlier history left out)")
			break
		}
		budget -= len(entries[i]) + 1
		kept = append(kept, entries[i])
	}
	var b strings.Builder
	b.WriteString(head)
	for i := len(kept) - 1; i >= 0; i-- {
		b.WriteString("\n" + kept[i])
	}
	b.WriteString("\n" + tail)
	return b.String()
}

// clip keeps the first lines of s, at most 300 bytes, on one entry.
func clip(s string) string {
	const most = 300
	s = strings.TrimSpace(s)
	if len(s) > most {
		cut := most
		for cut > 0 && s[cut]&0xc0 == 0x80 {
			cut-- // not inside a UTF-8 character
		}
		s = s[:cut] + "…"
	}
	return strings.ReplaceAll(s, "\n", "\n    ")
}
