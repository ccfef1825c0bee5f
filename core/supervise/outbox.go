package supervise

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// ForwardState is where a message to another host stands in the outbox.
type ForwardState string

// The states of an outbox entry: pending → forwarded, or → failed once
// the host refused it or it waited ForwardPolicy.GiveUp.
const (
	FwdPending   ForwardState = "pending"
	FwdForwarded ForwardState = "forwarded"
	FwdFailed    ForwardState = "failed"
)

// String is the state's name.
func (s ForwardState) String() string { return string(s) }

// Outbound is a message to a role on another host (inbox send --to
// ROLE@HOST from inside an agent's pane), recorded in this supervisor's
// outbox first and forwarded by its loop through the API bridge to the
// supervisor there, with its ID, which that store takes once.
type Outbound struct {
	// ID is the message's idempotency key, made when it was recorded: the
	// host there records a message of this id once, however often it is
	// forwarded.
	ID     string `json:"id"`
	Thread string `json:"thread_id"`
	// From is the sender here (its token's role, or the operator's
	// name); Origin is the sender as the host there records it:
	// From@SELF, this host's name.
	From   string    `json:"from"`
	Origin string    `json:"origin"`
	Role   string    `json:"role"`
	Text   string    `json:"text"`
	At     time.Time `json:"at"`
	Forward
}

// Forward is where a message to another host goes and how its
// forwarding stands: what party inbox list shows of it (Message.Forward).
type Forward struct {
	// Host is the host (a configured host's name or an SSH destination),
	// Session the session there ("": the one whose panes carry the
	// role).
	Host    string `json:"host"`
	Session string `json:"session,omitempty"`
	// State, Attempts (forwards started), NextAt (when a pending one is
	// next tried), Code and Error (the last failure's) say how its
	// forwarding goes; ForwardedAt and Seq (the message's seq there) how
	// it went.
	State       ForwardState `json:"state"`
	Attempts    int          `json:"attempts"`
	NextAt      time.Time    `json:"next_at,omitzero"`
	Code        string       `json:"code,omitempty"`
	Error       string       `json:"error,omitempty"`
	ForwardedAt time.Time    `json:"forwarded_at,omitzero"`
	Seq         int64        `json:"remote_seq,omitempty"`
}

// To is the recipient as the sender named it: ROLE@HOST.
func (o Outbound) To() string { return o.Role + "@" + o.Host }

// OutboundRequest is a message for a role on another host, recorded in
// the outbox (party inbox send --to ROLE@HOST inside a pane,
// POST /v1/outbox).
type OutboundRequest struct {
	ID      string `json:"id,omitempty"` // the idempotency key; "" makes one
	Host    string `json:"host"`
	Session string `json:"session,omitempty"`
	To      string `json:"to"` // the role there
	Thread  string `json:"thread_id,omitempty"`
	// From names the sender when the caller is not a runtime; a
	// runtime's messages are from its role, whatever this says.
	From string `json:"from,omitempty"`
	Text string `json:"text"`
}

// ForwardPolicy is how the outbox retries a host that does not answer:
// First, doubled at each failure up to Cap; an entry that still fails
// after GiveUp since it was recorded fails for good.
type ForwardPolicy struct {
	First, Cap time.Duration
	GiveUp     time.Duration
}

// DefaultForwardPolicy retries after 1 s, doubling up to a minute, for a
// day.
var DefaultForwardPolicy = ForwardPolicy{First: time.Second, Cap: time.Minute, GiveUp: 24 * time.Hour}

// backoff is the wait after failed attempt n (n ≥ 1).
func (p ForwardPolicy) backoff(n int) time.Duration {
	d := p.First
	for i := 1; i < n && d < p.Cap; i++ {
		d *= 2
	}
	return min(d, p.Cap)
}

// ForwardEventKind is what happened to an outbox entry.
type ForwardEventKind string

// The events of an outbox entry.
const (
	// FwTry: the loop is about to forward the entry (its host's oldest
	// pending one, due).
	FwTry ForwardEventKind = "try"
	// FwSent: the host there recorded the message (or had: its id) as
	// its Seq.
	FwSent ForwardEventKind = "sent"
	// FwError: the forward failed with Code and Err; Refused says the
	// supervisor there answered and refused it (a role it lacks, a text
	// over its limit): trying again cannot help.
	FwError ForwardEventKind = "error"
)

// ForwardEvent is an event of an outbox entry.
type ForwardEvent struct {
	Kind    ForwardEventKind
	At      time.Time
	Seq     int64
	Code    string
	Err     string
	Refused bool
}

// The outbox's actions and audit events.
const (
	// ActForward: forward the entry to its host and report FwSent or
	// FwError.
	ActForward ActionKind = "forward"

	AuditOutbound      = "message_outbound"
	AuditForwarded     = "message_forwarded"
	AuditForwardRetry  = "message_forward_retry"
	AuditForwardFailed = "message_forward_failed"
)

// StepForward applies ev to outbox entry o under p: the entry as it now
// stands and the actions that follow, or ErrStale (wrapped) and o
// unchanged for an event that does not apply (anything but a try's
// outcome once it is over). Pure, like Step: time comes with the event.
// A try is saved before it is made, so a supervisor killed during it
// makes it again (with the same id, which the host there takes once).
func StepForward(p ForwardPolicy, o Outbound, ev ForwardEvent) (Outbound, []Action, error) {
	if o.State != FwdPending {
		return o, nil, fmt.Errorf("%s in %s: %w", ev.Kind, o.State, ErrStale)
	}
	n := o
	switch ev.Kind {
	case FwTry:
		if ev.At.Before(o.NextAt) {
			return o, nil, fmt.Errorf("%s before %s: %w", ev.Kind, o.NextAt.Format(time.RFC3339), ErrStale)
		}
		n.Attempts++
		n.NextAt = ev.At.Add(p.backoff(n.Attempts))
		return n, []Action{{Kind: ActForward}}, nil
	case FwSent:
		n.State, n.Seq, n.ForwardedAt, n.NextAt = FwdForwarded, ev.Seq, ev.At, time.Time{}
		n.Code, n.Error = "", ""
		return n, []Action{{Kind: ActAudit, Audit: AuditForwarded, Result: fmt.Sprint(ev.Seq), Detail: n.To()}}, nil
	case FwError:
		n.Code, n.Error = ev.Code, ev.Err
		if ev.Refused || ev.At.Sub(o.At) >= p.GiveUp {
			n.State, n.NextAt = FwdFailed, time.Time{}
			return n, []Action{{Kind: ActAudit, Audit: AuditForwardFailed, Result: ev.Code, Detail: ev.Err}}, nil
		}
		return n, []Action{{Kind: ActAudit, Audit: AuditForwardRetry, Result: ev.Code, Detail: ev.Err}}, nil
	}
	return o, nil, fmt.Errorf("event %q: %w", ev.Kind, ErrStale)
}

// Refused says err is the answer of a supervisor that refused a call
// (an error status below 500): the same call would be refused again.
// Anything else (no connection, no supervisor serving, no answer) may
// go when tried again.
func Refused(err error) bool {
	var api *APIError
	return errors.As(err, &api) && api.Status >= 400 && api.Status < http.StatusInternalServerError
}
