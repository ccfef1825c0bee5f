package supervise

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/partyhq/party/core/wait"
)

// RuntimeStatus is where a runtime stands, as party runtimes shows it.
type RuntimeStatus string

// The runtime statuses. Starting, Ready, Offline and Failed come from tmux
// and the agent's screen; Triggering, AwaitingAck, Retrying and Deferred
// from the runtime's open trigger.
const (
	Starting    RuntimeStatus = "starting"
	Ready       RuntimeStatus = "ready"
	Triggering  RuntimeStatus = "triggering"
	AwaitingAck RuntimeStatus = "awaiting_ack"
	Retrying    RuntimeStatus = "retrying"
	Deferred    RuntimeStatus = "deferred"
	Failed      RuntimeStatus = "failed"
	Offline     RuntimeStatus = "offline"
	// Stopping is a runtime party runtime stop is ending: not restarted.
	Stopping RuntimeStatus = "stopping"
	// FallbackResume and SpawnRecovery are a runtime whose open trigger
	// is answered through the agent's resumed session without its TUI, or
	// waits for a fresh agent in its pane.
	FallbackResume RuntimeStatus = "fallback_resume"
	SpawnRecovery  RuntimeStatus = "spawn_recovery"
	// Stalled is a runtime whose agent is busy and showed no sign of life
	// (no screen change, no event) for supervise.stallAfter: the triggers
	// waiting behind its turn take the fallback.
	Stalled RuntimeStatus = "stalled"
	// OverBudget is a runtime whose next trigger is held because a budget
	// that bounds it is spent (BudgetExceeded).
	OverBudget RuntimeStatus = "over_budget"
)

// Runtime is an agent pane party started, as the supervisor records it.
type Runtime struct {
	ID        string `json:"runtime_id"`   // stable across restarts of the pane: session/role
	Role      string `json:"role"`         // its role
	Workspace string `json:"workspace_id"` // the folder its agent works in: its worktree, else the session's
	Agent     string `json:"agent"`        // claude, codex, gemini or generic
	// AgentSession is the agent's own session id (Claude session_id,
	// Codex thread id, Gemini session_id), learnt from its events.
	AgentSession  string        `json:"agent_session_id,omitempty"`
	Session       string        `json:"tmux_session"`
	Window        string        `json:"tmux_window"`
	Pane          string        `json:"tmux_pane"`
	Target        string        `json:"target"` // <session>:<window>.<pane index>
	PID           int           `json:"pid,omitempty"`
	Status        RuntimeStatus `json:"status"`
	OperatorBusy  bool          `json:"operator_busy"`
	LastHeartbeat time.Time     `json:"last_heartbeat_at,omitzero"`
	Heartbeat     string        `json:"heartbeat_status,omitempty"` // what the last heartbeat said
	LastTrigger   string        `json:"last_trigger_id,omitempty"`
	// Tools says party's MCP tools are wired into its agent: its triggers
	// name them (inbox_read) instead of the shell commands.
	Tools bool `json:"mcp_tools,omitempty"`
	// TokenHash is the SHA-256 of the runtime's token (hex): the token
	// itself is only in the pane's environment.
	TokenHash string    `json:"-"`
	Updated   time.Time `json:"updated_at"`
	// Recovery is its health between looks (reconciliation).
	Recovery Recovery `json:"recovery,omitzero"`
}

// Row is the runtime as party runtimes prints it.
func (r Runtime) Row() []string {
	busy := "-"
	if r.OperatorBusy {
		busy = "operator"
	}
	return []string{r.Role, r.Agent, r.Target, r.Pane, string(r.Status), busy, orDash(r.LastTrigger), orDash(r.AgentSession)}
}

// TriggerStatus is where a trigger stands.
type TriggerStatus string

// The trigger statuses: queued → (deferred) → triggering → delivered →
// (retrying → delivered …) → acked → completed, or failed with a Class.
const (
	Queued      TriggerStatus = "queued"
	TDeferred   TriggerStatus = "deferred"
	TTriggering TriggerStatus = "triggering" // a delivery is under way
	Delivered   TriggerStatus = "delivered"  // party saw it submitted or queued; awaiting the ack
	TRetrying   TriggerStatus = "retrying"   // no ack in time; backing off
	Acked       TriggerStatus = "acked"      // the agent took it; awaiting the turn's answer
	// TFallbackResume: the ack never came (ACK_TIMEOUT) or the operator never
	// let go (DEFER_TIMEOUT): the agent's own session is resumed without
	// its TUI to answer the trigger.
	TFallbackResume TriggerStatus = "fallback_resume"
	// TSpawnRecovery: the resume failed; a fresh agent is started in the pane
	// and the trigger goes to it with a summary of its thread.
	TSpawnRecovery TriggerStatus = "spawn_recovery"
	Completed      TriggerStatus = "completed"
	TFailed        TriggerStatus = "failed"
	unknownTrg     TriggerStatus = ""
)

// Open says whether t is not yet over.
func (t TriggerStatus) Open() bool { return t != Completed && t != TFailed && t != unknownTrg }

// ParseTriggerStatus reads a status name.
func ParseTriggerStatus(s string) (TriggerStatus, error) {
	switch t := TriggerStatus(s); t {
	case Queued, TDeferred, TTriggering, Delivered, TRetrying, Acked, TFallbackResume, TSpawnRecovery, Completed, TFailed:
		return t, nil
	}
	return "", fmt.Errorf("unknown trigger status %q (queued, deferred, triggering, delivered, retrying, acked, fallback_resume, spawn_recovery, completed, failed): %w", s, ErrBadInput)
}

// Class is why a trigger failed (or, for OperatorBusy, RateLimited and
// BudgetExceeded, why it waits).
type Class string

// The failure classes of the supervisor spec.
const (
	TargetNotFound   Class = "TARGET_NOT_FOUND"
	PaneDead         Class = "PANE_DEAD"
	SendKeysError    Class = "SEND_KEYS_ERROR"
	AckTimeout       Class = "ACK_TIMEOUT"
	OperatorBusy     Class = "OPERATOR_BUSY"
	DeferTimeout     Class = "DEFER_TIMEOUT"
	RegistryDrift    Class = "REGISTRY_DRIFT"
	RateLimited      Class = "TRIGGER_RATE_LIMITED"
	ThreadBlocked    Class = "THREAD_AUTO_BLOCKED"
	FallbackRequired Class = "FALLBACK_REQUIRED"
	// AgentStalled: the trigger waited behind the turn of an agent that
	// stalled; it takes the fallback as after ACK_TIMEOUT.
	AgentStalled Class = "AGENT_STALLED"
	// BudgetExceeded: a budget that bounds the runtime is spent; its new
	// triggers are held (deferred) until one lets them go (a new day, a
	// limit raised) or the operator forces one.
	BudgetExceeded Class = "BUDGET_EXCEEDED"
	// TurnFailed is a turn that took the trigger and ended in the agent's
	// error (the wait's TURN_FAILED): the class of a completed trigger.
	TurnFailed Class = "TURN_FAILED"
)

// Ack sources, most trusted first.
const (
	AckCursor    = "cursor"    // the thread's read cursor advanced by the runtime
	AckHeartbeat = "heartbeat" // party heartbeat from the pane after the trigger
	AckEvent     = "event"     // the agent's own submit or turn event for the envelope
	AckLine      = "line"      // an ACK_TRIGGER:<id> line on the pane
	AckAnswer    = "answer"    // the turn ended with an answer (no earlier sign)
	AckResume    = "resume"    // answered by the agent's resumed session (fallback)
)

// Trigger is one piece of work for a runtime, and its life.
type Trigger struct {
	ID     string `json:"id"`
	Role   string `json:"role"`
	Thread string `json:"thread_id"`
	Reason string `json:"reason,omitempty"`
	// From is the runtime that asked for the trigger (its token's role);
	// "" is the operator, or the supervisor's own inbox trigger (Reason
	// "inbox"). The safeguards count only the agents' own exchange.
	From string `json:"from,omitempty"`
	// By is the named operator that asked for it (Caller.Name).
	By     string        `json:"by,omitempty"`
	Text   string        `json:"text"`
	Status TriggerStatus `json:"status"`
	Class  Class         `json:"class,omitempty"` // failed: why; deferred: OPERATOR_BUSY or TRIGGER_RATE_LIMITED
	Error  string        `json:"error,omitempty"` // what went wrong, in words
	// Attempts is how many deliveries were made, Waits how many ack
	// windows were opened (1 + retries used).
	Attempts int `json:"attempts"`
	Waits    int `json:"ack_waits"`
	// Outcome is the delivery's (submitted, queued, unconfirmed).
	Outcome string `json:"outcome,omitempty"`
	// Reached says the text provably reached the agent (pasted at least):
	// it is never delivered again.
	Reached bool `json:"reached,omitempty"`
	// Force injects even when the operator is busy; Actor and Why say
	// who and why (audited as an override).
	Force bool   `json:"force,omitempty"`
	Actor string `json:"actor,omitempty"`
	Why   string `json:"why,omitempty"`

	Created     time.Time `json:"created_at"`
	Updated     time.Time `json:"updated_at"`
	DeferredAt  time.Time `json:"deferred_at,omitzero"`
	QuietSince  time.Time `json:"quiet_since,omitzero"`
	NextAt      time.Time `json:"next_at,omitzero"` // deferred, retrying: when to look again
	DeliveredAt time.Time `json:"delivered_at,omitzero"`
	// AckBy is when the ack is due; zero while the agent is busy with an
	// earlier turn (the trigger is queued behind it).
	AckBy       time.Time `json:"ack_by,omitzero"`
	AckedAt     time.Time `json:"acked_at,omitzero"`
	AckSource   string    `json:"ack_source,omitempty"`
	CompletedAt time.Time `json:"completed_at,omitzero"`
	Answer      *string   `json:"answer,omitempty"`
	// Turn is what the wait for the answer needs to go on after a restart.
	Turn *TurnRecord `json:"turn,omitempty"`
	// Fallback is the recovery the trigger took when delivery could not
	// finish it: the resume of the agent's session, then a fresh agent.
	Fallback *Fallback `json:"fallback,omitempty"`
	// Preface is the summary of the thread a fresh agent gets before the
	// trigger (spawn recovery).
	Preface string `json:"preface,omitempty"`
}

// Fallback is a trigger's recovery.
type Fallback struct {
	// From is the class that started it (ACK_TIMEOUT or DEFER_TIMEOUT),
	// Why its words.
	From Class  `json:"from"`
	Why  string `json:"why,omitempty"`
	// Tries counts the resumes started; Errors says how each failed.
	Tries  int      `json:"tries"`
	Errors []string `json:"errors,omitempty"`
	// Spawned says a fresh agent took the trigger over: no second
	// fallback follows.
	Spawned bool      `json:"spawned,omitempty"`
	Started time.Time `json:"started_at"`
}

// TurnRecord is the durable part of the turn a delivered trigger started.
type TurnRecord struct {
	Pane   string `json:"pane"`
	Offset int64  `json:"offset"`          // the event log's size before the send
	Nonce  string `json:"nonce,omitempty"` // the marker of a marker wait
	// Mark is where the pane stood just before the envelope was pasted
	// (its rows then): a marker wait finds its turn after it, as talk's
	// does, even where the agent shows the envelope shortened and without
	// the nonce. Saved with the trigger before the send, so a supervisor
	// restarted after a kill finds the turn too. Nil on the alternate
	// screen and in records of older supervisors.
	Mark   *wait.Mark `json:"mark,omitempty"`
	Prompt string     `json:"prompt"` // the text as delivered
	Hooks  bool       `json:"hooks"`
	// PID is the pane's process (the agent) when the turn began: a pane
	// that runs another now (its agent restarted, its tmux server gone
	// and started again, reusing pane ids) ran the turn in an agent that
	// is gone, and the turn with it. Zero in records of older supervisors.
	PID int `json:"pid,omitempty"`
	// Since and Rollouts say where the agent's transcript files stood
	// when the turn began (Codex's rollouts).
	Since    time.Time        `json:"since,omitzero"`
	Rollouts map[string]int64 `json:"rollouts,omitempty"`
}

// Row is the trigger as party trigger list prints it.
func (t Trigger) Row() []string {
	return []string{t.ID, t.Role, t.Thread, string(t.Status), orDash(string(t.Class)), orDash(t.AckSource), t.Created.UTC().Format(time.RFC3339)}
}

// Envelope is the one message a trigger delivers: its id, thread and
// reason in a header line, the text, and a closing line.
func Envelope(t Trigger) string {
	head := "[BRIDGE_TRIGGER id=" + t.ID + " thread=" + t.Thread
	if t.Preface != "" {
		head = t.Preface + "\n" + head
	}
	if t.Reason != "" {
		head += " reason=" + t.Reason
	}
	return head + "]\n" + t.Text + "\n[/BRIDGE_TRIGGER]"
}

// EnvelopeMark is the part of the envelope that names trigger id: found in
// an agent's event or on its screen, it shows the trigger reached it.
func EnvelopeMark(id string) string { return "[BRIDGE_TRIGGER id=" + id + " " }

// AckLineOf is the line an agent may print to acknowledge trigger id.
func AckLineOf(id string) string { return "ACK_TRIGGER:" + id }

// Thread is a conversation that messages and triggers belong to.
type Thread struct {
	ID      string    `json:"thread_id"`
	Created time.Time `json:"created_at"`
	// Turns counts the turns of the agents' exchange since the last
	// progress (Exchange says which count, Progress what progress is).
	Turns int `json:"turns"`
	// LastAnswer is a digest of the last answer, Same how many answers in
	// a row had it.
	LastAnswer string `json:"-"`
	Same       int    `json:"same_answers"`
	Blocked    bool   `json:"blocked"`
	BlockedWhy string `json:"blocked_reason,omitempty"`
}

// Message is one message of a thread.
type Message struct {
	Seq int64 `json:"seq"`
	// ID is the idempotency key it was sent with (a message another
	// host's outbox forwarded): recorded once; "" for none.
	ID     string    `json:"id,omitempty"`
	Thread string    `json:"thread_id"`
	From   string    `json:"from"` // a role (when a runtime sent it), else the sender a bridge named
	To     string    `json:"to"`   // a role
	Text   string    `json:"text"`
	At     time.Time `json:"at"`
	// Forward is, for a message to another host (To is ROLE@HOST), its
	// outbox entry here: how its forwarding stands. Nil for the others.
	Forward *Forward `json:"forward,omitempty"`
}

// AuditEvent is one line of the supervisor's audit trail.
type AuditEvent struct {
	Seq     int64     `json:"seq"`
	At      time.Time `json:"at"`
	Kind    string    `json:"event"` // runtime_registered, trigger_sent, trigger_deferred, ack_received, trigger_failed, override, …
	Trigger string    `json:"trigger_id,omitempty"`
	Role    string    `json:"role,omitempty"`
	Thread  string    `json:"thread_id,omitempty"`
	Result  string    `json:"result,omitempty"`
	Detail  string    `json:"detail,omitempty"`
}

// Errors of the supervisor.
var (
	// ErrBadInput is a request that cannot be taken (empty text, a text
	// over the limit, a bad id).
	ErrBadInput = errors.New("bad input")
	// ErrNotFound is a trigger, thread or runtime that does not exist.
	ErrNotFound = errors.New("not found")
	// ErrUnmanaged is a role whose pane party did not start: the
	// supervisor cannot trigger it (FALLBACK_REQUIRED).
	ErrUnmanaged = errors.New("unmanaged pane")
	// ErrToken is a call from a pane with a wrong, stale or missing
	// runtime token.
	ErrToken = errors.New("bad runtime token")
	// ErrForbidden is a call the caller may not make (Rules): a runtime
	// that lifts a block, forces a trigger, reads another's work.
	ErrForbidden = errors.New("not allowed to this caller")
	// ErrBlocked is a thread auto-blocked by a safeguard.
	ErrBlocked = errors.New("thread auto-blocked")
	// ErrIDConflict is an id given again with other content: a
	// trigger's (another text or target), a message's (another host,
	// role, thread, sender or text).
	ErrIDConflict = errors.New("id reused with other content")
	// ErrStore is a database party cannot use (corrupt, newer schema).
	ErrStore = errors.New("supervisor store unusable")
	// ErrNotRunning is a supervisor that does not run.
	ErrNotRunning = errors.New("supervisor not running")
	// ErrNoAnswer is a request the supervisor took (the connection was
	// made) and never answered: it died on it. Whether it did what was
	// asked is unknown; only a request that names what it makes (a
	// trigger's id) may be made again.
	ErrNoAnswer = errors.New("the supervisor went away without answering")
	// ErrRunning is a supervisor that runs already.
	ErrRunning = errors.New("supervisor already running")
)

// FailedError is a trigger that failed, as --wait reports it.
type FailedError struct {
	ID    string
	Class Class
	Msg   string
}

func (e *FailedError) Error() string {
	return fmt.Sprintf("trigger %s failed: %s: %s", e.ID, e.Class, e.Msg)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// String is the event as party supervise events prints it: time, kind,
// then its fields.
func (e AuditEvent) String() string {
	s := e.At.UTC().Format(time.RFC3339Nano) + " " + e.Kind
	for _, kv := range [][2]string{{"trigger", e.Trigger}, {"role", e.Role}, {"thread", e.Thread}, {"result", e.Result}, {"detail", e.Detail}} {
		if kv[1] != "" {
			s += " " + kv[0] + "=" + strconv.Quote(kv[1])
		}
	}
	return s
}
