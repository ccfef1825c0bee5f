package review

import (
	"fmt"
	"slices"
	"time"
)

// EventKind is what happened.
type EventKind string

// The events. The first group are the signals agents send (party review
// ..., party evidence ..., party ask); the second are facts the
// coordinator observes.
const (
	EvEdit            EventKind = "edit"        // a code file changed
	EvSelfReview      EventKind = "self-review" // the implementer reviews its own work
	EvEvidence        EventKind = "evidence"    // Evidence kind recorded
	EvClearEvidence   EventKind = "clear-evidence"
	EvRequest         EventKind = "request" // review request (Base, Title)
	EvPrompt          EventKind = "prompt"  // a free question to the reviewer (Text)
	EvApprove         EventKind = "approve"
	EvReReview        EventKind = "re-review" // Reason
	EvNeedsDiscussion EventKind = "needs-discussion"
	EvResume          EventKind = "resume" // To
	EvAsk             EventKind = "ask"    // planning dialogue: Role, Text, From
	EvSession         EventKind = "session"

	EvFindings       EventKind = "findings"         // valid findings of review N (Blocking, Total)
	EvFindingsBad    EventKind = "findings-invalid" // Reason says why
	EvFindingsLate   EventKind = "findings-timeout"
	EvDispatchFailed EventKind = "dispatch-failed" // Reason
	EvRedispatch     EventKind = "redispatch"      // recovery: review N again, new deadline
	EvAnswer         EventKind = "answer"          // exchange N answered
	EvAnswerLate     EventKind = "answer-timeout"
	EvDelivered      EventKind = "delivered" // the result of review N reached the implementer
)

// Event is one input of Step.
type Event struct {
	Kind     EventKind `json:"kind"`
	At       time.Time `json:"at"`
	Evidence Kind      `json:"evidence,omitempty"`
	Base     string    `json:"base,omitempty"`
	Title    string    `json:"title,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	Text     string    `json:"text,omitempty"`
	Role     string    `json:"role,omitempty"`
	From     string    `json:"from,omitempty"`
	To       string    `json:"to,omitempty"` // resume: a state name, empty = IMPLEMENT
	N        int       `json:"n,omitempty"`  // review or exchange number
	Blocking int       `json:"blocking,omitempty"`
	Total    int       `json:"total,omitempty"`
}

// ActionKind is what the effect loop must do.
type ActionKind string

// The actions.
const (
	// ActDispatch: write the diff and the prompt of Review, type a pointer
	// into the reviewer's pane, and wait for its findings.
	ActDispatch ActionKind = "dispatch"
	// ActDeliver: tell the implementer (or Role) that a result of Type is
	// ready: a message file plus one line.
	ActDeliver ActionKind = "deliver"
	// ActAsk: send Exchange N to its role and wait for the answer.
	ActAsk ActionKind = "ask"
	// ActMarkers: the evidence changed; mirror it as marker files.
	ActMarkers ActionKind = "markers"
)

// Action is one output of Step.
type Action struct {
	Kind ActionKind `json:"kind"`
	// Deliver: Type is review, prompt, dialogue or notice; Message is the
	// text of the message file; Role is empty for the implementer.
	Type    string `json:"type,omitempty"`
	Role    string `json:"role,omitempty"`
	Message string `json:"message,omitempty"`
	N       int    `json:"n,omitempty"` // review or exchange number
}

// Step applies ev to s. It returns the new status and the actions that
// follow, or an error, and then s is returned unchanged. Step is pure: it
// never reads the clock or files; times come with the event.
func Step(s Status, ev Event) (Status, []Action, error) {
	n := s.clone()
	acts, err := n.apply(ev)
	if err != nil {
		return s, nil, fmt.Errorf("%s in %s: %w", ev.Kind, s.where(), err)
	}
	return n, acts, nil
}

func (s Status) where() string {
	if s.State == InReview {
		return fmt.Sprintf("%s (%s)", s.State, s.Phase)
	}
	return s.State.String()
}

func (s Status) clone() Status {
	n := s
	n.Evidence = make(map[Kind]time.Time, len(s.Evidence))
	for k, v := range s.Evidence {
		n.Evidence[k] = v
	}
	if s.Review != nil {
		r := *s.Review
		n.Review = &r
	}
	n.Exchanges = slices.Clone(s.Exchanges)
	return n
}

func (s *Status) enter(st State, at time.Time) {
	if s.State != st {
		s.Since = at
	}
	s.State, s.Phase = st, ""
}

func (s *Status) apply(ev Event) ([]Action, error) {
	st := s.State
	switch ev.Kind {
	case EvEdit:
		if ev.At.After(s.LastEdit) {
			s.LastEdit = ev.At
		}
		switch st {
		case Idle, Planning, SelfReview, Critics, Verify, PRReady:
			s.enter(Implement, ev.At)
		}
		// Implement stays; InReview, NeedsDiscussion and Dialogue
		// keep going: the edit only makes older evidence stale.
		return []Action{{Kind: ActMarkers}}, nil

	case EvSelfReview:
		if st != Implement {
			return nil, ErrIllegal
		}
		s.enter(SelfReview, ev.At)
		return nil, nil

	case EvEvidence:
		if !AgentKind(ev.Evidence) {
			return nil, fmt.Errorf("evidence %q: %w", ev.Evidence, ErrForbidden)
		}
		s.Evidence[ev.Evidence] = ev.At
		switch {
		case (st == Implement || st == SelfReview) && (ev.Evidence == Critic || ev.Evidence == Minimizer):
			s.enter(Critics, ev.At)
		case st == Verify && s.Complete():
			s.enter(PRReady, ev.At)
		}
		return []Action{{Kind: ActMarkers}}, nil

	case EvClearEvidence:
		clear(s.Evidence)
		if st == PRReady {
			s.enter(Verify, ev.At)
		}
		return []Action{{Kind: ActMarkers}}, nil

	case EvRequest:
		switch st {
		case Idle, Implement, SelfReview, Critics:
		default:
			return nil, ErrIllegal
		}
		if !s.Fresh(Critic) {
			return nil, fmt.Errorf("a review request needs fresh critic evidence (party evidence add critic after the code-critic approves): %w", ErrEvidence)
		}
		r := &Review{N: s.Reviews + 1, Base: ev.Base, Title: ev.Title, Dispatched: ev.At}
		if p := s.Review; p != nil {
			// The reviewer is pointed to the last valid findings, and
			// reads the implementer's re-review note.
			r.Note, r.Previous = p.Note, p.N
			if p.Outcome != Valid {
				r.Previous = p.Previous
			}
		}
		s.Review = r
		s.Reviews++
		s.Iteration++
		s.enter(InReview, ev.At)
		s.Phase = Dispatched
		return []Action{{Kind: ActDispatch, N: r.N}}, nil

	case EvDispatchFailed:
		if st != InReview || s.Phase != Dispatched || !s.current(ev.N) {
			return nil, ErrIllegal
		}
		s.Reviews--
		s.Iteration--
		s.Review.Outcome, s.Review.Problem = NotSent, ev.Reason
		s.enter(Implement, ev.At)
		return []Action{notice("review request failed: " + ev.Reason)}, nil

	case EvRedispatch:
		if st != InReview || s.Phase != Dispatched || !s.current(ev.N) {
			return nil, ErrIllegal
		}
		s.Review.Dispatched = ev.At
		return []Action{{Kind: ActDispatch, N: ev.N}}, nil

	case EvFindings, EvFindingsBad, EvFindingsLate:
		if st != InReview || !s.current(ev.N) {
			return nil, ErrIllegal
		}
		r := s.Review
		late := s.Phase == Verdict && r.Outcome == Late
		if s.Phase != Dispatched && !(late && ev.Kind != EvFindingsLate) {
			return nil, ErrIllegal
		}
		switch ev.Kind {
		case EvFindings:
			r.Outcome, r.Problem, r.Blocking, r.Total = Valid, "", ev.Blocking, ev.Total
			// The review saw the code as it was when its diff was taken:
			// an edit after the dispatch makes it stale.
			s.Evidence[ReviewerRan] = r.Dispatched
		case EvFindingsBad:
			r.Outcome, r.Problem = Invalid, ev.Reason
		case EvFindingsLate:
			r.Outcome, r.Problem = Late, ev.Reason
		}
		r.Delivered = false
		s.Phase = Verdict
		return []Action{{Kind: ActDeliver, Type: "review", N: r.N}, {Kind: ActMarkers}}, nil

	case EvDelivered:
		if s.Review == nil || s.Review.N != ev.N {
			return nil, ErrIllegal
		}
		s.Review.Delivered = true
		return nil, nil

	case EvApprove:
		if err := approvable(*s); err != nil {
			return nil, err
		}
		s.Evidence[ReviewApproved] = ev.At
		s.Review.Note = ""
		s.Iteration = 0 // the cap counts reviews without approval
		s.enter(Verify, ev.At)
		if s.Complete() {
			s.enter(PRReady, ev.At)
		}
		return []Action{{Kind: ActMarkers}}, nil

	case EvReReview:
		if st != InReview || s.Phase != Verdict {
			return nil, ErrIllegal
		}
		s.Review.Note = ev.Reason
		if s.Iteration >= s.MaxIterations {
			s.Note = fmt.Sprintf("iteration cap reached: %d reviews without approval", s.Iteration)
			s.enter(NeedsDiscussion, ev.At)
			return []Action{notice(s.Note + ". Discuss with the user, then run: party review resume")}, nil
		}
		s.enter(Implement, ev.At)
		return nil, nil

	case EvNeedsDiscussion:
		switch {
		case st == InReview && s.Phase == Verdict:
		case st == Implement, st == SelfReview, st == Critics, st == Verify, st == Planning:
		default:
			return nil, ErrIllegal
		}
		s.Note = ev.Reason
		s.enter(NeedsDiscussion, ev.At)
		return nil, nil

	case EvResume:
		// A target resume can never go to is the caller's mistake in any
		// state: it is reported before the state is.
		to := Implement
		if ev.To != "" {
			var err error
			if to, err = ParseState(ev.To); err != nil {
				return nil, err
			}
		}
		switch to {
		case Idle, Implement, SelfReview, Critics, Verify, Planning:
		default:
			return nil, fmt.Errorf("resume --to %s: only IDLE, IMPLEMENT, SELF_REVIEW, CRITICS, VERIFY or PLANNING: %w", to, ErrBadEvent)
		}
		if st != NeedsDiscussion && st != PRReady {
			return nil, ErrIllegal
		}
		s.Iteration, s.Note = 0, ""
		s.enter(to, ev.At)
		if to == Verify && s.Complete() {
			s.enter(PRReady, ev.At)
		}
		return nil, nil

	case EvPrompt:
		if ev.Text == "" {
			return nil, fmt.Errorf("empty prompt: %w", ErrBadEvent)
		}
		x := s.exchange("prompt", ev)
		return []Action{{Kind: ActAsk, N: x.N}}, nil

	case EvAsk:
		if ev.Text == "" || ev.Role == "" {
			return nil, fmt.Errorf("ask needs a role and a question: %w", ErrBadEvent)
		}
		switch st {
		case Idle, Planning, Implement:
		default:
			return nil, ErrIllegal
		}
		x := s.exchange("dialogue", ev)
		if st == Idle {
			x.Return = Planning
		}
		s.Exchanges[len(s.Exchanges)-1] = x
		s.enter(Dialogue, ev.At)
		return []Action{{Kind: ActAsk, N: x.N}}, nil

	case EvAnswer, EvAnswerLate:
		i := slices.IndexFunc(s.Exchanges, func(x Exchange) bool { return x.N == ev.N })
		if i < 0 {
			return nil, ErrIllegal
		}
		x := s.Exchanges[i]
		s.Exchanges = slices.Delete(s.Exchanges, i, i+1)
		if x.Kind == "dialogue" && st == Dialogue {
			s.enter(x.Return, ev.At)
		}
		return []Action{{Kind: ActDeliver, Type: x.Kind, Role: x.From, N: x.N}}, nil

	case EvSession:
		if ev.Text == "" {
			return nil, fmt.Errorf("empty session id: %w", ErrBadEvent)
		}
		s.SessionID = ev.Text
		return []Action{{Kind: ActMarkers}}, nil
	}
	return nil, fmt.Errorf("unknown event %q: %w", ev.Kind, ErrBadEvent)
}

// current says whether n names the review in progress.
func (s *Status) current(n int) bool { return s.Review != nil && s.Review.N == n }

// exchange starts exchange of kind for ev.
func (s *Status) exchange(kind string, ev Event) Exchange {
	s.Asked++
	to := ev.Role
	x := Exchange{N: s.Asked, Kind: kind, From: ev.From, To: to, Text: ev.Text, Asked: ev.At, Return: s.State}
	s.Exchanges = append(s.Exchanges, x)
	return x
}

func notice(text string) Action { return Action{Kind: ActDeliver, Type: "notice", Message: text} }

// approvable says why s cannot be approved: approval needs valid findings
// of the review in progress, written for the code as it is now.
func approvable(s Status) error {
	if s.State != InReview || s.Phase != Verdict || s.Review == nil || s.Review.Outcome != Valid {
		return fmt.Errorf("approve needs a review that ran and wrote valid findings: %w", ErrNoReview)
	}
	if !s.Fresh(ReviewerRan) {
		return fmt.Errorf("approve needs a review of the code as it is: it changed after review %d ran (re-review to get a new one): %w", s.Review.N, ErrNoReview)
	}
	return nil
}
