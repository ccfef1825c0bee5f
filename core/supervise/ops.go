package supervise

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/deliver"
)

// Limits are the supervisor's bounds and safeguards (config keys
// supervise.*).
type Limits struct {
	// MaxText is the largest trigger or message text, in bytes.
	MaxText int
	// PerRuntime and PerThread are how many triggers may be delivered to
	// one runtime, and in one thread, per Window (zero: a minute); more
	// are deferred.
	PerRuntime, PerThread int
	Window                time.Duration
	// MaxTurns is how many triggers a thread may complete without
	// progress (a message from outside the agents) and SameAnswers how
	// many answers in a row may be alike before the thread is blocked.
	MaxTurns, SameAnswers int
}

// DefaultLimits are the built-in bounds.
var DefaultLimits = Limits{MaxText: 64 << 10, PerRuntime: 30, PerThread: 60, Window: time.Minute, MaxTurns: 20, SameAnswers: 3}

// DefaultThread is the thread of a trigger or message that names none.
const DefaultThread = "default"

// idPattern is what trigger and thread ids may hold. They are names:
// they go into the envelope's header line (so no space, bracket or
// newline) and into nothing that is a path (no '/'; and no "..", so an id
// never reads as one). A file named after a trigger is named by its hash
// all the same (FileKey): an id from an older database may hold anything.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$`)

// CheckID says whether id can name a trigger or a thread.
func CheckID(what, id string) error {
	if !idPattern.MatchString(id) || strings.Contains(id, "..") {
		return fmt.Errorf("%s %q: 1-128 of letters, digits and . _ : @ -, starting with a letter or digit, without \"..\": %w", what, id, ErrBadInput)
	}
	return nil
}

// FileKey is the name a file kept for trigger id is built from: a digest of
// the id, never its text, so no id (whatever an older database holds) can
// name a path outside the directory it is put in.
func FileKey(id string) string {
	h := sha256.Sum256([]byte(id))
	return "tr-" + hex.EncodeToString(h[:16])
}

// Ops are the supervisor's operations over its store: what the CLI and
// the API call. They record and wake; the daemon's loop does the rest.
type Ops struct {
	Store  *Store
	Clock  clock.Clock
	Policy Policy
	Limits Limits
	// Managed says, for a role the store has no runtime of yet, whether
	// it names a pane party started (its runtime registers at the
	// supervisor's next look) or one it did not (agents.json, a pane
	// without a runtime token: FALLBACK_REQUIRED); an error wrapping
	// ErrNotFound when no pane has the role.
	Managed func(ctx context.Context, role string) (bool, error)
	// Wake wakes the daemon; nil wakes nobody.
	Wake func()
	// StopPane ends the agent of a runtime that is stopping, within grace
	// (zero: its default), and says how it went; nil refuses Stop.
	StopPane func(ctx context.Context, rt Runtime, grace time.Duration) (how string, err error)
	// Self is this host's name as the hosts its outbox forwards to
	// record it in a sender (ROLE@SELF); "" refuses Outsend.
	Self string
}

var _ Service = (*Ops)(nil)

func (o *Ops) wake() {
	if o.Wake != nil {
		o.Wake()
	}
}

// NewID is a fresh trigger id.
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "tr-" + hex.EncodeToString(b[:])
}

// NewMessageID is a fresh message id (an outbox entry's).
func NewMessageID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "msg-" + hex.EncodeToString(b[:])
}

// text checks a trigger's or message's text: control characters removed
// (as delivery would), not empty, within the limit.
func (o *Ops) text(what, s string) (string, error) {
	s = deliver.Sanitize(s)
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("%s: empty text: %w", what, ErrBadInput)
	}
	if n, limit := len(s), o.Limits.MaxText; limit > 0 && n > limit {
		return "", fmt.Errorf("%s: the text is %d bytes, over the limit of %d (supervise.maxTextBytes): %w", what, n, limit, ErrBadInput)
	}
	if tag := envelopeTag(s); tag != "" {
		return "", fmt.Errorf("%s: the text holds %q, the envelope's own tag: an agent would read a second envelope in it: %w", what, tag, ErrBadInput)
	}
	return s, nil
}

// envelopeTag is the first of the envelope's tags ("[BRIDGE_TRIGGER",
// "[/BRIDGE_TRIGGER", in any case) in s, or "". A trigger's or message's
// text never holds one: the text goes inside an envelope (and a thread's
// messages into the summary of the next), and a tag in it would let its
// writer close the envelope and forge another, with an id, thread and
// reason of their choosing. Refused, not escaped: party never alters a
// user's text.
func envelopeTag(s string) string { return envelopeTagPattern.FindString(s) }

var envelopeTagPattern = regexp.MustCompile(`(?i)\[/?BRIDGE_TRIGGER`)

// runtime is the runtime of role, ErrUnmanaged for a pane party did not
// start and ErrNotFound for no pane at all.
func (o *Ops) runtime(ctx context.Context, role string) (Runtime, error) {
	rt, err := o.Store.Runtime(ctx, role)
	if !errors.Is(err, ErrNotFound) || o.Managed == nil {
		return rt, err
	}
	managed, merr := o.Managed(ctx, role)
	switch {
	case merr != nil:
		return rt, fmt.Errorf("no runtime with role %q: %w", role, merr)
	case !managed:
		return rt, fmt.Errorf("%s is a pane party did not start; the supervisor cannot trigger it (FALLBACK_REQUIRED): %w", role, ErrUnmanaged)
	}
	return Runtime{Role: role}, nil // it registers at the supervisor's next look
}

// ReasonInbox is the reason of the supervisor's own triggers for unread
// messages; no caller may give it.
const ReasonInbox = "inbox"

// Submit records a trigger, idempotent by its id. A runtime's trigger is
// from it (Trigger.From), and any override it asks for is refused: only
// the operator may force (Rules).
func (o *Ops) Submit(ctx context.Context, c Caller, req TriggerRequest) (Trigger, bool, error) {
	if err := Allow(c, OpSubmit); err != nil {
		return Trigger{}, false, err
	}
	if req.Force {
		if err := Allow(c, OpForce); err != nil {
			return Trigger{}, false, err
		}
	}
	switch {
	case req.Role == "":
		req.Role, req.AgentID = req.AgentID, ""
	case req.AgentID != "" && req.AgentID != req.Role:
		return Trigger{}, false, fmt.Errorf("role %q and agent_id %q (its old name) differ: %w", req.Role, req.AgentID, ErrBadInput)
	}
	req.AgentID = ""
	if strings.TrimSpace(req.Role) == "" {
		return Trigger{}, false, fmt.Errorf("a trigger needs the role it is for (role): %w", ErrBadInput)
	}
	if req.Thread == "" {
		req.Thread = DefaultThread
	}
	if req.ID == "" {
		req.ID = NewID()
	}
	if err := CheckID("trigger id", req.ID); err != nil {
		return Trigger{}, false, err
	}
	if err := CheckID("thread", req.Thread); err != nil {
		return Trigger{}, false, err
	}
	if strings.ContainsAny(req.Reason, "]\n\r") || len(req.Reason) > 200 {
		return Trigger{}, false, fmt.Errorf("reason %q: one line of at most 200 bytes without ']': %w", req.Reason, ErrBadInput)
	}
	if req.Reason == ReasonInbox {
		return Trigger{}, false, fmt.Errorf("reason %q is the supervisor's own (its triggers for unread messages): %w", req.Reason, ErrBadInput)
	}
	if req.Force && (strings.TrimSpace(req.Actor) == "" || strings.TrimSpace(req.Why) == "") {
		return Trigger{}, false, fmt.Errorf("--force needs --actor and --why: an override is audited: %w", ErrBadInput)
	}
	text, err := o.text("trigger", req.Text)
	if err != nil {
		return Trigger{}, false, err
	}
	if existing, err := o.Store.Trigger(ctx, req.ID); err == nil {
		if existing.Role != req.Role || existing.Thread != req.Thread || existing.Reason != req.Reason || existing.Text != text || existing.From != c.Runtime {
			return existing, false, fmt.Errorf("trigger %s exists with another role, thread, reason or text: %w", req.ID, ErrIDConflict)
		}
		return existing, false, nil
	}
	if _, err := o.runtime(ctx, req.Role); err != nil {
		return Trigger{}, false, err
	}
	if th, err := o.Store.Thread(ctx, req.Thread); err == nil && th.Blocked {
		return Trigger{}, false, fmt.Errorf("thread %s: %s (party trigger unblock %s): %w", th.ID, th.BlockedWhy, th.ID, ErrBlocked)
	}
	now := o.Clock.Now().UTC()
	t := Trigger{ID: req.ID, Role: req.Role, Thread: req.Thread, Reason: req.Reason, From: c.Runtime, By: c.Name, Text: text,
		Force: req.Force, Actor: req.Actor, Why: req.Why}
	t, acts, err := Step(o.Policy, t, Event{Kind: EvQueued, At: now})
	if err != nil {
		return Trigger{}, false, err
	}
	got, created, err := o.Store.AddTrigger(ctx, t, audits(t, acts)...)
	if err != nil {
		return got, created, err
	}
	if created {
		o.wake()
	} else if got.Role != t.Role || got.Thread != t.Thread || got.Reason != t.Reason || got.Text != t.Text || got.From != t.From {
		return got, false, fmt.Errorf("trigger %s exists with another role, thread, reason or text: %w", req.ID, ErrIDConflict)
	}
	return got, created, nil
}

// audits are the audit events among acts, for trigger t.
func audits(t Trigger, acts []Action) []AuditEvent {
	var out []AuditEvent
	for _, a := range acts {
		if a.Kind == ActAudit {
			out = append(out, AuditEvent{At: t.Updated, Kind: a.Audit, Trigger: t.ID, Role: t.Role, Thread: t.Thread, Result: a.Result, Detail: a.Detail})
		}
	}
	return out
}

// Trigger is the recorded trigger id; a runtime sees only the triggers
// to it or from it.
func (o *Ops) Trigger(ctx context.Context, c Caller, id string) (Trigger, error) {
	if err := Allow(c, OpTrigger); err != nil {
		return Trigger{}, err
	}
	t, err := o.Store.Trigger(ctx, id)
	if err == nil && !c.Owns(t.Role, t.From) {
		return Trigger{}, fmt.Errorf("trigger %s is neither to nor from runtime %s: %w", id, c.Runtime, ErrForbidden)
	}
	return t, err
}

// Triggers lists the recorded triggers; a runtime's list holds only the
// triggers to it or from it.
func (o *Ops) Triggers(ctx context.Context, c Caller, f TriggerFilter) ([]Trigger, error) {
	if err := Allow(c, OpTriggers); err != nil {
		return nil, err
	}
	if !c.Operator() {
		f.Involving = c.Runtime // in the query, so that a limit counts only these
	}
	ts, err := o.Store.Triggers(ctx, f)
	return ownOnly(c, ts, err, func(t Trigger) (string, string) { return t.Role, t.From })
}

// Runtimes are the session's runtimes.
func (o *Ops) Runtimes(ctx context.Context, c Caller) ([]Runtime, error) {
	if err := Allow(c, OpRuntimes); err != nil {
		return nil, err
	}
	return o.Store.Runtimes(ctx)
}

// Stop stops the runtime of role: marked stopping, its agent ended
// (StopPane), then deregistered, with an event. Its open triggers fail
// TARGET_NOT_FOUND at the daemon's next look.
func (o *Ops) Stop(ctx context.Context, c Caller, role string, grace time.Duration) (Runtime, error) {
	if err := Allow(c, OpStop); err != nil {
		return Runtime{}, err
	}
	if o.StopPane == nil {
		return Runtime{}, fmt.Errorf("stop %s: only the supervisor stops a runtime: %w", role, ErrNotRunning)
	}
	rt, err := o.Store.Runtime(ctx, role)
	if err != nil {
		return rt, err
	}
	rt.Status, rt.Updated = Stopping, o.Clock.Now().UTC()
	if err := o.Store.PutRuntime(ctx, rt); err != nil {
		return rt, err
	}
	how, err := o.StopPane(ctx, rt, grace)
	if err != nil {
		return rt, err
	}
	if err := o.Store.DeleteRuntime(ctx, rt.ID); err != nil {
		return rt, err
	}
	rt.Status = Offline
	err = o.Store.Audit(ctx, AuditEvent{At: o.Clock.Now().UTC(), Kind: AuditStopped, Role: rt.Role, Result: rt.Pane, Detail: how})
	o.wake()
	return rt, err
}

// Changed is closed at the store's next commit.
func (o *Ops) Changed() <-chan struct{} { return o.Store.Changed() }

// Events are the audit trail's events after seq afterSeq, at most limit.
func (o *Ops) Events(ctx context.Context, c Caller, afterSeq int64, limit int) ([]AuditEvent, error) {
	if err := Allow(c, OpEvents); err != nil {
		return nil, err
	}
	return o.Store.Events(ctx, afterSeq, limit)
}

// Caller is the runtime whose token is token ("" is the operator).
func (o *Ops) Caller(ctx context.Context, token string) (Caller, error) {
	if token == "" {
		return Caller{}, nil
	}
	rt, err := o.Store.RuntimeByToken(ctx, token)
	if err != nil {
		return Caller{}, fmt.Errorf("the runtime token is not one of this session's runtimes (stale after a restart, or forged): %w", ErrToken)
	}
	return Caller{Runtime: rt.Role}, nil
}

// Send records a message for a role's inbox; a message from outside the
// agents is progress for its thread.
func (o *Ops) Send(ctx context.Context, c Caller, req MessageRequest) (Message, error) {
	if err := Allow(c, OpSend); err != nil {
		return Message{}, err
	}
	if req.Thread == "" {
		req.Thread = DefaultThread
	}
	if err := CheckID("thread", req.Thread); err != nil {
		return Message{}, err
	}
	text, err := o.text("message", req.Text)
	if err != nil {
		return Message{}, err
	}
	from, err := sender(c, req.From)
	if err != nil {
		return Message{}, err
	}
	want := Message{ID: req.ID, Thread: req.Thread, From: from, To: req.To, Text: text}
	if req.ID != "" {
		if err := CheckID("message id", req.ID); err != nil {
			return Message{}, err
		}
		// Sent again (a forward retried after a lost answer): the one
		// recorded, whatever became of its recipient since.
		if m, err := o.Store.MessageByID(ctx, req.ID); err == nil {
			return sameMessage(m, want)
		}
	}
	if _, err := o.runtime(ctx, req.To); err != nil {
		return Message{}, err
	}
	want.At = o.Clock.Now().UTC()
	now := want.At
	m, created, err := o.Store.AddMessageOnce(ctx, want)
	if err != nil {
		return Message{}, err
	}
	if !created {
		return sameMessage(m, want)
	}
	if c.Operator() {
		if th, err := o.Store.Thread(ctx, req.Thread); err == nil && th != Progress(th) {
			if err := o.Store.PutThread(ctx, Progress(th)); err != nil {
				return m, err
			}
		}
	}
	if err := o.Store.Audit(ctx, AuditEvent{At: now, Kind: AuditMessage, Role: req.To, Thread: req.Thread, Result: from}); err != nil {
		return m, err
	}
	o.wake()
	return m, nil
}

// sameMessage is m, recorded under the id of want, unless it holds
// another thread, sender, recipient or text (ErrIDConflict).
func sameMessage(m, want Message) (Message, error) {
	if m.Thread != want.Thread || m.From != want.From || m.To != want.To || m.Text != want.Text {
		return m, fmt.Errorf("message %s exists with another thread, sender, recipient or text: %w", want.ID, ErrIDConflict)
	}
	return m, nil
}

// sender is who a message of c's is from: its runtime's role, else the
// name the operator gave (from), else "operator".
func sender(c Caller, from string) (string, error) {
	if c.Runtime != "" {
		return c.Runtime, nil
	}
	from = strings.TrimSpace(from)
	if from == "" {
		from = "operator"
	}
	if strings.ContainsAny(from, "\n\r") || len(from) > 64 {
		return "", fmt.Errorf("from %q: one line of at most 64 bytes: %w", from, ErrBadInput)
	}
	return from, nil
}

// Outsend records a message for a role on another host in the outbox,
// idempotent by its id (made here when the request has none): from the
// calling runtime (its token's role, never a name the request gives),
// with this host's name for the host there (From@Self). The loop
// forwards it (Loop.Forward); it returns as recorded, pending.
func (o *Ops) Outsend(ctx context.Context, c Caller, req OutboundRequest) (Outbound, bool, error) {
	if err := Allow(c, OpSendOut); err != nil {
		return Outbound{}, false, err
	}
	if o.Self == "" {
		return Outbound{}, false, fmt.Errorf("a message to another host is forwarded by the supervisor, which this is not: %w", ErrNotRunning)
	}
	if req.Thread == "" {
		req.Thread = DefaultThread
	}
	if req.ID == "" {
		req.ID = NewMessageID()
	}
	for _, f := range [][2]string{{"message id", req.ID}, {"thread", req.Thread}, {"host", req.Host}, {"role", req.To}} {
		if err := CheckID(f[0], f[1]); err != nil {
			return Outbound{}, false, err
		}
	}
	if req.Session != "" {
		if err := CheckID("session", req.Session); err != nil {
			return Outbound{}, false, err
		}
	}
	text, err := o.text("message", req.Text)
	if err != nil {
		return Outbound{}, false, err
	}
	from, err := sender(c, req.From)
	if err != nil {
		return Outbound{}, false, err
	}
	now := o.Clock.Now().UTC()
	want := Outbound{ID: req.ID, Thread: req.Thread, From: from, Origin: from + "@" + o.Self, Role: req.To, Text: text, At: now,
		Forward: Forward{Host: req.Host, Session: req.Session, State: FwdPending, NextAt: now}}
	got, created, err := o.Store.AddOutbound(ctx, want)
	if err != nil {
		return got, false, err
	}
	if !created {
		if got.Thread != want.Thread || got.From != want.From || got.Host != want.Host || got.Session != want.Session ||
			got.Role != want.Role || got.Text != want.Text {
			return got, false, fmt.Errorf("message %s exists with another host, session, role, thread, sender or text: %w", req.ID, ErrIDConflict)
		}
		return got, false, nil
	}
	if err := o.Store.Audit(ctx, AuditEvent{At: now, Kind: AuditOutbound, Role: got.To(), Thread: got.Thread, Result: from, Detail: got.ID}); err != nil {
		return got, true, err
	}
	o.wake()
	return got, true, nil
}

// Outbox are the outbox's entries of thread ("": every thread); a
// runtime's list holds only its own.
func (o *Ops) Outbox(ctx context.Context, c Caller, thread string) ([]Outbound, error) {
	if err := Allow(c, OpMessages); err != nil {
		return nil, err
	}
	if thread != "" {
		if err := CheckID("thread", thread); err != nil {
			return nil, err
		}
	}
	out, err := o.Store.Outbox(ctx, thread)
	return ownOnly(c, out, err, func(m Outbound) (string, string) { return m.From, m.From })
}

// Read returns the calling runtime's unread messages (of thread, or of
// every thread) and moves its read cursors past them: the acknowledgement
// the supervisor trusts most.
func (o *Ops) Read(ctx context.Context, c Caller, thread string) ([]Message, error) {
	if err := Allow(c, OpRead); err != nil {
		return nil, err
	}
	if thread != "" {
		if err := CheckID("thread", thread); err != nil {
			return nil, err
		}
	}
	msgs, err := o.Store.Unread(ctx, c.Runtime, thread)
	if err != nil {
		return nil, err
	}
	last := map[string]int64{}
	for _, m := range msgs {
		last[m.Thread] = max(last[m.Thread], m.Seq)
	}
	now := o.Clock.Now().UTC()
	for th, seq := range last {
		if _, err := o.Store.Advance(ctx, c.Runtime, th, seq, now); err != nil {
			return msgs, err
		}
		if err := o.Store.Audit(ctx, AuditEvent{At: now, Kind: AuditCursor, Role: c.Runtime, Thread: th, Result: fmt.Sprint(seq)}); err != nil {
			return msgs, err
		}
	}
	o.wake()
	return msgs, nil
}

// Heartbeat records that the calling runtime is alive (status: active,
// idle or what it says).
func (o *Ops) Heartbeat(ctx context.Context, c Caller, status string) error {
	if err := Allow(c, OpHeartbeat); err != nil {
		return err
	}
	if status == "" {
		status = "active"
	}
	if strings.ContainsAny(status, "\n\r") || len(status) > 32 {
		return fmt.Errorf("status %q: one word: %w", status, ErrBadInput)
	}
	if err := o.Store.Heartbeat(ctx, c.Runtime, status, o.Clock.Now().UTC()); err != nil {
		return err
	}
	o.wake()
	return nil
}

// Talked records in the audit the talk r the caller had (AuditTalk): to
// r.Role, from the calling runtime, else the operator by its name (a
// named operator's) or as "operator".
func (o *Ops) Talked(ctx context.Context, c Caller, r TalkRecord) error {
	if err := Allow(c, OpTalked); err != nil {
		return err
	}
	if err := CheckID("role", r.Role); err != nil {
		return err
	}
	if r.Outcome == "" || len(r.Outcome) > 32 || strings.ContainsAny(r.Outcome, " \n\r") || r.MS < 0 || r.Chars < 0 {
		return fmt.Errorf("talk to %s: outcome %q (one word), ms %d, chars %d: %w", r.Role, r.Outcome, r.MS, r.Chars, ErrBadInput)
	}
	from, err := sender(c, c.Name)
	if err != nil {
		return err
	}
	err = o.Store.Audit(ctx, AuditEvent{At: o.Clock.Now().UTC(), Kind: AuditTalk, Role: r.Role, Result: from,
		Detail: fmt.Sprintf("%s after %d ms, %d characters", r.Outcome, r.MS, r.Chars)})
	if err != nil {
		return err
	}
	o.wake()
	return nil
}

// Unblock lets an auto-blocked thread go on: the operator's call only.
func (o *Ops) Unblock(ctx context.Context, c Caller, thread string) (Thread, error) {
	if err := Allow(c, OpUnblock); err != nil {
		return Thread{}, err
	}
	th, err := o.Store.Thread(ctx, thread)
	if err != nil {
		return th, err
	}
	th = Progress(th)
	th.Blocked, th.BlockedWhy = false, ""
	if err := o.Store.PutThread(ctx, th); err != nil {
		return th, err
	}
	if err := o.Store.Audit(ctx, AuditEvent{At: o.Clock.Now().UTC(), Kind: AuditUnblocked, Thread: thread}); err != nil {
		return th, err
	}
	o.wake()
	return th, nil
}

// Messages are the messages of a thread; a runtime's list holds only the
// messages from it or to it.
func (o *Ops) Messages(ctx context.Context, c Caller, thread string) ([]Message, error) {
	if err := Allow(c, OpMessages); err != nil {
		return nil, err
	}
	msgs, err := o.Store.Messages(ctx, thread, 0)
	return ownOnly(c, msgs, err, func(m Message) (string, string) { return m.From, m.To })
}

// ownOnly is what of items c may see (Caller.Owns), by the two roles each
// one concerns; all of them for the operator.
func ownOnly[T any](c Caller, items []T, err error, roles func(T) (string, string)) ([]T, error) {
	if err != nil || c.Operator() {
		return items, err
	}
	var own []T
	for _, it := range items {
		if a, b := roles(it); c.Owns(a, b) {
			own = append(own, it)
		}
	}
	return own, nil
}

// Exchange says whether trigger t is a turn of the agents' own exchange,
// which the thread's safeguards count: a trigger a runtime asked for, or
// the supervisor's trigger for unread messages. The operator's trigger is
// not: it is progress.
func Exchange(t Trigger) bool { return t.From != "" || t.Reason == ReasonInbox }

// Progress is th after progress, something from outside the agents (the
// operator's trigger, a message without a runtime's token, an unblock): a
// new exchange starts, with no turn and no answer counted. A block stays
// (Unblock lifts it).
func Progress(th Thread) Thread {
	th.Turns, th.Same, th.LastAnswer = 0, 0, ""
	return th
}

// ThreadAfter is th after its trigger t completed. The operator's trigger
// is progress (Progress). A turn of the agents' exchange (Exchange) counts:
// the thread is blocked once the exchange ran l.MaxTurns turns, or gave
// the same answer (t's, else its error, compared without case or spacing
// differences) l.SameAnswers times in a row.
func ThreadAfter(l Limits, th Thread, t Trigger) Thread {
	if !Exchange(t) {
		return Progress(th)
	}
	answer := t.Error
	if t.Answer != nil {
		answer = *t.Answer
	}
	th.Turns++
	h := sha256.Sum256([]byte(strings.ToLower(strings.Join(strings.Fields(answer), " "))))
	digest := hex.EncodeToString(h[:8])
	if digest == th.LastAnswer {
		th.Same++
	} else {
		th.LastAnswer, th.Same = digest, 1
	}
	switch {
	case th.Blocked:
	case l.SameAnswers > 0 && th.Same >= l.SameAnswers:
		th.Blocked, th.BlockedWhy = true, fmt.Sprintf("the agents gave the same answer %d times in a row", th.Same)
	case l.MaxTurns > 0 && th.Turns >= l.MaxTurns:
		th.Blocked, th.BlockedWhy = true, fmt.Sprintf("%d turns of the agents without progress", th.Turns)
	}
	return th
}

// rateLimit says until when role (in thread) must wait under l, or zero:
// until the oldest delivery counted leaves the window, when a new look
// may find room.
func rateLimit(ctx context.Context, s *Store, l Limits, now time.Time, role, thread string) (time.Time, string, error) {
	window := l.Window
	if window <= 0 {
		window = time.Minute
	}
	since := now.Add(-window)
	for _, lim := range []struct {
		n            int
		role, thread string
		what         string
	}{{l.PerRuntime, role, "", "to " + role}, {l.PerThread, "", thread, "in thread " + thread}} {
		if lim.n <= 0 {
			continue
		}
		n, oldest, err := s.Sent(ctx, lim.role, lim.thread, since)
		if err != nil {
			return time.Time{}, "", err
		}
		if n >= lim.n {
			until := oldest.Add(window)
			if !until.After(now) {
				until = now.Add(time.Second)
			}
			return until, fmt.Sprintf("%d triggers %s in the last %s (limit %d)", n, lim.what, window, lim.n), nil
		}
	}
	return time.Time{}, "", nil
}
