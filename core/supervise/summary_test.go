package supervise

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSummary(t *testing.T) {
	answer := "fixed in abc123"
	msgs := []Message{{From: "ci", To: "claude", Text: "build 4711 failed"}}
	done := []Trigger{
		{ID: "t1", Role: "claude", Text: "look at run 4711", Status: Completed, Answer: &answer},
		{ID: "t2", Role: "claude", Text: "never answered", Status: TFailed},
	}
	got := Summary("ci", msgs, done, SummaryLimit)
	assert.Equal(t, `[BRIDGE_RECOVERY thread=ci]
The agent that worked on this thread stopped; you take it over. What happened in it so far:
- message from ci to claude: build 4711 failed
- trigger t1 to claude: look at run 4711
  answer: fixed in abc123
[/BRIDGE_RECOVERY]`, got)
	assert.Empty(t, Summary("ci", nil, nil, SummaryLimit), "no history, no summary")

	var many []Message
	for i := 0; i < 100; i++ {
		many = append(many, Message{From: "ci", To: "claude", Text: strings.Repeat("x", 250) + "é"})
	}
	many[99].Text = "the newest"
	got = Summary("ci", many, nil, SummaryLimit)
	assert.LessOrEqual(t, len(got), SummaryLimit)
	assert.Contains(t, got, "(earlier history left out)")
	assert.Contains(t, got, "the newest", "the newest entries are kept")
	long := Summary("ci", []Message{{From: "a", To: "b", Text: strings.Repeat("é", 400)}}, nil, SummaryLimit)
	assert.True(t, strings.Contains(long, "…"))
	assert.True(t, isUTF8(long))
}

func isUTF8(s string) bool { return strings.ToValidUTF8(s, "?") == s }
