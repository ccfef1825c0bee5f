package sim

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/review"
)

// walkKinds are the events a walk draws from: every kind Step knows, and
// one it does not.
var walkKinds = []review.EventKind{
	review.EvEdit, review.EvSelfReview, review.EvEvidence, review.EvClearEvidence, review.EvRequest,
	review.EvPrompt, review.EvApprove, review.EvReReview, review.EvNeedsDiscussion, review.EvResume,
	review.EvAsk, review.EvSession, review.EvFindings, review.EvFindingsBad, review.EvFindingsLate,
	review.EvDispatchFailed, review.EvRedispatch, review.EvAnswer, review.EvAnswerLate, review.EvDelivered,
	"bogus",
}

// alwaysAccepted are the events Step takes in every state: a code edit and
// clearing the evidence are facts, never refused.
var alwaysAccepted = map[review.EventKind]bool{review.EvEdit: true, review.EvClearEvidence: true}

// Resume targets: the states a resume may go to (in the spellings ParseState
// reads), and targets it must refuse.
var (
	resumeValid   = []string{"", "IDLE", "IMPLEMENT", "self-review", "SELF_REVIEW", "CRITICS", "VERIFY", "verify", "PLANNING"}
	resumeInvalid = []string{"PR_READY", "NEEDS_DISCUSSION", "REVIEW", "dialogue", "CODEX_REVIEW", "codex-dialogue", "nowhere"}
)

// TestReviewRandomWalks feeds 10,000 random event sequences to the review
// state machine on a virtual clock. Events are drawn relative to the
// status (mostly the current review's and exchanges' numbers, texts that
// are mostly present, resume targets valid and not, every kind of evidence,
// edits stamped before and after the evidence), and most walks lean toward
// the happy path, so that reviews run, get approved and reach PR_READY.
// After every step it checks the invariants (see check); at the end, that
// the walks covered the machine: every state, PR_READY, approvals, the
// iteration cap, and every event both accepted and refused. Walk n draws
// from a generator seeded with n, so a failure replays it with a trace.
func TestReviewRandomWalks(t *testing.T) {
	const walks = 10000
	var fields []string
	for f := range reflect.TypeFor[review.Status]().Fields() {
		fields = append(fields, f.Name)
	}
	require.Equal(t, statusFields, fields, "the fields of review.Status (update snapshot)")

	cov := coverage{visited: map[review.State]int{}, accepted: map[review.EventKind]int{}, refused: map[review.EventKind]int{}}
	w := &walk{}
	for i := range walks {
		w.reset(i)
		w.run(t, &cov)
	}

	t.Logf("%d steps; steps ending in each state %v", cov.steps, cov.visited)
	t.Logf("PR_READY in %d walks; %d approvals; iteration cap in %d walks", cov.prReadyWalks, cov.approvals, cov.capWalks)
	t.Logf("accepted %v", cov.accepted)
	t.Logf("refused %v", cov.refused)
	for st := review.State(0); st.Valid(); st++ {
		assert.Positive(t, cov.visited[st], "steps that ended in %s", st)
	}
	assert.GreaterOrEqual(t, cov.prReadyWalks, walks/10, "walks that reached PR_READY")
	assert.GreaterOrEqual(t, cov.approvals, walks/4, "approvals accepted")
	assert.GreaterOrEqual(t, cov.capWalks, walks/50, "walks that hit the iteration cap")
	for _, k := range walkKinds[:len(walkKinds)-1] {
		assert.Positive(t, cov.accepted[k], "%s accepted", k)
		if !alwaysAccepted[k] {
			assert.Positive(t, cov.refused[k], "%s refused", k)
		}
	}
}

// coverage counts what the walks reached.
type coverage struct {
	steps             int
	visited           map[review.State]int // steps that ended in each state
	accepted, refused map[review.EventKind]int
	approvals         int // accepted EvApprove
	prReadyWalks      int // walks that reached PR_READY
	capWalks          int // walks sent to NEEDS_DISCUSSION by the iteration cap
}

// walk is one random event sequence. Walk n draws from its own generator,
// seeded with n, so that a failing walk can be replayed with a trace.
type walk struct {
	n     int
	rng   *rand.Rand
	pcg   rand.PCG
	start time.Time
	now   time.Time // the virtual clock
	s     review.Status
	steps int
	happy int      // how many events in ten follow the happy path
	trace []traced // kept only when replaying
	input snapshot
}

// traced is one step of a walk, for the failure message.
type traced struct {
	ev    review.Event
	after review.Status
	err   error
}

// reset starts walk n: its generator, a new clock, a new status with an
// iteration cap of 1 to 4, how closely it follows the happy path, and its
// length.
func (w *walk) reset(n int) {
	w.n, w.pcg = n, *rand.NewPCG(1, uint64(n))
	if w.rng == nil {
		w.rng = rand.New(&w.pcg)
	}
	w.start = NewClock().Now()
	w.now = w.start
	w.s = review.New(w.start, 1+w.rng.IntN(4))
	// Walks that mostly draw at random are short (most of their events
	// are refused, and refusals are what cost most); walks that follow
	// the happy path are long enough for several rounds of review.
	switch w.rng.IntN(4) {
	case 0:
		w.happy, w.steps = 2, 3+w.rng.IntN(8)
	case 1:
		w.happy, w.steps = 6, 5+w.rng.IntN(9)
	case 2:
		w.happy, w.steps = 8, 6+w.rng.IntN(13)
	default:
		w.happy, w.steps = 9, 8+w.rng.IntN(21)
	}
	w.trace = w.trace[:0]
}

// step draws the next event and applies it, keeping the new status if it
// was accepted.
func (w *walk) step() (before review.Status, ev review.Event, next review.Status, acts []review.Action, err error) {
	w.now = w.now.Add(time.Duration(w.rng.IntN(3)) * time.Second)
	if w.rng.IntN(10) < w.happy {
		ev = w.happyEvent()
	} else {
		ev = w.event(walkKinds[w.rng.IntN(len(walkKinds))])
	}
	before = w.s
	next, acts, err = review.Step(before, ev)
	if err == nil {
		w.s = next
	}
	return before, ev, next, acts, err
}

func (w *walk) run(t *testing.T, cov *coverage) {
	cov.visited[w.s.State]++
	var prReady, capped bool
	w.input.take(&w.s)
	for i := range w.steps {
		before, ev, next, acts, err := w.step()
		cov.steps++
		// Step works on a copy: a refused event returns the status as it
		// was, and an accepted one leaves the status it was given as it was
		// (a copy that shared the evidence map, say, would change it).
		if err != nil {
			cov.refused[ev.Kind]++
			if !w.input.same(&next) {
				w.fail(t, i, "a refused event changed the status")
			}
			continue
		}
		if !w.input.same(&before) {
			w.fail(t, i, "Step changed the status it was given")
		}
		cov.accepted[ev.Kind]++
		if why := check(&before, &ev, &next, acts); why != "" {
			w.fail(t, i, why)
		}
		w.input.take(&w.s)
		cov.visited[next.State]++
		if ev.Kind == review.EvApprove {
			cov.approvals++
		}
		prReady = prReady || next.State == review.PRReady
		capped = capped || (ev.Kind == review.EvReReview && next.State == review.NeedsDiscussion)
	}
	if prReady {
		cov.prReadyWalks++
	}
	if capped {
		cov.capWalks++
	}
}

// check returns which invariant an accepted step from s to n by ev
// breaks, or "".
func check(s *review.Status, ev *review.Event, n *review.Status, acts []review.Action) string {
	switch {
	case !n.State.Valid():
		return "undefined state"
	case ev.Kind == "bogus":
		return "an unknown event was accepted"
	case (n.State == review.InReview) != (n.Phase != ""):
		return "a phase outside REVIEW or none in it"
	case n.State == review.InReview && (n.Review == nil || (n.Phase != review.Dispatched && n.Phase != review.Verdict)):
		return "REVIEW without a review or with an unknown phase"
	case n.State == review.Dialogue && !slices.ContainsFunc(n.Exchanges, func(x review.Exchange) bool { return x.Kind == "dialogue" }):
		return "DIALOGUE with no dialogue whose answer could end it"
	case n.Iteration < 0 || n.Iteration > n.MaxIterations:
		return fmt.Sprintf("iteration %d outside 0..%d", n.Iteration, n.MaxIterations)
	case n.Reviews < n.Iteration:
		return fmt.Sprintf("%d reviews but iteration %d", n.Reviews, n.Iteration)
	case n.Reviews < s.Reviews && (ev.Kind != review.EvDispatchFailed || n.Reviews != s.Reviews-1):
		return fmt.Sprintf("reviews went from %d to %d", s.Reviews, n.Reviews)
	case n.State == review.PRReady && !n.Complete():
		return "PR_READY without complete evidence"
	case ev.Kind == review.EvEvidence && !review.AgentKind(ev.Evidence):
		return fmt.Sprintf("an agent recorded %q evidence", ev.Evidence)
	// Approval evidence comes only from the implementer approving valid
	// findings of the review in progress, a review of the code as it is.
	case added(s, n, review.ReviewApproved) && (ev.Kind != review.EvApprove || s.State != review.InReview ||
		s.Phase != review.Verdict || s.Review == nil || s.Review.Outcome != review.Valid):
		return "approval evidence without an approved review that ran"
	case added(s, n, review.ReviewApproved) && !s.Fresh(review.ReviewerRan):
		return "approval evidence for a review of code that changed since"
	// Proof that a review ran comes only from valid findings of that review.
	case added(s, n, review.ReviewerRan) && (ev.Kind != review.EvFindings || s.State != review.InReview ||
		s.Review == nil || s.Review.N != ev.N):
		return "reviewer-ran evidence without findings of the review in progress"
	}
	for k := range n.Evidence {
		if !slices.Contains(review.Kinds, k) {
			return "unknown evidence " + string(k)
		}
	}
	for _, a := range acts {
		if a.Kind == review.ActDispatch && (n.Review == nil || n.Review.N != a.N) {
			return fmt.Sprintf("dispatch of review %d, which is not in progress", a.N)
		}
	}
	return ""
}

// added says whether evidence of kind k is new or renewed from s to n.
func added(s, n *review.Status, k review.Kind) bool {
	t0, had := s.Evidence[k]
	t1, has := n.Evidence[k]
	return has && (!had || !t0.Equal(t1))
}

// fail replays walk w up to step last with a trace (the walk draws the
// same events again) and fails the test with it.
func (w *walk) fail(t *testing.T, last int, why string) {
	t.Helper()
	r := &walk{}
	r.reset(w.n)
	for range last + 1 {
		_, ev, next, _, err := r.step()
		r.trace = append(r.trace, traced{ev: ev, after: next, err: err})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "walk %d (max iterations %d, happy %d/10), step %d: %s\n", w.n, w.s.MaxIterations, w.happy, last+1, why)
	for i, st := range r.trace {
		fmt.Fprintf(&b, "%3d %s -> ", i+1, r.describe(st.ev))
		if st.err != nil {
			fmt.Fprintf(&b, "refused: %v\n", st.err)
			continue
		}
		a := st.after
		fmt.Fprintf(&b, "%s", a.State)
		if a.Phase != "" {
			fmt.Fprintf(&b, " (%s)", a.Phase)
		}
		fmt.Fprintf(&b, " it=%d reviews=%d", a.Iteration, a.Reviews)
		if a.Review != nil {
			fmt.Fprintf(&b, " review=%d/%s", a.Review.N, a.Review.Outcome)
		}
		fmt.Fprintf(&b, " evidence=%s\n", r.evidence(a))
	}
	t.Fatal(b.String())
}

// describe writes ev with its times relative to the walk's start.
func (w *walk) describe(ev review.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s @%s", ev.Kind, ev.At.Sub(w.start))
	field := func(name, v string) {
		if v != "" {
			fmt.Fprintf(&b, " %s=%q", name, v)
		}
	}
	field("evidence", string(ev.Evidence))
	field("to", ev.To)
	field("text", ev.Text)
	field("role", ev.Role)
	field("reason", ev.Reason)
	switch ev.Kind {
	case review.EvFindings, review.EvFindingsBad, review.EvFindingsLate, review.EvDispatchFailed,
		review.EvRedispatch, review.EvDelivered, review.EvAnswer, review.EvAnswerLate:
		fmt.Fprintf(&b, " n=%d", ev.N)
	}
	return b.String()
}

// evidence lists s's evidence with times relative to the walk's start, a
// star marking what is stale.
func (w *walk) evidence(s review.Status) string {
	var parts []string
	for _, k := range review.Kinds {
		if at, ok := s.Evidence[k]; ok {
			stale := ""
			if !s.Fresh(k) {
				stale = "*"
			}
			parts = append(parts, fmt.Sprintf("%s@%s%s", k, at.Sub(w.start), stale))
		}
	}
	if !s.LastEdit.IsZero() {
		parts = append(parts, fmt.Sprintf("edit@%s", s.LastEdit.Sub(w.start)))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// event draws an event of kind k whose fields mostly fit the status: the
// review and exchanges in progress, texts that are present.
func (w *walk) event(k review.EventKind) review.Event {
	ev := review.Event{Kind: k, At: w.now}
	switch k {
	case review.EvEdit:
		ev.At = w.editTime()
	case review.EvEvidence:
		ev.Evidence = w.evidenceKind()
	case review.EvRequest:
		ev.Base, ev.Title = w.text("main"), w.text("the change")
	case review.EvPrompt, review.EvSession:
		ev.Text = w.text("q")
	case review.EvAsk:
		ev.Role, ev.Text, ev.From = w.text("reviewer"), w.text("q"), w.text("implementer")
	case review.EvReReview, review.EvNeedsDiscussion:
		ev.Reason = w.text("why")
	case review.EvResume:
		ev.To = w.resumeTarget()
	case review.EvFindings:
		ev.N = w.reviewN()
		ev.Total = w.rng.IntN(4)
		ev.Blocking = w.rng.IntN(ev.Total + 1)
	case review.EvFindingsBad, review.EvFindingsLate, review.EvDispatchFailed:
		ev.N, ev.Reason = w.reviewN(), w.text("why")
	case review.EvRedispatch, review.EvDelivered:
		ev.N = w.reviewN()
	case review.EvAnswer, review.EvAnswerLate:
		ev.N = w.exchangeN()
	}
	return ev
}

// happyEvent draws the event that moves the status along the happy path
// (evidence, request, findings, approval, the rest of the evidence), with
// some detours that belong to it: a failed dispatch, late or invalid
// findings, a re-review, a dialogue.
func (w *walk) happyEvent() review.Event {
	s, one := w.s, func(n int) bool { return w.rng.IntN(n) == 0 }
	ev := func(k review.EventKind) review.Event { return review.Event{Kind: k, At: w.now} }
	proof := func(k review.Kind) review.Event {
		e := ev(review.EvEvidence)
		e.Evidence = k
		return e
	}
	switch s.State {
	case review.Idle, review.Planning:
		if one(5) {
			return w.event(review.EvAsk)
		}
		return ev(review.EvEdit)
	case review.Implement, review.SelfReview, review.Critics:
		switch {
		case s.State == review.Implement && one(4):
			return ev(review.EvSelfReview)
		case !s.Fresh(review.Critic):
			return proof(review.Critic)
		case s.State != review.Critics && one(3):
			return proof(review.Minimizer)
		}
		return w.event(review.EvRequest)
	case review.InReview:
		n, r := s.Review.N, s.Review
		e := ev(review.EvFindings)
		e.N = n
		if s.Phase == review.Dispatched {
			switch w.rng.IntN(20) {
			case 0:
				e.Kind, e.Reason = review.EvFindingsBad, "no findings block"
			case 1:
				e.Kind = review.EvFindingsLate
			case 2:
				e.Kind = review.EvRedispatch
			case 3:
				e.Kind, e.Reason = review.EvDispatchFailed, "pane gone"
			default:
				e.Total = w.rng.IntN(4)
				e.Blocking = w.rng.IntN(e.Total + 1)
			}
			return e
		}
		switch {
		case !r.Delivered && one(3):
			e.Kind = review.EvDelivered
		case r.Outcome == review.Valid && !one(5):
			e.Kind = review.EvApprove
		case r.Outcome == review.Late && one(2):
			// Findings that arrive after the deadline still count.
		case one(4):
			// An implementer that approves a review without findings.
			e.Kind = review.EvApprove
		default:
			e.Kind, e.Reason = review.EvReReview, "fixed"
		}
		return e
	case review.Verify:
		for _, k := range review.Kinds {
			if review.AgentKind(k) && !s.Fresh(k) {
				return proof(k)
			}
		}
		// Only the review is stale: change the code and start over.
		return ev(review.EvEdit)
	case review.PRReady:
		switch w.rng.IntN(3) {
		case 0:
			return ev(review.EvClearEvidence)
		case 1:
			return w.event(review.EvResume)
		}
		return ev(review.EvEdit)
	case review.NeedsDiscussion:
		e := ev(review.EvResume)
		e.To = resumeValid[w.rng.IntN(len(resumeValid))]
		return e
	case review.Dialogue:
		for _, x := range s.Exchanges {
			if x.Kind == "dialogue" {
				e := ev(review.EvAnswer)
				if one(5) {
					e.Kind = review.EvAnswerLate
				}
				e.N = x.N
				return e
			}
		}
	}
	return w.event(walkKinds[w.rng.IntN(len(walkKinds))])
}

// text returns s, or one time in ten nothing.
func (w *walk) text(s string) string {
	if w.rng.IntN(10) == 0 {
		return ""
	}
	return s
}

// editTime stamps an edit: mostly now, else at, just before or just after
// the time of some evidence (an edit noticed late), never in the future.
func (w *walk) editTime() time.Time {
	var times []time.Time
	for _, k := range review.Kinds {
		if at, ok := w.s.Evidence[k]; ok {
			times = append(times, at)
		}
	}
	if len(times) == 0 || w.rng.IntN(2) == 0 {
		return w.now
	}
	at := times[w.rng.IntN(len(times))].Add(time.Duration(w.rng.IntN(3)-1) * time.Nanosecond)
	if at.After(w.now) {
		return w.now
	}
	return at
}

// evidenceKind draws a kind of evidence: mostly an agent's, sometimes the
// coordinator's own (review-approved, reviewer-ran), sometimes none or a
// made-up one.
func (w *walk) evidenceKind() review.Kind {
	switch w.rng.IntN(10) {
	case 0:
		return review.ReviewApproved
	case 1:
		return review.ReviewerRan
	case 2:
		return []review.Kind{"", "nonsense"}[w.rng.IntN(2)]
	}
	for {
		if k := review.Kinds[w.rng.IntN(len(review.Kinds))]; review.AgentKind(k) {
			return k
		}
	}
}

// resumeTarget draws a resume target: mostly one resume may go to.
func (w *walk) resumeTarget() string {
	if w.rng.IntN(10) < 3 {
		return resumeInvalid[w.rng.IntN(len(resumeInvalid))]
	}
	return resumeValid[w.rng.IntN(len(resumeValid))]
}

// reviewN draws a review number: mostly the current review's, else one
// around the count of reviews (the last, the next, the one before).
func (w *walk) reviewN() int {
	if w.s.Review != nil && w.rng.IntN(8) != 0 {
		return w.s.Review.N
	}
	return w.s.Reviews + w.rng.IntN(3) - 1
}

// exchangeN draws an exchange number: mostly one awaiting its answer,
// else any up to the next one (answered ones and 0 included).
func (w *walk) exchangeN() int {
	if xs := w.s.Exchanges; len(xs) > 0 && w.rng.IntN(8) != 0 {
		return xs[w.rng.IntN(len(xs))].N
	}
	return w.rng.IntN(w.s.Asked + 2)
}

// snapshot keeps a copy of a status to compare it with later, without
// the allocations and reflection of a deep copy (which, with the race
// detector, would cost more than the steps themselves).
type snapshot struct {
	s         review.Status // shallow: the fields below hold what it points to
	review    review.Review
	kinds     []review.Kind
	times     []time.Time
	exchanges []review.Exchange
}

func (p *snapshot) take(s *review.Status) {
	p.s = *s
	if s.Review != nil {
		p.review = *s.Review
	}
	p.kinds, p.times = p.kinds[:0], p.times[:0]
	for k, at := range s.Evidence {
		p.kinds = append(p.kinds, k)
		p.times = append(p.times, at)
	}
	p.exchanges = append(p.exchanges[:0], s.Exchanges...)
}

// same says whether s is deeply equal to the status taken, as
// reflect.DeepEqual would say. Times compare with ==, as DeepEqual compares
// them: another location or monotonic reading is a change too.
func (p *snapshot) same(s *review.Status) bool {
	a := &p.s
	if s.State != a.State || s.Phase != a.Phase || s.Since != a.Since || s.MaxIterations != a.MaxIterations ||
		s.Iteration != a.Iteration || s.Reviews != a.Reviews || s.LastEdit != a.LastEdit || s.Note != a.Note ||
		s.Asked != a.Asked || s.SessionID != a.SessionID || s.Signal != a.Signal {
		return false
	}
	if (s.Review == nil) != (a.Review == nil) || (s.Review != nil && *s.Review != p.review) {
		return false
	}
	if (s.Exchanges == nil) != (a.Exchanges == nil) || !slices.Equal(s.Exchanges, p.exchanges) {
		return false
	}
	if (s.Evidence == nil) != (a.Evidence == nil) || len(s.Evidence) != len(p.kinds) {
		return false
	}
	for i, k := range p.kinds {
		if at, ok := s.Evidence[k]; !ok || at != p.times[i] {
			return false
		}
	}
	return true
}

// statusFields are the fields of review.Status that snapshot compares.
var statusFields = []string{"State", "Phase", "Since", "MaxIterations", "Iteration", "Reviews", "Evidence",
	"LastEdit", "Review", "Note", "Exchanges", "Asked", "SessionID", "Signal"}
