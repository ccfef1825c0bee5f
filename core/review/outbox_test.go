package review

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The outbox policy as a table: an outbox, an event at a time, and the
// outbox and actions that follow.
func TestStepOutbox(t *testing.T) {
	down := errors.New("pane dead")
	line := func(kind lineKind, role string, n int) outLine {
		return outLine{Role: role, Text: string(kind) + " line", Kind: kind, N: n}
	}
	dispatch, result := line(lineDispatch, "codex", 1), line(lineReview, "claude", 1)
	question, notice := line(lineQuestion, "codex", 2), line(lineNotice, "claude", 0)
	// waiting is l queued with a wait and a due time.
	waiting := func(l outLine, wait time.Duration, due time.Time) outLine {
		l.Wait, l.Due = wait, due
		return l
	}
	// Facts of the review's moments: review 1 dispatched (findings written
	// or not), at its verdict, gone; exchange 2 open (answered or not).
	dispatched := in(InReview, Dispatched)
	verdict := in(InReview, Verdict)
	asking := in(Implement, "")
	asking.Exchanges = []Exchange{{N: 2, Kind: "prompt"}}
	facts := func(s Status, findings, answered bool) outFacts {
		return outFacts{Status: s, Findings: map[int]bool{1: findings}, Answers: map[int]bool{2: answered}}
	}
	respawned := map[string]time.Time{"codex": at(10)}

	tests := []struct {
		name  string
		in    outbox
		ev    outEvent
		now   time.Time
		want  outbox
		wantA []outAction
	}{
		// Posting: sent at once, or held while a respawned agent starts.
		{"a new line is sent", outbox{}, outEvent{Kind: outPost, Line: dispatch}, at(0),
			outbox{}, []outAction{{Kind: outSend, Line: dispatch}}},
		{"a line to a respawned agent waits out the grace", outbox{Respawned: respawned}, outEvent{Kind: outPost, Line: dispatch}, at(11),
			outbox{Lines: []outLine{waiting(dispatch, 0, at(10).Add(respawnGrace))}, Respawned: respawned}, nil},
		{"after the grace it is sent", outbox{Respawned: respawned}, outEvent{Kind: outPost, Line: dispatch}, at(10).Add(respawnGrace),
			outbox{Respawned: respawned}, []outAction{{Kind: outSend, Line: dispatch}}},
		{"another agent's respawn does not hold it", outbox{Respawned: respawned}, outEvent{Kind: outPost, Line: result}, at(11),
			outbox{Respawned: respawned}, []outAction{{Kind: outSend, Line: result}}},
		{"a respawn is recorded", outbox{}, outEvent{Kind: outRespawned, Role: "codex"}, at(10),
			outbox{Respawned: respawned}, nil},

		// Outcomes: delivered, or failed and due again after a doubling wait.
		{"a sent line is delivered", outbox{}, outEvent{Kind: outSent, Line: result}, at(0),
			outbox{}, []outAction{{Kind: outDelivered, Line: result}}},
		{"the first failure waits retryFirst", outbox{}, outEvent{Kind: outFailed, Line: result, Err: down}, at(0),
			outbox{Lines: []outLine{waiting(result, retryFirst, at(0).Add(retryFirst))}},
			[]outAction{{Kind: outRetry, Line: waiting(result, retryFirst, at(0).Add(retryFirst)), Err: down}}},
		{"the next waits double", outbox{}, outEvent{Kind: outFailed, Line: waiting(result, retryFirst, at(5)), Err: down}, at(5),
			outbox{Lines: []outLine{waiting(result, 2*retryFirst, at(5).Add(2*retryFirst))}},
			[]outAction{{Kind: outRetry, Line: waiting(result, 2*retryFirst, at(5).Add(2*retryFirst)), Err: down}}},
		{"up to retryMax", outbox{}, outEvent{Kind: outFailed, Line: waiting(result, retryMax, at(60)), Err: down}, at(60),
			outbox{Lines: []outLine{waiting(result, retryMax, at(60).Add(retryMax))}},
			[]outAction{{Kind: outRetry, Line: waiting(result, retryMax, at(60).Add(retryMax)), Err: down}}},
		{"a failed line replaces the older one of its kind and number",
			outbox{Lines: []outLine{waiting(dispatch, 0, at(13)), waiting(result, 0, at(13))}}, outEvent{Kind: outFailed, Line: result, Err: down}, at(20),
			outbox{Lines: []outLine{waiting(dispatch, 0, at(13)), waiting(result, retryFirst, at(20).Add(retryFirst))}},
			[]outAction{{Kind: outRetry, Line: waiting(result, retryFirst, at(20).Add(retryFirst)), Err: down}}},
		{"notices never replace each other",
			outbox{Lines: []outLine{waiting(notice, retryFirst, at(5))}}, outEvent{Kind: outFailed, Line: notice, Err: down}, at(3),
			outbox{Lines: []outLine{waiting(notice, retryFirst, at(5)), waiting(notice, retryFirst, at(3).Add(retryFirst))}},
			[]outAction{{Kind: outRetry, Line: waiting(notice, retryFirst, at(3).Add(retryFirst)), Err: down}}},

		// Ticks: due lines that are still owed are sent, the rest wait or go.
		{"a line not due yet waits", outbox{Lines: []outLine{waiting(dispatch, retryFirst, at(5))}}, outEvent{Kind: outTick, Facts: facts(dispatched, false, false)}, at(4),
			outbox{Lines: []outLine{waiting(dispatch, retryFirst, at(5))}}, nil},
		{"a due request is sent again", outbox{Lines: []outLine{waiting(dispatch, retryFirst, at(5))}}, outEvent{Kind: outTick, Facts: facts(dispatched, false, false)}, at(5),
			outbox{}, []outAction{{Kind: outDue, Line: waiting(dispatch, retryFirst, at(5))}}},
		{"a request whose findings are written is not owed", outbox{Lines: []outLine{waiting(dispatch, retryFirst, at(5))}}, outEvent{Kind: outTick, Facts: facts(dispatched, true, false)}, at(5),
			outbox{}, nil},
		{"a request of a review at its verdict is not owed", outbox{Lines: []outLine{waiting(dispatch, retryFirst, at(9))}}, outEvent{Kind: outTick, Facts: facts(verdict, false, false)}, at(5),
			outbox{}, nil},
		{"a due result is sent again", outbox{Lines: []outLine{waiting(result, retryFirst, at(5))}}, outEvent{Kind: outTick, Facts: facts(verdict, true, false)}, at(6),
			outbox{}, []outAction{{Kind: outDue, Line: waiting(result, retryFirst, at(5))}}},
		{"a result the implementer decided on is not owed", outbox{Lines: []outLine{waiting(result, retryFirst, at(5))}}, outEvent{Kind: outTick, Facts: facts(asking, true, false)}, at(6),
			outbox{}, nil},
		{"a result of another review is not owed", outbox{Lines: []outLine{waiting(line(lineReview, "claude", 2), retryFirst, at(5))}}, outEvent{Kind: outTick, Facts: facts(verdict, true, false)}, at(6),
			outbox{}, nil},
		{"an open question is asked again", outbox{Lines: []outLine{waiting(question, retryFirst, at(5))}}, outEvent{Kind: outTick, Facts: facts(asking, false, false)}, at(5),
			outbox{}, []outAction{{Kind: outDue, Line: waiting(question, retryFirst, at(5))}}},
		{"an answered question is not owed", outbox{Lines: []outLine{waiting(question, retryFirst, at(5))}}, outEvent{Kind: outTick, Facts: facts(asking, false, true)}, at(5),
			outbox{}, nil},
		{"a closed question is not owed", outbox{Lines: []outLine{waiting(question, retryFirst, at(5))}}, outEvent{Kind: outTick, Facts: facts(dispatched, false, false)}, at(5),
			outbox{}, nil},
		{"notices and answers are always owed", outbox{Lines: []outLine{waiting(notice, retryFirst, at(5)), waiting(line(linePrompt, "claude", 3), retryFirst, at(5))}},
			outEvent{Kind: outTick, Facts: facts(New(t0, 3), false, false)}, at(5),
			outbox{}, []outAction{{Kind: outDue, Line: waiting(notice, retryFirst, at(5))}, {Kind: outDue, Line: waiting(line(linePrompt, "claude", 3), retryFirst, at(5))}}},
		{"a due line posted to a respawned agent waits out the grace", outbox{Respawned: respawned},
			outEvent{Kind: outPost, Line: waiting(dispatch, retryFirst, at(5))}, at(11),
			outbox{Lines: []outLine{waiting(dispatch, retryFirst, at(10).Add(respawnGrace))}, Respawned: respawned}, nil},
		{"a due line posted again keeps its wait", outbox{},
			outEvent{Kind: outPost, Line: waiting(dispatch, retryFirst, at(5))}, at(11),
			outbox{}, []outAction{{Kind: outSend, Line: waiting(dispatch, retryFirst, at(5))}}},
		{"lines go out in the order they were queued, the waiting ones stay",
			outbox{Lines: []outLine{waiting(notice, retryFirst, at(9)), waiting(question, retryFirst, at(5)), waiting(result, retryFirst, at(4))}},
			outEvent{Kind: outTick, Facts: facts(verdict, true, false)}, at(6),
			outbox{Lines: []outLine{waiting(notice, retryFirst, at(9))}},
			[]outAction{{Kind: outDue, Line: waiting(result, retryFirst, at(4))}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := outbox{Lines: append([]outLine(nil), tc.in.Lines...)}
			got, acts := stepOutbox(tc.in, tc.ev, tc.now)
			if len(got.Lines) == 0 {
				got.Lines = nil // none waits, whether as nil or empty
			}
			assert.Equal(t, tc.want.Lines, got.Lines, "lines, in order")
			assert.Equal(t, tc.want.Respawned, got.Respawned, "respawns")
			assert.Equal(t, tc.wantA, acts, "actions")
			assert.Equal(t, before.Lines, tc.in.Lines, "the outbox stepped is left as it was")
		})
	}
}

func TestOutboxNextDue(t *testing.T) {
	_, ok := outbox{}.nextDue()
	assert.False(t, ok, "nothing waits")
	next, ok := outbox{Lines: []outLine{{Due: at(9)}, {Due: at(4)}, {Due: at(6)}}}.nextDue()
	assert.True(t, ok)
	assert.Equal(t, at(4), next)
}
