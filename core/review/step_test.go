package review

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

// in builds a status in state st (phase ph) with fresh critic evidence and,
// in REVIEW, review 1.
func in(st State, ph Phase) Status {
	s := New(t0, 3)
	s.State, s.Phase = st, ph
	s.Evidence[Critic] = at(1)
	if st == InReview {
		s.Review = &Review{N: 1, Dispatched: at(2)}
		s.Reviews, s.Iteration = 1, 1
		if ph == Verdict {
			s.Review.Outcome = Valid
			s.Evidence[ReviewerRan] = at(3)
		}
	}
	return s
}

// complete adds fresh evidence of every kind an agent records.
func complete(s Status) Status {
	for _, k := range []Kind{Critic, Minimizer, TestsPassed, ChecksPassed, SecurityScanned, PRVerified} {
		s.Evidence[k] = at(4)
	}
	if s.State != InReview {
		s.Evidence[ReviewerRan], s.Evidence[ReviewApproved] = at(4), at(4)
	}
	return s
}

// edited records a code edit at t.
func edited(s Status, t time.Time) Status { s.LastEdit = t; return s }

// invalid makes the review's findings invalid.
func invalid(s Status) Status { s.Review.Outcome = Invalid; return s }

// capped puts the review at the iteration cap.
func capped(s Status) Status { s.Iteration = s.MaxIterations; return s }

// asked adds exchange 1 of kind, asked from IMPLEMENT.
func asked(s Status, kind string) Status {
	s.Exchanges = []Exchange{{N: 1, Kind: kind, To: "codex", Text: "q", Asked: at(2), Return: Implement}}
	s.Asked = 1
	return s
}

func TestPhaseTable(t *testing.T) {
	tests := []struct {
		name  string
		from  Status
		ev    Event
		to    State
		phase Phase
		acts  []ActionKind
		err   error
	}{
		{"edit starts work", in(Idle, ""), Event{Kind: EvEdit}, Implement, "", []ActionKind{ActMarkers}, nil},
		{"edit in planning starts work", in(Planning, ""), Event{Kind: EvEdit}, Implement, "", []ActionKind{ActMarkers}, nil},
		{"edit during self review", in(SelfReview, ""), Event{Kind: EvEdit}, Implement, "", []ActionKind{ActMarkers}, nil},
		{"edit during critics", in(Critics, ""), Event{Kind: EvEdit}, Implement, "", []ActionKind{ActMarkers}, nil},
		{"edit during verify", in(Verify, ""), Event{Kind: EvEdit}, Implement, "", []ActionKind{ActMarkers}, nil},
		{"edit when PR ready", in(PRReady, ""), Event{Kind: EvEdit}, Implement, "", []ActionKind{ActMarkers}, nil},
		{"edit during review keeps it", in(InReview, Dispatched), Event{Kind: EvEdit}, InReview, Dispatched, []ActionKind{ActMarkers}, nil},
		{"edit while discussing", in(NeedsDiscussion, ""), Event{Kind: EvEdit}, NeedsDiscussion, "", []ActionKind{ActMarkers}, nil},
		{"edit in dialogue", in(Dialogue, ""), Event{Kind: EvEdit}, Dialogue, "", []ActionKind{ActMarkers}, nil},

		{"self review", in(Implement, ""), Event{Kind: EvSelfReview}, SelfReview, "", nil, nil},
		{"self review from idle", in(Idle, ""), Event{Kind: EvSelfReview}, Idle, "", nil, ErrIllegal},

		{"critic evidence while implementing", in(Implement, ""), Event{Kind: EvEvidence, Evidence: Critic}, Critics, "", []ActionKind{ActMarkers}, nil},
		{"minimizer evidence after self review", in(SelfReview, ""), Event{Kind: EvEvidence, Evidence: Minimizer}, Critics, "", []ActionKind{ActMarkers}, nil},
		{"tests evidence while implementing", in(Implement, ""), Event{Kind: EvEvidence, Evidence: TestsPassed}, Implement, "", []ActionKind{ActMarkers}, nil},
		{"review-approved evidence by an agent", in(InReview, Verdict), Event{Kind: EvEvidence, Evidence: ReviewApproved}, InReview, Verdict, nil, ErrForbidden},
		{"reviewer-ran evidence by an agent", in(Implement, ""), Event{Kind: EvEvidence, Evidence: ReviewerRan}, Implement, "", nil, ErrForbidden},
		{"clear evidence when PR ready", in(PRReady, ""), Event{Kind: EvClearEvidence}, Verify, "", []ActionKind{ActMarkers}, nil},
		{"clear evidence while implementing", in(Implement, ""), Event{Kind: EvClearEvidence}, Implement, "", []ActionKind{ActMarkers}, nil},

		{"request from idle", in(Idle, ""), Event{Kind: EvRequest}, InReview, Dispatched, []ActionKind{ActDispatch}, nil},
		{"request while implementing", in(Implement, ""), Event{Kind: EvRequest}, InReview, Dispatched, []ActionKind{ActDispatch}, nil},
		{"request after self review", in(SelfReview, ""), Event{Kind: EvRequest}, InReview, Dispatched, []ActionKind{ActDispatch}, nil},
		{"request after critics", in(Critics, ""), Event{Kind: EvRequest}, InReview, Dispatched, []ActionKind{ActDispatch}, nil},
		{"request during review", in(InReview, Dispatched), Event{Kind: EvRequest}, InReview, Dispatched, nil, ErrIllegal},
		{"request in verify", in(Verify, ""), Event{Kind: EvRequest}, Verify, "", nil, ErrIllegal},
		{"request while discussing", in(NeedsDiscussion, ""), Event{Kind: EvRequest}, NeedsDiscussion, "", nil, ErrIllegal},
		{"request in planning", in(Planning, ""), Event{Kind: EvRequest}, Planning, "", nil, ErrIllegal},

		{"findings", in(InReview, Dispatched), Event{Kind: EvFindings, N: 1}, InReview, Verdict, []ActionKind{ActDeliver, ActMarkers}, nil},
		{"invalid findings", in(InReview, Dispatched), Event{Kind: EvFindingsBad, N: 1}, InReview, Verdict, []ActionKind{ActDeliver, ActMarkers}, nil},
		{"findings timeout", in(InReview, Dispatched), Event{Kind: EvFindingsLate, N: 1}, InReview, Verdict, []ActionKind{ActDeliver, ActMarkers}, nil},
		{"findings of another review", in(InReview, Dispatched), Event{Kind: EvFindings, N: 2}, InReview, Dispatched, nil, ErrIllegal},
		{"findings twice", in(InReview, Verdict), Event{Kind: EvFindings, N: 1}, InReview, Verdict, nil, ErrIllegal},
		{"findings outside a review", in(Implement, ""), Event{Kind: EvFindings, N: 1}, Implement, "", nil, ErrIllegal},
		{"dispatch failed", in(InReview, Dispatched), Event{Kind: EvDispatchFailed, N: 1}, Implement, "", []ActionKind{ActDeliver}, nil},
		{"dispatch failed after findings", in(InReview, Verdict), Event{Kind: EvDispatchFailed, N: 1}, InReview, Verdict, nil, ErrIllegal},

		{"redispatch", in(InReview, Dispatched), Event{Kind: EvRedispatch, N: 1}, InReview, Dispatched, []ActionKind{ActDispatch}, nil},
		{"redispatch after findings", in(InReview, Verdict), Event{Kind: EvRedispatch, N: 1}, InReview, Verdict, nil, ErrIllegal},
		{"approve", in(InReview, Verdict), Event{Kind: EvApprove}, Verify, "", []ActionKind{ActMarkers}, nil},
		{"approve before findings", in(InReview, Dispatched), Event{Kind: EvApprove}, InReview, Dispatched, nil, ErrNoReview},
		{"approve without review", in(Implement, ""), Event{Kind: EvApprove}, Implement, "", nil, ErrNoReview},
		{"approve in verify", in(Verify, ""), Event{Kind: EvApprove}, Verify, "", nil, ErrNoReview},
		{"re-review", in(InReview, Verdict), Event{Kind: EvReReview, Reason: "fixing F1"}, Implement, "", nil, nil},
		{"re-review before findings", in(InReview, Dispatched), Event{Kind: EvReReview}, InReview, Dispatched, nil, ErrIllegal},
		{"re-review outside a review", in(Implement, ""), Event{Kind: EvReReview}, Implement, "", nil, ErrIllegal},
		{"needs discussion after findings", in(InReview, Verdict), Event{Kind: EvNeedsDiscussion}, NeedsDiscussion, "", nil, nil},
		{"needs discussion while implementing", in(Implement, ""), Event{Kind: EvNeedsDiscussion}, NeedsDiscussion, "", nil, nil},
		{"needs discussion in verify", in(Verify, ""), Event{Kind: EvNeedsDiscussion}, NeedsDiscussion, "", nil, nil},
		{"needs discussion while the reviewer works", in(InReview, Dispatched), Event{Kind: EvNeedsDiscussion}, InReview, Dispatched, nil, ErrIllegal},
		{"needs discussion twice", in(NeedsDiscussion, ""), Event{Kind: EvNeedsDiscussion}, NeedsDiscussion, "", nil, ErrIllegal},

		{"resume", in(NeedsDiscussion, ""), Event{Kind: EvResume}, Implement, "", nil, nil},
		{"resume to planning", in(NeedsDiscussion, ""), Event{Kind: EvResume, To: "planning"}, Planning, "", nil, nil},
		{"resume after PR ready", in(PRReady, ""), Event{Kind: EvResume, To: "IDLE"}, Idle, "", nil, nil},
		{"resume into a review", in(NeedsDiscussion, ""), Event{Kind: EvResume, To: "REVIEW"}, NeedsDiscussion, "", nil, ErrBadEvent},
		{"resume to nowhere", in(NeedsDiscussion, ""), Event{Kind: EvResume, To: "LUNCH"}, NeedsDiscussion, "", nil, ErrBadState},
		{"resume while implementing", in(Implement, ""), Event{Kind: EvResume}, Implement, "", nil, ErrIllegal},
		{"resume into a review while implementing", in(Implement, ""), Event{Kind: EvResume, To: "REVIEW"}, Implement, "", nil, ErrBadEvent},

		{"ask from idle", in(Idle, ""), Event{Kind: EvAsk, Role: "codex", Text: "plan?"}, Dialogue, "", []ActionKind{ActAsk}, nil},
		{"ask in planning", in(Planning, ""), Event{Kind: EvAsk, Role: "codex", Text: "plan?"}, Dialogue, "", []ActionKind{ActAsk}, nil},
		{"ask while implementing", in(Implement, ""), Event{Kind: EvAsk, Role: "codex", Text: "why?"}, Dialogue, "", []ActionKind{ActAsk}, nil},
		{"ask during review", in(InReview, Dispatched), Event{Kind: EvAsk, Role: "codex", Text: "plan?"}, InReview, Dispatched, nil, ErrIllegal},
		{"ask without question", in(Idle, ""), Event{Kind: EvAsk, Role: "codex"}, Idle, "", nil, ErrBadEvent},
		{"answer nobody asked", in(Planning, ""), Event{Kind: EvAnswer, N: 7}, Planning, "", nil, ErrIllegal},
		{"prompt keeps the state", in(InReview, Dispatched), Event{Kind: EvPrompt, Text: "look at x"}, InReview, Dispatched, []ActionKind{ActAsk}, nil},
		{"empty prompt", in(Implement, ""), Event{Kind: EvPrompt}, Implement, "", nil, ErrBadEvent},
		{"session id", in(Idle, ""), Event{Kind: EvSession, Text: "abc"}, Idle, "", []ActionKind{ActMarkers}, nil},
		{"unknown event", in(Idle, ""), Event{Kind: "dance"}, Idle, "", nil, ErrBadEvent},

		{"delivered", in(InReview, Verdict), Event{Kind: EvDelivered, N: 1}, InReview, Verdict, nil, nil},
		{"delivered of another review", in(InReview, Verdict), Event{Kind: EvDelivered, N: 2}, InReview, Verdict, nil, ErrIllegal},
		{"delivered without a review", in(Implement, ""), Event{Kind: EvDelivered, N: 1}, Implement, "", nil, ErrIllegal},
		{"needs discussion after self review", in(SelfReview, ""), Event{Kind: EvNeedsDiscussion}, NeedsDiscussion, "", nil, nil},
		{"needs discussion during critics", in(Critics, ""), Event{Kind: EvNeedsDiscussion}, NeedsDiscussion, "", nil, nil},
		{"needs discussion in planning", in(Planning, ""), Event{Kind: EvNeedsDiscussion}, NeedsDiscussion, "", nil, nil},
		{"needs discussion when idle", in(Idle, ""), Event{Kind: EvNeedsDiscussion}, Idle, "", nil, ErrIllegal},
		{"approve with every other evidence fresh", complete(in(InReview, Verdict)), Event{Kind: EvApprove}, PRReady, "", []ActionKind{ActMarkers}, nil},
		{"approve after an edit since the review", edited(in(InReview, Verdict), at(5)), Event{Kind: EvApprove}, InReview, Verdict, nil, ErrNoReview},
		{"approve of invalid findings", invalid(in(InReview, Verdict)), Event{Kind: EvApprove}, InReview, Verdict, nil, ErrNoReview},
		{"resume to verify with complete evidence", complete(in(NeedsDiscussion, "")), Event{Kind: EvResume, To: "verify"}, PRReady, "", nil, nil},
		{"resume to verify", in(NeedsDiscussion, ""), Event{Kind: EvResume, To: "VERIFY"}, Verify, "", nil, nil},
		{"ask in verify", in(Verify, ""), Event{Kind: EvAsk, Role: "codex", Text: "why?"}, Verify, "", nil, ErrIllegal},
		{"ask while discussing", in(NeedsDiscussion, ""), Event{Kind: EvAsk, Role: "codex", Text: "why?"}, NeedsDiscussion, "", nil, ErrIllegal},
		{"ask in a dialogue", in(Dialogue, ""), Event{Kind: EvAsk, Role: "codex", Text: "and?"}, Dialogue, "", nil, ErrIllegal},
		{"answer to a prompt keeps the state", asked(in(InReview, Dispatched), "prompt"), Event{Kind: EvAnswer, N: 1}, InReview, Dispatched, []ActionKind{ActDeliver}, nil},
		{"answer ends the dialogue", asked(in(Dialogue, ""), "dialogue"), Event{Kind: EvAnswer, N: 1}, Implement, "", []ActionKind{ActDeliver}, nil},
		{"late answer ends the dialogue too", asked(in(Dialogue, ""), "dialogue"), Event{Kind: EvAnswerLate, N: 1}, Implement, "", []ActionKind{ActDeliver}, nil},
		{"empty session id", in(Idle, ""), Event{Kind: EvSession}, Idle, "", nil, ErrBadEvent},
		{"re-review at the cap", capped(in(InReview, Verdict)), Event{Kind: EvReReview}, NeedsDiscussion, "", []ActionKind{ActDeliver}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.ev.At = at(10)
			got, acts, err := Step(tt.from, tt.ev)
			if tt.err != nil {
				require.Error(t, err)
				assert.True(t, errors.Is(err, tt.err), "got error %v, want %v", err, tt.err)
				assert.Equal(t, tt.from, got, "a rejected event changes nothing")
				assert.Nil(t, acts)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.to, got.State)
			assert.Equal(t, tt.phase, got.Phase)
			var kinds []ActionKind
			for _, a := range acts {
				kinds = append(kinds, a.Kind)
			}
			assert.Equal(t, tt.acts, kinds)
		})
	}
}

func TestApproveNeedsTheReviewEvidence(t *testing.T) {
	s := in(InReview, Verdict)
	s, _, err := Step(s, Event{Kind: EvClearEvidence, At: at(4)})
	require.NoError(t, err)
	_, _, err = Step(s, Event{Kind: EvApprove, At: at(5)})
	assert.ErrorIs(t, err, ErrNoReview, "cleared reviewer-ran evidence: the review must run again")
}

func TestApprovalRestartsTheIterationCount(t *testing.T) {
	s := capped(in(InReview, Verdict))
	s, _, err := Step(s, Event{Kind: EvApprove, At: at(5)})
	require.NoError(t, err)
	assert.Equal(t, 0, s.Iteration)
	assert.Equal(t, 1, s.Reviews, "every review still counts")
}

func TestStepDoesNotAliasItsInput(t *testing.T) {
	s := in(InReview, Dispatched)
	_, _, err := Step(s, Event{Kind: EvFindings, N: 1, At: at(5)})
	require.NoError(t, err)
	assert.Equal(t, Pending, s.Review.Outcome, "the old status keeps its review")
	assert.NotContains(t, s.Evidence, ReviewerRan)
}

func TestRequestNeedsFreshCriticEvidence(t *testing.T) {
	s := in(Implement, "")
	s.LastEdit = at(5) // after the critic evidence at 1
	_, _, err := Step(s, Event{Kind: EvRequest, At: at(6)})
	assert.ErrorIs(t, err, ErrEvidence)

	s.Evidence[Critic] = at(7)
	got, acts, err := Step(s, Event{Kind: EvRequest, Base: "main", At: at(8)})
	require.NoError(t, err)
	assert.Equal(t, []Action{{Kind: ActDispatch, N: 1}}, acts)
	assert.Equal(t, "main", got.Review.Base)
	assert.Equal(t, 0, got.Review.Previous, "the first review has no previous findings")
}

// TestFullCycle walks IMPLEMENT to PR_READY with a blocking round first.
func TestFullCycle(t *testing.T) {
	s := New(t0, 3)
	steps := []Event{
		{Kind: EvEdit, At: at(1)},
		{Kind: EvEvidence, Evidence: Critic, At: at(2)},
		{Kind: EvEvidence, Evidence: Minimizer, At: at(2)},
		{Kind: EvRequest, At: at(3)},
		{Kind: EvFindings, N: 1, Blocking: 1, Total: 2, At: at(4)},
		{Kind: EvReReview, Reason: "fixing F1", At: at(5)},
		{Kind: EvEdit, At: at(6)},
		{Kind: EvEvidence, Evidence: Critic, At: at(7)},
		{Kind: EvEvidence, Evidence: Minimizer, At: at(7)},
		{Kind: EvRequest, At: at(8)},
		{Kind: EvFindings, N: 2, At: at(9)},
		{Kind: EvApprove, At: at(10)},
		{Kind: EvEvidence, Evidence: TestsPassed, At: at(11)},
		{Kind: EvEvidence, Evidence: ChecksPassed, At: at(11)},
		{Kind: EvEvidence, Evidence: SecurityScanned, At: at(11)},
	}
	for _, ev := range steps {
		var err error
		s, _, err = Step(s, ev)
		require.NoError(t, err, "%s", ev.Kind)
	}
	assert.Equal(t, Verify, s.State)
	s, _, err := Step(s, Event{Kind: EvEvidence, Evidence: PRVerified, At: at(12)})
	require.NoError(t, err)
	assert.Equal(t, PRReady, s.State)
	assert.Equal(t, 2, s.Reviews)
	assert.Equal(t, at(12), s.Since)
}

func TestSecondReviewPointsToTheFirst(t *testing.T) {
	s := in(InReview, Verdict)
	s, _, err := Step(s, Event{Kind: EvReReview, Reason: "fixed F1", At: at(3)})
	require.NoError(t, err)
	s, _, err = Step(s, Event{Kind: EvRequest, At: at(4)})
	require.NoError(t, err)
	assert.Equal(t, 2, s.Review.N)
	assert.Equal(t, 1, s.Review.Previous)
	assert.Equal(t, "fixed F1", s.Review.Note)
}

func TestIterationCapForcesDiscussion(t *testing.T) {
	s := New(t0, 3)
	s.Evidence[Critic] = at(0)
	for i := 1; i <= 3; i++ {
		var acts []Action
		var err error
		s, _, err = Step(s, Event{Kind: EvRequest, At: at(i)})
		require.NoError(t, err)
		s, _, err = Step(s, Event{Kind: EvFindings, N: i, Blocking: 1, Total: 1, At: at(i)})
		require.NoError(t, err)
		s, acts, err = Step(s, Event{Kind: EvReReview, At: at(i)})
		require.NoError(t, err)
		if i < 3 {
			assert.Equal(t, Implement, s.State, "round %d", i)
			continue
		}
		assert.Equal(t, NeedsDiscussion, s.State)
		require.Len(t, acts, 1)
		assert.Equal(t, "notice", acts[0].Type)
		assert.Contains(t, acts[0].Message, "iteration cap")
	}
	s, _, err := Step(s, Event{Kind: EvResume, At: at(9)})
	require.NoError(t, err)
	assert.Equal(t, Implement, s.State)
	assert.Equal(t, 0, s.Iteration, "resume starts a new round of reviews")
	assert.Equal(t, 3, s.Reviews)
}

func TestLateFindingsAreStillTaken(t *testing.T) {
	s := in(InReview, Dispatched)
	s, _, err := Step(s, Event{Kind: EvFindingsLate, N: 1, At: at(3)})
	require.NoError(t, err)
	_, _, err = Step(s, Event{Kind: EvApprove, At: at(4)})
	assert.ErrorIs(t, err, ErrNoReview, "no findings, no approval")
	s, acts, err := Step(s, Event{Kind: EvFindings, N: 1, At: at(5)})
	require.NoError(t, err)
	assert.Equal(t, ActDeliver, acts[0].Kind)
	s, _, err = Step(s, Event{Kind: EvApprove, At: at(6)})
	require.NoError(t, err)
	assert.Equal(t, Verify, s.State)
}

func TestDialogueReturns(t *testing.T) {
	s := in(Implement, "")
	s, acts, err := Step(s, Event{Kind: EvAsk, Role: "codex", From: "claude", Text: "which cache?", At: at(2)})
	require.NoError(t, err)
	require.Equal(t, []Action{{Kind: ActAsk, N: 1}}, acts)
	s, acts, err = Step(s, Event{Kind: EvAnswer, N: 1, At: at(3)})
	require.NoError(t, err)
	assert.Equal(t, Implement, s.State)
	assert.Equal(t, []Action{{Kind: ActDeliver, Type: "dialogue", Role: "claude", N: 1}}, acts)
	assert.Empty(t, s.Exchanges)

	s = in(Idle, "")
	s, _, err = Step(s, Event{Kind: EvAsk, Role: "codex", Text: "plan?", At: at(2)})
	require.NoError(t, err)
	s, _, err = Step(s, Event{Kind: EvAnswerLate, N: 1, At: at(3)})
	require.NoError(t, err)
	assert.Equal(t, Planning, s.State, "a dialogue started from IDLE comes back to PLANNING")
}

func TestStateNames(t *testing.T) {
	for st := Idle; st < numStates; st++ {
		b, err := st.MarshalText()
		require.NoError(t, err)
		var back State
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, st, back)
	}
	_, err := State(42).MarshalText()
	assert.ErrorIs(t, err, ErrBadState)
	got, err := ParseState("needs-discussion")
	require.NoError(t, err)
	assert.Equal(t, NeedsDiscussion, got)
}
