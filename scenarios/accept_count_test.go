package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/mockagents/mocklog"
)

// envelope is a trigger's envelope as party delivers it.
func envelope(id, text string) string {
	return "[BRIDGE_TRIGGER id=" + id + " thread=" + id + "]\n" + text + "\n[/BRIDGE_TRIGGER]"
}

// acceptRun is a run of n triggers that each completed, acked, and
// arrived once at the model, each its own request.
func acceptRun(n int) ([]acceptTrigger, []mocklog.Entry) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var triggers []acceptTrigger
	var log []mocklog.Entry
	for i := range n {
		id := "acc-" + string(rune('a'+i/26)) + string(rune('a'+i%26))
		triggers = append(triggers, acceptTrigger{ID: id, Status: "completed", Reached: true, AckedAt: at, AckSource: "event"})
		log = append(log, mocklog.Entry{Agent: "claude", Seq: i + 1, Mode: "submit", Text: envelope(id, "job")})
	}
	return triggers, log
}

func TestCountArrivalsPassesARunWhereEachTriggerArrivedOnce(t *testing.T) {
	triggers, log := acceptRun(200)
	// Two envelopes merged into one prompt (an agent's queue), Claude's
	// title request repeating a text, a dialog answer: the merged ones
	// count one each, the others not at all.
	log[1].Text = envelope(triggers[1].ID, "job") + "\n" + envelope(triggers[2].ID, "job")
	log[2] = mocklog.Entry{Agent: "claude", Mode: "side", Text: "<session>" + envelope(triggers[2].ID, "job") + "</session>"}
	log = append(log, mocklog.Entry{Agent: "claude", Mode: "dialog", Text: "1"})
	f := countArrivals(triggers, log, nil)
	require.NoError(t, f.check())
	assert.Equal(t, 200, f.Triggers)
	assert.Equal(t, 200, f.ArrivedOnce)
	assert.Equal(t, 100.0, f.AckedPercent)
	assert.Empty(t, f.Arrivals)
}

// The test the issue asks for: a run fed one doubled arrival and one
// lost trigger fails, naming both.
func TestCountArrivalsFailsARunWithADoubledAndALostTrigger(t *testing.T) {
	triggers, log := acceptRun(200)
	doubled, lost := triggers[10].ID, triggers[20].ID
	log = append(log, mocklog.Entry{Agent: "claude", Mode: "queued", Text: envelope(doubled, "job")})
	log[20].Text = "job without its envelope"
	f := countArrivals(triggers, log, nil)
	err := f.check()
	require.Error(t, err)
	assert.Equal(t, []string{doubled}, f.Doubled)
	assert.Equal(t, []string{lost}, f.Lost)
	assert.Equal(t, map[string]int{doubled: 2, lost: 0}, f.Arrivals)
	assert.ErrorContains(t, err, `1 lost: ["`+lost+`"]`)
	assert.ErrorContains(t, err, `1 doubled: ["`+doubled+`"]`)
}

func TestCountArrivalsFailsEachKindOfFailure(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  func(ts []acceptTrigger, log []mocklog.Entry) []mocklog.Entry
		mustNot []string
		want    string
	}{
		{"a doubled arrival in one prompt", func(ts []acceptTrigger, log []mocklog.Entry) []mocklog.Entry {
			log[5].Text += "\n" + envelope(ts[5].ID, "job")
			return log
		}, nil, "1 doubled"},
		{"a doubled arrival steered in", func(ts []acceptTrigger, log []mocklog.Entry) []mocklog.Entry {
			return append(log, mocklog.Entry{Mode: "steer", Text: envelope(ts[5].ID, "job")})
		}, nil, "1 doubled"},
		{"a failed trigger the agent got twice", func(ts []acceptTrigger, log []mocklog.Entry) []mocklog.Entry {
			ts[5].Status, ts[5].Class, ts[5].AckedAt = "failed", "PANE_DEAD", time.Time{}
			return append(log, log[5])
		}, nil, "1 doubled"},
		{"a trigger still open", func(ts []acceptTrigger, log []mocklog.Entry) []mocklog.Entry {
			ts[5].Status = "acked"
			return log
		}, nil, "1 open"},
		{"a trigger still open that never arrived", func(ts []acceptTrigger, log []mocklog.Entry) []mocklog.Entry {
			ts[5].Status, ts[5].AckedAt = "queued", time.Time{}
			return log[:len(log)-1]
		}, nil, "1 lost"},
		{"an envelope of no trigger in the store", func(ts []acceptTrigger, log []mocklog.Entry) []mocklog.Entry {
			return append(log, mocklog.Entry{Mode: "submit", Text: envelope("acc-none", "job")})
		}, nil, `1 lost: ["acc-none"]`},
		{"the operator's draft submitted", func(ts []acceptTrigger, log []mocklog.Entry) []mocklog.Entry {
			return append(log, mocklog.Entry{Agent: "claude", Mode: "submit", Text: "operator draft"})
		}, nil, `1 texts not from a trigger reached an agent: ["claude: operator draft"]`},
		{"a trigger failed before reaching the agent that arrived", func(ts []acceptTrigger, log []mocklog.Entry) []mocklog.Entry {
			ts[5].Status, ts[5].Class, ts[5].Reached, ts[5].AckedAt = "failed", "DEFER_TIMEOUT", false, time.Time{}
			return log
		}, nil, "1 failed before reaching the agent, yet arrived"},
		{"a trigger meant never to reach an agent that arrived", func(ts []acceptTrigger, log []mocklog.Entry) []mocklog.Entry {
			ts[5].Status, ts[5].Class, ts[5].Reached, ts[5].AckedAt = "failed", "THREAD_AUTO_BLOCKED", false, time.Time{}
			return log
		}, []string{"acc-af"}, `1 meant never to reach an agent, yet delivered: ["acc-af"]`},
		{"a trigger meant never to reach an agent that completed", func(ts []acceptTrigger, log []mocklog.Entry) []mocklog.Entry {
			log[5].Text = "" // never arrived
			return log
		}, []string{"acc-af"}, `1 meant never to reach an agent, yet delivered: ["acc-af"]`},
		{"three of 200 not acked", func(ts []acceptTrigger, log []mocklog.Entry) []mocklog.Entry {
			for i := range 3 {
				ts[i].Status, ts[i].Class, ts[i].AckedAt = "failed", "PANE_DEAD", time.Time{}
				log[i].Text = "" // never arrived
			}
			return log
		}, nil, "197 of 200 acked without a person (98.5%), the goal is 99%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			triggers, log := acceptRun(200)
			log = tc.change(triggers, log)
			f := countArrivals(triggers, log, tc.mustNot)
			assert.ErrorContains(t, f.check(), tc.want)
		})
	}
}

func TestCountArrivalsPassesWhatMayHappen(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  func(ts []acceptTrigger, log []mocklog.Entry) []mocklog.Entry
		mustNot []string
	}{
		{"a trigger whose agent died before it reached the model, failed and said", func(ts []acceptTrigger, log []mocklog.Entry) []mocklog.Entry {
			ts[5].Status, ts[5].Class, ts[5].AckedAt = "failed", "PANE_DEAD", time.Time{}
			log[5].Text = "" // never arrived
			return log
		}, nil},
		{"a trigger whose agent died in its turn, failed after it arrived", func(ts []acceptTrigger, log []mocklog.Entry) []mocklog.Entry {
			ts[5].Status, ts[5].Class, ts[5].AckedAt = "failed", "PANE_DEAD", time.Time{}
			return log
		}, nil},
		{"a trigger meant never to reach an agent, failed and never arrived", func(ts []acceptTrigger, log []mocklog.Entry) []mocklog.Entry {
			ts[5].Status, ts[5].Class, ts[5].Reached, ts[5].AckedAt = "failed", "THREAD_AUTO_BLOCKED", false, time.Time{}
			log[5].Text = "" // never arrived
			return log
		}, []string{"acc-af"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			triggers, log := acceptRun(200)
			log = tc.change(triggers, log)
			f := countArrivals(triggers, log, tc.mustNot)
			assert.NoError(t, f.check())
		})
	}
}

func TestEvidenceListsADoubledTriggersArrivalsAndAuditLines(t *testing.T) {
	triggers, log := acceptRun(3)
	id := triggers[1].ID
	log = append(log, mocklog.Entry{Agent: "claude", Pane: "%0", Seq: 9, Mode: "submit", Text: envelope(id, "job")})
	f := countArrivals(triggers, log, nil)
	require.Equal(t, map[string]int{id: 2}, f.Arrivals)
	events := []string{
		`t0 trigger_sent trigger="` + id + `" role="claude"`,
		`t1 trigger_sent trigger="` + triggers[0].ID + `" role="claude"`,
		`t2 trigger_sent trigger="` + id + `x" role="claude"`,
	}
	got := evidence(f.Arrivals, log, events)
	assert.Contains(t, got, id+" arrived 2 times:\n")
	assert.Equal(t, 2, strings.Count(got, "  log "), got)
	assert.Contains(t, got, "claude %0 seq 9 submit")
	assert.Contains(t, got, events[0])
	assert.NotContains(t, got, events[1])
	assert.NotContains(t, got, events[2])
}
