package sim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/partyhq/party/core/review"
)

// TestReviewRandomWalks feeds 10,000 random event sequences to the review
// state machine on the virtual clock and checks after every step that the
// status is one the machine defines, and that approval evidence only ever
// appears right after the implementer approved a review whose findings
// arrived.
func TestReviewRandomWalks(t *testing.T) {
	kinds := []review.EventKind{
		review.EvEdit, review.EvSelfReview, review.EvEvidence, review.EvClearEvidence, review.EvRequest,
		review.EvPrompt, review.EvApprove, review.EvReReview, review.EvNeedsDiscussion, review.EvResume,
		review.EvAsk, review.EvSession, review.EvFindings, review.EvFindingsBad, review.EvFindingsLate,
		review.EvDispatchFailed, review.EvRedispatch, review.EvAnswer, review.EvAnswerLate, review.EvDelivered, "bogus",
	}
	evidence := append([]review.Kind{"nonsense"}, review.Kinds...)
	states := []string{"", "IDLE", "IMPLEMENT", "VERIFY", "PR_READY", "CODEX_REVIEW", "CODEX_DIALOGUE", "nowhere"}
	rng := rand.New(rand.NewPCG(1, 2))
	for walk := 0; walk < 10000; walk++ {
		clock := NewClock()
		s := review.New(clock.Now(), 1+rng.IntN(4))
		var trace []review.EventKind
		for step := 0; step < 60; step++ {
			clock.Advance(time.Duration(rng.IntN(3)) * time.Second)
			ev := review.Event{Kind: kinds[rng.IntN(len(kinds))], At: clock.Now(),
				Evidence: evidence[rng.IntN(len(evidence))], N: rng.IntN(4),
				To: states[rng.IntN(len(states))], Role: "codex", Text: "t", Blocking: rng.IntN(2)}
			if rng.IntN(4) == 0 {
				ev.Text = ""
			}
			trace = append(trace, ev.Kind)
			next, acts, err := review.Step(s, ev)
			if err != nil {
				if !equalStatus(next, s) {
					t.Fatalf("walk %d: rejected %s changed the status; trace %v", walk, ev.Kind, trace)
				}
				continue
			}
			checkStatus(t, walk, trace, next)
			if approved(s, next) {
				if ev.Kind != review.EvApprove || s.State != review.CodexReview || s.Review == nil || s.Review.Outcome != review.Valid {
					t.Fatalf("walk %d: approval evidence without a review that ran; trace %v", walk, trace)
				}
				if _, ran := next.Evidence[review.CodexRan]; !ran {
					t.Fatalf("walk %d: approval without codex-ran evidence; trace %v", walk, trace)
				}
			}
			for _, a := range acts {
				if a.Kind == review.ActDispatch && (next.Review == nil || next.Review.N != a.N) {
					t.Fatalf("walk %d: dispatch of review %d that is not current; trace %v", walk, a.N, trace)
				}
			}
			s = next
		}
	}
}

func approved(before, after review.Status) bool {
	t0, had := before.Evidence[review.Codex]
	t1, has := after.Evidence[review.Codex]
	return has && (!had || !t0.Equal(t1))
}

func checkStatus(t *testing.T, walk int, trace []review.EventKind, s review.Status) {
	t.Helper()
	fail := func(why string) {
		t.Fatalf("walk %d: %s (state %s phase %q); trace %v", walk, why, s.State, s.Phase, trace)
	}
	if !s.State.Valid() {
		fail("undefined state")
	}
	if (s.State == review.CodexReview) != (s.Phase != "") {
		fail("a phase outside CODEX_REVIEW or none in it")
	}
	if s.State == review.CodexReview && (s.Review == nil || (s.Phase != review.Dispatched && s.Phase != review.Verdict)) {
		fail("CODEX_REVIEW without a review or with an unknown phase")
	}
	if s.Iteration < 0 || s.Iteration > s.MaxIterations || s.Reviews < s.Iteration {
		fail("iteration out of bounds")
	}
	if s.State == review.PRReady && !s.Complete() {
		fail("PR_READY without complete evidence")
	}
	for k := range s.Evidence {
		known := false
		for _, kk := range review.Kinds {
			known = known || k == kk
		}
		if !known {
			fail("unknown evidence " + string(k))
		}
	}
}

func equalStatus(a, b review.Status) bool {
	if a.State != b.State || a.Phase != b.Phase || a.Iteration != b.Iteration || a.Reviews != b.Reviews ||
		len(a.Evidence) != len(b.Evidence) || len(a.Exchanges) != len(b.Exchanges) || (a.Review == nil) != (b.Review == nil) {
		return false
	}
	return a.Review == nil || *a.Review == *b.Review
}
