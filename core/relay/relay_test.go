package relay

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/blocks"
)

// fakePanes answers each send to a role with the next scripted reply; a
// reply of "" stalls (no block in time).
type fakePanes struct {
	replies map[string][]string // role -> block bodies in order, "" = stall
	sent    []string            // "role: text"
	pending map[string]string
}

func (f *fakePanes) Mark(context.Context, string) (map[string]bool, error) {
	return map[string]bool{}, nil
}

func (f *fakePanes) Send(_ context.Context, role, text string) error {
	f.sent = append(f.sent, role+": "+text)
	if text == Nudge {
		return nil
	}
	q := f.replies[role]
	if len(q) == 0 {
		f.pending[role] = ""
		return nil
	}
	f.pending[role], f.replies[role] = q[0], q[1:]
	return nil
}

func (f *fakePanes) Await(_ context.Context, role string, ids []string, _ map[string]bool, _ time.Duration) (*blocks.Block, string, error) {
	body := f.pending[role]
	if body == "" {
		return nil, "last screen of " + role, nil
	}
	// body is "id|text": the block the agent emits.
	id, text, _ := strings.Cut(body, "|")
	for _, want := range ids {
		if want == id {
			return &blocks.Block{Header: blocks.Header{ID: id, To: "X", Type: "t"}, Body: text}, "", nil
		}
	}
	return nil, "wrong block " + id, nil
}

func TestRelayRoundTrip(t *testing.T) {
	fp := &fakePanes{pending: map[string]string{}, replies: map[string][]string{
		"planner":  {"t1-plan|do A", "t1-report|A done"},
		"executor": {"t1-result|did A"},
	}}
	var kinds []string
	r := &Relay{Panes: fp, Log: func(k string, _ map[string]any) { kinds = append(kinds, k) }}
	report, err := r.Run(context.Background(), Task{ID: "t1", Text: "build A", Planner: "planner", Executor: "executor", Rounds: 1, PlanWait: time.Second, ExecWait: time.Second})
	require.NoError(t, err)
	assert.Equal(t, "A done", report)
	require.Len(t, fp.sent, 3)
	assert.Contains(t, fp.sent[1], "executor: TASK t1 PLAN")
	assert.Contains(t, fp.sent[1], "do A")
	assert.Contains(t, fp.sent[2], "did A")
	assert.Equal(t, []string{"sent", "block", "route", "sent", "block", "route", "sent", "block", "report"}, kinds)
}

func TestRelayStallNudgesOnceThenFails(t *testing.T) {
	fp := &fakePanes{pending: map[string]string{}, replies: map[string][]string{"planner": {""}}}
	r := &Relay{Panes: fp}
	_, err := r.Run(context.Background(), Task{ID: "t2", Text: "x", Planner: "planner", Executor: "executor", Rounds: 1, PlanWait: time.Second, ExecWait: time.Second})
	var stall *StallError
	require.ErrorAs(t, err, &stall)
	assert.ErrorIs(t, err, ErrStalled)
	assert.Equal(t, "planner", stall.Role)
	assert.Contains(t, stall.Screen, "last screen of planner")
	assert.Equal(t, []string{"planner: " + TaskPrompt(Task{ID: "t2", Text: "x"}), "planner: " + Nudge}, fp.sent)
}

func TestRelaySecondRoundAndRoundLimit(t *testing.T) {
	task := Task{ID: "t3", Text: "x", Planner: "p", Executor: "e", Rounds: 2, PlanWait: time.Second, ExecWait: time.Second}
	fp := &fakePanes{pending: map[string]string{}, replies: map[string][]string{
		"p": {"t3-plan|one", "t3-plan-2|two", "t3-report|all done"},
		"e": {"t3-result|r1", "t3-result-2|r2"},
	}}
	report, err := (&Relay{Panes: fp}).Run(context.Background(), task)
	require.NoError(t, err)
	assert.Equal(t, "all done", report)

	task.Rounds = 1
	fp = &fakePanes{pending: map[string]string{}, replies: map[string][]string{
		"p": {"t3-plan|one", "t3-plan-2|two"},
		"e": {"t3-result|r1"},
	}}
	_, err = (&Relay{Panes: fp}).Run(context.Background(), task)
	assert.ErrorIs(t, err, ErrRounds)
}

func TestPromptsNeverHoldABlock(t *testing.T) {
	for _, p := range []string{
		TaskPrompt(Task{ID: "t9", Text: "x"}), ExecPrompt("t9", 1, "plan"), ReportPrompt("t9", 1, "res"),
		Primer(ToPlanner), Primer(ToExecutor),
	} {
		found, _ := blocks.Parse(p)
		for _, b := range found {
			assert.False(t, strings.HasPrefix(b.ID, "t9"), "prompt holds a routable block: %q", p)
		}
	}
}
