package supervise

import (
	"context"
	"time"
)

// TriggerRequest is a trigger as a caller asks for it (party trigger,
// POST /v1/triggers).
type TriggerRequest struct {
	ID   string `json:"id,omitempty"` // the idempotency key; "" makes one
	Role string `json:"role"`
	// AgentID is the role under its old name, read for one release
	// (an older party said agent_id): a request may give either, not two
	// different ones.
	AgentID string `json:"agent_id,omitempty"`
	Thread  string `json:"thread_id,omitempty"` // "" is the thread "default"
	Reason  string `json:"reason,omitempty"`
	Text    string `json:"text"`
	// Force injects at once although the operator is busy; Actor and
	// Why are then required and audited.
	Force bool   `json:"force,omitempty"`
	Actor string `json:"actor,omitempty"`
	Why   string `json:"why,omitempty"`
}

// MessageRequest is a message for a role's inbox (party inbox send,
// POST /v1/messages).
type MessageRequest struct {
	// ID is the idempotency key: a message given again with the id of
	// one recorded is that one, recorded once ("" for none).
	ID     string `json:"id,omitempty"`
	Thread string `json:"thread_id"`
	To     string `json:"to"`
	// From names the sender when the caller is not a runtime (a bridge,
	// a person); a runtime's messages are from its role, whatever this
	// says.
	From string `json:"from,omitempty"`
	Text string `json:"text"`
}

// Caller is who makes a call: the operator (the unix socket's owner, or
// a holder of the TCP bearer token), or a runtime proven by its token.
type Caller struct {
	// Runtime is the role of the runtime whose token came with the call;
	// "" is the operator.
	Runtime string
	// Name is the operator's name, when it gave one (a named operator of
	// party mcp token: OperatorHeader): the audit's actor, no authority.
	Name string
}

// Service is what the API and the CLI call: the supervisor's operations
// over its store. Ops implements it. Every call names its Caller, and the
// one table Rules says what each caller may do, whatever the door.
type Service interface {
	// Submit records a trigger (idempotent by id: the same id with the
	// same content returns the recorded trigger and created false) and
	// wakes the supervisor.
	Submit(ctx context.Context, c Caller, req TriggerRequest) (t Trigger, created bool, err error)
	// Trigger is the recorded trigger id (ErrNotFound).
	Trigger(ctx context.Context, c Caller, id string) (Trigger, error)
	// Runtimes are the session's runtimes.
	Runtimes(ctx context.Context, c Caller) ([]Runtime, error)
	// Send records a message in its thread and wakes the supervisor,
	// which triggers the recipient.
	Send(ctx context.Context, c Caller, req MessageRequest) (Message, error)
	// Outsend records a message for a role on another host in the
	// outbox (idempotent by id, as Submit) and wakes the supervisor,
	// which forwards it.
	Outsend(ctx context.Context, c Caller, req OutboundRequest) (o Outbound, created bool, err error)
	// Outbox are the outbox's entries of thread ("": every thread),
	// oldest first.
	Outbox(ctx context.Context, c Caller, thread string) ([]Outbound, error)
	// Caller is the runtime whose token is token ("" is the operator);
	// ErrToken when no runtime holds it.
	Caller(ctx context.Context, token string) (Caller, error)
	// Unblock lets a thread a safeguard blocked go on (ErrNotFound).
	Unblock(ctx context.Context, c Caller, thread string) (Thread, error)
	// Triggers are the recorded triggers f keeps, oldest first.
	Triggers(ctx context.Context, c Caller, f TriggerFilter) ([]Trigger, error)
	// Events are the audit trail's events after seq afterSeq, at most
	// limit.
	Events(ctx context.Context, c Caller, afterSeq int64, limit int) ([]AuditEvent, error)
	// Read is the calling runtime's unread messages (of thread, or all),
	// its read cursors moved past them.
	Read(ctx context.Context, c Caller, thread string) ([]Message, error)
	// Messages are a thread's messages.
	Messages(ctx context.Context, c Caller, thread string) ([]Message, error)
	// Heartbeat records that the calling runtime is alive.
	Heartbeat(ctx context.Context, c Caller, status string) error
	// Talked records in the audit a talk the caller had with a role.
	Talked(ctx context.Context, c Caller, r TalkRecord) error
	// Stop stops the runtime of role gracefully, its agent given grace
	// (zero: the default) to exit.
	Stop(ctx context.Context, c Caller, role string, grace time.Duration) (Runtime, error)
	// Changed is closed at the service's next change: a long-polling
	// reader takes it before it reads, then waits on it.
	Changed() <-chan struct{}
}

// StopRequest stops a runtime (POST /v1/runtimes/{role}/stop): Grace is
// a duration ("5s"), "" for the default.
type StopRequest struct {
	Grace string `json:"grace,omitempty"`
}

// TalkRecord is a talk that ended (POST /v1/talks): party talk types
// into the pane itself, then tells the session's supervisor, whose audit
// says who talked to whom (talk_ended). The text is not kept, only its
// length.
type TalkRecord struct {
	Role    string `json:"role"`    // the pane's role talked to
	Outcome string `json:"outcome"` // the talk's outcome (answered, timeout, …)
	MS      int64  `json:"ms"`      // how long it took
	Chars   int    `json:"chars"`   // the text's length, in characters
}

// HeartbeatRequest is a runtime's heartbeat (POST /v1/heartbeat).
type HeartbeatRequest struct {
	Status string `json:"status,omitempty"`
}

// ReadRequest asks for the caller's unread messages (POST /v1/inbox/read).
type ReadRequest struct {
	Thread string `json:"thread_id,omitempty"`
}
