package review

import (
	"maps"
	"slices"
	"time"
)

// The outbox is the second pure policy of the coordinator, beside Step:
// what becomes of a line the coordinator owes an agent. A line is sent at
// once unless its agent's pane was respawned less than respawnGrace ago;
// one its agent could not take is sent again when due, after retryFirst,
// then after waits that double up to retryMax; and it is forgotten once it
// is no longer owed (the review moved on, the question was answered).
// stepOutbox never reads the clock or files: the time and the facts come
// with the call, and the loop performs the actions.

// Delivery retry timing: the first retry after retryFirst, doubling up to
// retryMax; a respawned pane gets lines only after respawnGrace, the time
// an agent needs to draw its screen.
const (
	retryFirst   = 5 * time.Second
	retryMax     = time.Minute
	respawnGrace = 3 * time.Second
)

// lineKind is what a line of the outbox carries.
type lineKind string

// The kinds of lines. A result's kind is the Type of its ActDeliver.
const (
	lineDispatch lineKind = "dispatch" // review request N, to the reviewer
	lineReview   lineKind = "review"   // the result of review N, to the implementer
	lineQuestion lineKind = "question" // exchange N's question, to the role asked
	linePrompt   lineKind = "prompt"   // the answer to prompt N, to the asker
	lineDialogue lineKind = "dialogue" // the answer to planning question N, to the asker
	lineNotice   lineKind = "notice"   // a notice, to the implementer
)

// outLine is one line the coordinator owes an agent.
type outLine struct {
	Role, Text string
	Kind       lineKind
	N          int           // review or exchange number; 0 for a notice
	Due        time.Time     // not sent before
	Wait       time.Duration // the last wait after a failure, 0 before one
}

// supersedes says whether l takes the place of m in the outbox: a newer
// line of the same kind, number and role. Notices never replace each
// other: each says something else.
func (l outLine) supersedes(m outLine) bool {
	return l.Kind != lineNotice && l.Kind == m.Kind && l.N == m.N && l.Role == m.Role
}

// outbox is the lines waiting for their agents, in the order they were
// queued, and when each role's pane was last respawned.
type outbox struct {
	Lines     []outLine
	Respawned map[string]time.Time
}

// outEventKind is what happened to the outbox.
type outEventKind string

// The outbox's events.
const (
	outPost      outEventKind = "post"      // Line is new: send it, or hold it while its agent starts
	outSent      outEventKind = "sent"      // Line reached its agent
	outFailed    outEventKind = "failed"    // Line did not (Err says why)
	outRespawned outEventKind = "respawned" // Role's pane was respawned
	outTick      outEventKind = "tick"      // time passed: send what is due and still owed (Facts)
)

// outEvent is one input of stepOutbox.
type outEvent struct {
	Kind  outEventKind
	Line  outLine
	Err   error
	Role  string
	Facts outFacts
}

// outFacts are what decides whether a line is still owed: the status,
// and which reviews' findings and which exchanges' answers are written.
type outFacts struct {
	Status   Status
	Findings map[int]bool
	Answers  map[int]bool
}

// outActionKind is what the loop must do for the outbox.
type outActionKind string

// The outbox's actions.
const (
	outSend      outActionKind = "send"      // type Line into Line.Role's pane now
	outDue       outActionKind = "due"       // Line is due again: post it (outPost) when its turn comes
	outDelivered outActionKind = "delivered" // Line reached its agent: log it; a review result is recorded (EvDelivered)
	outRetry     outActionKind = "retry"     // Line failed (Err): log it; it waits until Line.Due
)

// outAction is one output of stepOutbox.
type outAction struct {
	Kind outActionKind
	Line outLine
	Err  error
}

// stepOutbox applies ev at now to o and returns the new outbox and the
// actions that follow. o is left as it was.
func stepOutbox(o outbox, ev outEvent, now time.Time) (outbox, []outAction) {
	o = outbox{Lines: slices.Clone(o.Lines), Respawned: maps.Clone(o.Respawned)}
	switch ev.Kind {
	case outPost:
		return o.post(ev.Line, now)
	case outSent:
		return o, []outAction{{Kind: outDelivered, Line: ev.Line}}
	case outFailed:
		l := ev.Line
		if l.Wait = 2 * l.Wait; l.Wait == 0 {
			l.Wait = retryFirst
		}
		l.Wait = min(l.Wait, retryMax)
		l.Due = now.Add(l.Wait)
		o.queue(l)
		return o, []outAction{{Kind: outRetry, Line: l, Err: ev.Err}}
	case outRespawned:
		if o.Respawned == nil {
			o.Respawned = map[string]time.Time{}
		}
		o.Respawned[ev.Role] = now
		return o, nil
	case outTick:
		var due []outLine
		waiting := o.Lines
		o.Lines = nil
		for _, l := range waiting {
			switch {
			case !owed(ev.Facts, l):
			case now.Before(l.Due):
				o.Lines = append(o.Lines, l)
			default:
				due = append(due, l)
			}
		}
		var acts []outAction
		for _, l := range due {
			acts = append(acts, outAction{Kind: outDue, Line: l})
		}
		return o, acts
	}
	return o, nil
}

// post sends l, or holds it until its agent's respawned pane has had
// respawnGrace to start.
func (o outbox) post(l outLine, now time.Time) (outbox, []outAction) {
	if at, ok := o.Respawned[l.Role]; ok && now.Before(at.Add(respawnGrace)) {
		l.Due = at.Add(respawnGrace)
		o.queue(l)
		return o, nil
	}
	return o, []outAction{{Kind: outSend, Line: l}}
}

// queue puts l in the outbox, in place of the line it supersedes.
func (o *outbox) queue(l outLine) {
	for i, m := range o.Lines {
		if l.supersedes(m) {
			o.Lines[i] = l
			return
		}
	}
	o.Lines = append(o.Lines, l)
}

// owed says whether l still needs to reach its agent: a review request
// while that review waits for findings that are not written, a result
// while the implementer has not decided on that review, a question while
// it is open and unanswered; the answers and notices always.
func owed(f outFacts, l outLine) bool {
	s := f.Status
	switch l.Kind {
	case lineDispatch:
		return s.State == InReview && s.Phase == Dispatched && s.current(l.N) && !f.Findings[l.N]
	case lineReview:
		return s.State == InReview && s.Phase == Verdict && s.current(l.N)
	case lineQuestion:
		return slices.ContainsFunc(s.Exchanges, func(x Exchange) bool { return x.N == l.N }) && !f.Answers[l.N]
	}
	return true
}

// nextDue is when the first waiting line is due, and false when none
// waits.
func (o outbox) nextDue() (time.Time, bool) {
	var next time.Time
	for i, l := range o.Lines {
		if i == 0 || l.Due.Before(next) {
			next = l.Due
		}
	}
	return next, len(o.Lines) > 0
}
