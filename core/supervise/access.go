package supervise

import (
	"fmt"
)

// Op is one operation of the supervisor, as the rule table names it.
type Op string

// The operations: each is one method of Ops, whatever door (the party
// command, the HTTP API) the call came through.
const (
	OpSubmit    Op = "trigger"
	OpForce     Op = "trigger --force"
	OpTrigger   Op = "trigger show"
	OpTriggers  Op = "trigger list"
	OpUnblock   Op = "trigger unblock"
	OpRuntimes  Op = "runtimes"
	OpSend      Op = "inbox send"
	OpSendOut   Op = "inbox send ROLE@HOST"
	OpRead      Op = "inbox read"
	OpMessages  Op = "inbox list"
	OpHeartbeat Op = "heartbeat"
	OpEvents    Op = "supervise events"
	OpStop      Op = "runtime stop"
	OpTalked    Op = "talk"
)

// Who says which callers may make a call.
type Who int

// The callers, as a set.
const (
	// Operator is a call without a runtime token: the person (or bridge)
	// who owns the session.
	Operator Who = 1 << iota
	// AnyRuntime is a call with a runtime's token.
	AnyRuntime
	// OwnRuntime is a runtime's call about itself only: its own triggers
	// (to it, or asked for by it), its own inbox, the messages from or to
	// it.
	OwnRuntime
)

// Rules is the one table of who may call what. Ops checks every call
// against it (Ops.Allow), so the party command and the API decide alike:
// a runtime never lifts a safeguard, never overrides the operator's
// draft, never reads another runtime's work.
var Rules = map[Op]Who{
	OpSubmit:   Operator | AnyRuntime,
	OpForce:    Operator, // an override of the operator's own draft is theirs
	OpTrigger:  Operator | OwnRuntime,
	OpTriggers: Operator | OwnRuntime,
	OpUnblock:  Operator, // the safeguard stops agents that loop
	OpRuntimes: Operator | AnyRuntime,
	OpSend:     Operator | AnyRuntime,
	// A runtime's message to another host is recorded here, from it
	// (its token's role), and forwarded by the supervisor as the
	// operator there (a relay: ROLE@SELF is its sender there).
	OpSendOut:   Operator | AnyRuntime,
	OpRead:      OwnRuntime,
	OpMessages:  Operator | OwnRuntime,
	OpHeartbeat: OwnRuntime,
	OpEvents:    Operator,
	OpStop:      Operator,
	// A talk is party talk's own delivery; the supervisor only hears of
	// it, from whoever talked.
	OpTalked: Operator | AnyRuntime,
}

// Operator says whether c is the operator (no runtime token).
func (c Caller) Operator() bool { return c.Runtime == "" }

// Allow says whether c may call op: nil, or an error wrapping ErrForbidden
// (ErrToken for an operator's call of a runtime's own operation: it needs
// the pane's token). A runtime allowed OwnRuntime only must still be
// checked against what it touches (Caller.Owns).
func Allow(c Caller, op Op) error {
	who, ok := Rules[op]
	switch {
	case !ok:
		return fmt.Errorf("%s: no rule says who may call it: %w", op, ErrForbidden)
	case c.Operator() && who&Operator != 0:
		return nil
	case c.Operator():
		return fmt.Errorf("%s works from inside an agent's pane (its PARTY_RUNTIME_TOKEN says whose): %w", op, ErrToken)
	case who&(AnyRuntime|OwnRuntime) != 0:
		return nil
	}
	return fmt.Errorf("%s is the operator's; runtime %s may not call it: %w", op, c.Runtime, ErrForbidden)
}

// Owns says whether c may see what belongs to the roles given (a trigger's
// target and asker, a message's sender and recipient): the operator sees
// everything, a runtime what is its own.
func (c Caller) Owns(roles ...string) bool {
	if c.Operator() {
		return true
	}
	for _, r := range roles {
		if r == c.Runtime {
			return true
		}
	}
	return false
}
