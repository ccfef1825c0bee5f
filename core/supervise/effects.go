package supervise

import (
	"context"
)

// Effects are what the loop does to the world; core/party wires them over
// tmux, the delivery path, the agents' events and the waits.
type Effects interface {
	// Scan lists the session's runtimes as tmux shows them now (status
	// Ready, or Offline for a dead pane; TokenHash from the launch
	// record), and whether each pane runs its agent.
	Scan(ctx context.Context) ([]Seen, error)
	// Restart starts rt again from its launch spec with a new token, in
	// its pane (respawned) or, when the pane is gone, in a new window;
	// with resume, the agent resumes its session rt.AgentSession (its
	// history on screen). It returns the new token's hash.
	Restart(ctx context.Context, rt Runtime, resume bool) (tokenHash string, err error)
	// Resume answers t through rt's agent session without its TUI: try
	// t.Fallback.Tries of the agent's headless resume with Envelope(t),
	// or the one a supervisor that stopped left running or done (a try is
	// never started twice). Its report says whether the envelope reached
	// the agent.
	Resume(ctx context.Context, rt Runtime, t Trigger) ResumeReport
	// Spawn starts a fresh agent (a new session) in rt's pane, unless
	// someone types there; it returns the new token's hash.
	Spawn(ctx context.Context, rt Runtime) (tokenHash string, err error)
	// Probe looks at rt before a delivery: no class when it may go;
	// OperatorBusy while someone types there (held while their text, a
	// dialog, a menu or copy mode holds the pane); PaneDead or
	// TargetNotFound.
	Probe(ctx context.Context, rt Runtime) Probed
	// Prepare makes text ready for rt's agent: the text to paste and its
	// turn, which starts now (saved before the send).
	Prepare(ctx context.Context, rt Runtime, text string) (string, *TurnRecord, error)
	// Send delivers text once through the delivery path.
	Send(ctx context.Context, rt Runtime, text string) SendReport
	// Await waits for the answer of turn; Class is PaneDead when the pane
	// died.
	Await(ctx context.Context, rt Runtime, turn TurnRecord) (answer string, class Class, err error)
	// Look says what rt's pane and events show of t.
	Look(ctx context.Context, rt Runtime, t Trigger) Sighting
	// Reclaim looks at rt for t, whose delivery a supervisor that stopped
	// left unfinished (t.Turn, saved before the paste, says what it pasted
	// where): its text in the input box is party's own, not someone's
	// draft, and is taken back (InBox; the error says it could not be);
	// else Reached says whether the envelope reached the agent.
	Reclaim(ctx context.Context, rt Runtime, t Trigger) (Sighting, error)
}

// PanesMarker is what Effects may have besides (as Pulser): a cheap
// look that says whether a Scan could find anything new, so that the loop
// scans between tmux's notifications only when it could.
type PanesMarker interface {
	// PanesMark is a text that stays the same as long as Scan would find
	// what it found when the text was last what it is; ok false when it
	// cannot tell (a Scan can).
	PanesMark(ctx context.Context) (mark string, ok bool)
}

// Budgeter is what Effects may have besides: the team's budgets, looked
// at before each delivery.
type Budgeter interface {
	// OverBudget says which spent budget bounds rt ("" when none does): it
	// takes no new trigger but the operator's forced ones.
	OverBudget(ctx context.Context, rt Runtime) string
}

// AuditArchive is what Effects may have besides: a place where the audit
// events that last (Lasting) outlive the store's retention (Loop.Keep).
type AuditArchive interface {
	// Archive keeps evs, audit rows a prune is about to delete, each once:
	// those a prune that then deleted nothing gave it before are not kept
	// twice. kept is called once the rows are deleted.
	Archive(ctx context.Context, evs []AuditEvent) (kept func(), err error)
}

// Seen is a runtime as a scan found it.
type Seen struct {
	Runtime
	RunsAgent bool
}

// SendReport is how a delivery ended.
type SendReport struct {
	Outcome string // submitted, queued, unconfirmed; "" when it failed
	Acked   bool   // the agent's own submit event showed it taken
	Class   Class  // the failure's class
	Reached bool   // failed, but pasted all the same
	// Pasted says the text was in the pane before the failure: a pane
	// that went after it may have let the agent take it.
	Pasted bool
	// Note is what the delivery noticed, for the audit trail (keys
	// someone typed that went with the text).
	Note string
	Err  error
}

// ResumeReport is how a headless resume ended: with Answer, or with Err.
type ResumeReport struct {
	Answer string
	// Class is why it failed: FallbackRequired when no resume can work (no
	// session known, an agent without sessions, a program that does not
	// start); the turn's class (TurnFailed) when the headless turn ran on
	// the envelope and ended without an answer.
	Class Class
	// Reached says the envelope reached the agent, or may have: the
	// headless turn ran on it (its output records the turn), or the
	// process ended without saying whether it read it (killed). A resume
	// that failed before the agent could read the envelope (the program
	// did not start, the session is unknown, Codex's session has another
	// writer) did not reach it.
	Reached bool
	Err     error
}

// Probed is what a look at a runtime before a delivery found (Probe).
type Probed struct {
	Class Class  // "" when a delivery may go
	Why   string // what was seen
	// Held: the operator's text, a dialog, a menu or copy mode holds the
	// pane (OperatorBusy): not even a forced trigger goes in.
	Held bool
}

// Sighting is what a look at a runtime found of a trigger.
type Sighting struct {
	Reached bool   // the envelope is in the pane or the agent's events
	InBox   bool   // Reclaim: the text was in the input box, not submitted
	Ack     string // AckEvent, AckLine or AckAnswer when the agent acknowledged it
	Idle    bool   // the agent waits for input
	Busy    bool   // the agent works on a turn (its screen says so)
	Session string // the agent's own session id, when its events name it
}

// Forwarder takes the outbox's messages to the hosts they are for
// (core/party wires it over the API bridge): what Loop.Forward is.
type Forwarder interface {
	// Forward records o in the inbox of o.Role on o.Host (in o.Session
	// there, else the one session whose panes carry the role) with its
	// id o.ID and sender o.Origin: a message of that id recorded there
	// already is taken as it is, never twice.
	Forward(ctx context.Context, o Outbound) ForwardReport
}

// ForwardReport is how a forward ended: with the message's Seq there,
// or with Err, its Code in the error table, and Refused when the
// supervisor there answered and refused it (Refused).
type ForwardReport struct {
	Seq     int64
	Code    string
	Refused bool
	Err     error
}
