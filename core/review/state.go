// Package review is party's review coordinator: an implementer and a
// reviewer keep their context across many reviews while a coordinator
// moves the work between them. Step is the pure policy (what a signal or a
// fact does to the state, and which actions follow); stepOutbox is the
// pure policy of the lines owed to the agents (sent, held while a pane
// restarts, retried with backoff, forgotten once no longer owed).
// Coordinator is the effect loop around both (coordinator.go) that reads
// signals, performs the actions (perform.go), turns files and deadlines
// into events (watch.go) and recovers after a crash. PaneEffects are its
// effects on a real session (git, delivery into panes, respawns); Serve
// and Start run it as a process of its own, a core/daemon whose keeper
// (Keep) restarts it after a crash, and SessionProcess is that process
// over a session, its record read through Team, a line refused for a
// pane that runs no agent logged (process.go); Prepare makes a new
// session's review state and, allowed, AllowCommands lets the
// agents run the loop's commands without a dialog (allow.go); Submit is what the agents' commands
// use to signal it. The verdict is only ever the implementer's signal: the
// coordinator acts alone only on mechanical facts (evidence present,
// findings file present or late, iteration cap).
package review

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// State is where the work stands.
type State int

// The states. InReview has two phases, see Phase.
const (
	Idle State = iota
	Implement
	SelfReview
	Critics
	InReview
	Verify
	PRReady
	NeedsDiscussion
	Planning
	Dialogue
	numStates
)

var stateNames = [...]string{"IDLE", "IMPLEMENT", "SELF_REVIEW", "CRITICS", "REVIEW", "VERIFY",
	"PR_READY", "NEEDS_DISCUSSION", "PLANNING", "DIALOGUE"}

// The names an older party gave the states and the coordinator's evidence,
// after the agent that reviewed by default. For one release they are still
// read from the state files it wrote and accepted wherever a name is given
// (party review resume --to, party evidence add); party writes and prints
// only the new names.
var (
	legacyStates = map[string]State{"CODEX_REVIEW": InReview, "CODEX_DIALOGUE": Dialogue}
	legacyKinds  = map[Kind]Kind{"codex-ran": ReviewerRan, "codex": ReviewApproved}
)

func (s State) String() string {
	if s < 0 || s >= numStates {
		return fmt.Sprintf("State(%d)", int(s))
	}
	return stateNames[s]
}

// Valid says whether s is one of the defined states.
func (s State) Valid() bool { return s >= 0 && s < numStates }

// ParseState reads a state name (IDLE, IMPLEMENT, ...; case-insensitive
// with '-' for '_'), or the old name of a renamed state (CODEX_REVIEW).
func ParseState(name string) (State, error) {
	for i, n := range stateNames {
		if equalName(n, name) {
			return State(i), nil
		}
	}
	for old, st := range legacyStates {
		if equalName(old, name) {
			return st, nil
		}
	}
	return 0, fmt.Errorf("unknown state %q (states: %s): %w", name, strings.Join(stateNames[:], ", "), ErrBadState)
}

func equalName(canon, s string) bool {
	if len(canon) != len(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-':
			c = '_'
		case c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
		}
		if c != canon[i] {
			return false
		}
	}
	return true
}

// MarshalText writes the state's name.
func (s State) MarshalText() ([]byte, error) {
	if !s.Valid() {
		return nil, fmt.Errorf("state %d: %w", int(s), ErrBadState)
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads a state's name.
func (s *State) UnmarshalText(b []byte) error {
	v, err := ParseState(string(b))
	*s = v
	return err
}

// Phase is the phase of InReview: Dispatched (the reviewer has the
// request, the coordinator waits for findings) or Verdict (the findings,
// or the lack of them, went to the implementer, who decides).
type Phase string

// The phases of InReview.
const (
	Dispatched Phase = "dispatched"
	Verdict    Phase = "verdict"
)

// Kind is a kind of evidence.
type Kind string

// The kinds of evidence. ReviewerRan (the reviewer wrote valid findings)
// and ReviewApproved (the implementer approved them) are the coordinator's
// own: an agent can never add them.
const (
	Critic          Kind = "critic"
	Minimizer       Kind = "minimizer"
	ReviewerRan     Kind = "reviewer-ran"
	ReviewApproved  Kind = "review-approved"
	TestsPassed     Kind = "tests-passed"
	ChecksPassed    Kind = "checks-passed"
	SecurityScanned Kind = "security-scanned"
	PRVerified      Kind = "pr-verified"
)

// Kinds are every kind of evidence, in the order VERIFY needs them.
var Kinds = []Kind{Critic, Minimizer, ReviewerRan, ReviewApproved, TestsPassed, ChecksPassed, SecurityScanned, PRVerified}

// AgentKind says whether agents may record evidence of kind k.
func AgentKind(k Kind) bool {
	switch k {
	case Critic, Minimizer, TestsPassed, ChecksPassed, SecurityScanned, PRVerified:
		return true
	}
	return false
}

// UnmarshalText reads a kind of evidence, taking an old name
// (codex-ran) for the kind's name now.
func (k *Kind) UnmarshalText(b []byte) error {
	*k = Kind(b)
	if now, ok := legacyKinds[*k]; ok {
		*k = now
	}
	return nil
}

// ParseKind reads a kind of evidence an agent may record.
func ParseKind(s string) (Kind, error) {
	k := Kind(s)
	if now, ok := legacyKinds[k]; ok {
		k = now
	}
	if AgentKind(k) {
		return k, nil
	}
	if k == ReviewApproved || k == ReviewerRan {
		return "", fmt.Errorf("%s evidence is recorded by the coordinator when a review ran and the implementer approved it: %w", s, ErrForbidden)
	}
	return "", fmt.Errorf("unknown evidence %q (kinds: critic, minimizer, tests-passed, checks-passed, security-scanned, pr-verified): %w", s, ErrBadEvent)
}

// Outcome is how a review ended.
type Outcome string

// The outcomes of a review.
const (
	Pending Outcome = ""         // no findings yet
	Valid   Outcome = "valid"    // findings that pass the schema
	Invalid Outcome = "invalid"  // a findings file that does not
	Late    Outcome = "timeout"  // no findings before the deadline
	NotSent Outcome = "not-sent" // the request never reached the reviewer
)

// Review is one review request and what became of it.
type Review struct {
	N          int       `json:"n"`
	Base       string    `json:"base,omitempty"`
	Title      string    `json:"title,omitempty"`
	Note       string    `json:"note,omitempty"` // the implementer's re-review reason
	Previous   int       `json:"previous,omitempty"`
	Dispatched time.Time `json:"dispatched"`
	Outcome    Outcome   `json:"outcome,omitempty"`
	Problem    string    `json:"problem,omitempty"` // why the findings are invalid
	Blocking   int       `json:"blocking"`
	Total      int       `json:"total"`
	Delivered  bool      `json:"delivered"` // the result reached the implementer
}

// Exchange is a question to an agent and its awaited answer: a prompt to
// the reviewer or a planning dialogue.
type Exchange struct {
	N      int       `json:"n"`
	Kind   string    `json:"kind"` // prompt | dialogue
	From   string    `json:"from,omitempty"`
	To     string    `json:"to,omitempty"`
	Text   string    `json:"text"`
	Asked  time.Time `json:"asked"`
	Return State     `json:"return"` // dialogue: the state to go back to
}

// Status is the coordinator's whole state, persisted as state.json.
type Status struct {
	State State     `json:"state"`
	Phase Phase     `json:"phase,omitempty"`
	Since time.Time `json:"since"`
	// MaxIterations is the iteration cap; Iteration counts the reviews since
	// the last resume, Reviews every review.
	MaxIterations int                `json:"max_iterations"`
	Iteration     int                `json:"iteration"`
	Reviews       int                `json:"reviews"`
	Evidence      map[Kind]time.Time `json:"evidence"`
	LastEdit      time.Time          `json:"last_edit,omitzero"`
	Review        *Review            `json:"review,omitempty"`
	Note          string             `json:"note,omitempty"` // why NEEDS_DISCUSSION
	Exchanges     []Exchange         `json:"exchanges,omitempty"`
	Asked         int                `json:"asked"` // exchanges ever started
	SessionID     string             `json:"session_id,omitempty"`
	// Signal is the id of the last signal applied: a signal at or below it
	// is never applied again.
	Signal string `json:"signal,omitempty"`
}

// New returns the starting status.
func New(now time.Time, maxIterations int) Status {
	if maxIterations < 1 {
		maxIterations = 1
	}
	return Status{State: Idle, Since: now, MaxIterations: maxIterations, Evidence: map[Kind]time.Time{}}
}

// Fresh says whether evidence of kind k exists and is not older than the
// last code edit.
func (s Status) Fresh(k Kind) bool {
	t, ok := s.Evidence[k]
	return ok && !t.Before(s.LastEdit)
}

// Complete says whether every kind of evidence is present and fresh.
func (s Status) Complete() bool {
	for _, k := range Kinds {
		if !s.Fresh(k) {
			return false
		}
	}
	return true
}

// Errors of Step. Each leaves the status unchanged.
var (
	ErrIllegal   = errors.New("illegal in this state")
	ErrNoReview  = errors.New("no review has run")
	ErrEvidence  = errors.New("evidence missing")
	ErrForbidden = errors.New("not allowed")
	ErrBadEvent  = errors.New("bad event")
	ErrBadState  = errors.New("bad state")
)
