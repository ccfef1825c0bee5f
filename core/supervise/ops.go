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
	// one runtime, and in one thread, per minute; more are deferred.
	PerRuntime, PerThread int
	// MaxTurns is how many triggers a thread may complete without
	// progress (a message from outside the agents) and SameAnswers how
	// many answers in a row may be alike before the thread is blocked.
	MaxTurns, SameAnswers int
}

// DefaultLimits are the built-in bounds.
var DefaultLimits = Limits{MaxText: 64 << 10, PerRuntime: 30, PerThread: 60, MaxTurns: 20, SameAnswers: 3}

// DefaultThread is the thread of a trigger or message that names none.
const DefaultThread = "default"

// idPattern is what trigger and thread ids may hold: they go into the
// envelope's header line, so no space, bracket or newline.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$`)

// CheckID says whether id can name a trigger or a thread.
func CheckID(what, id string) error {
	if !idPattern.MatchString(id) {
		return fmt.Errorf("%s %q: 1-128 of letters, digits and . _ : @ / -, starting with a letter or digit: %w", what, id, ErrBadInput)
	}
	return nil
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

// HashToken is what the store keeps of a runtime token.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// NewToken is a fresh runtime token.
func NewToken() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
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
	return s, nil
}

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

// Submit records a trigger, idempotent by its id.
func (o *Ops) Submit(ctx context.Context, req TriggerRequest) (Trigger, bool, error) {
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
	if req.Force && (strings.TrimSpace(req.Actor) == "" || strings.TrimSpace(req.Why) == "") {
		return Trigger{}, false, fmt.Errorf("--force needs --actor and --why: an override is audited: %w", ErrBadInput)
	}
	text, err := o.text("trigger", req.Text)
	if err != nil {
		return Trigger{}, false, err
	}
	if existing, err := o.Store.Trigger(ctx, req.ID); err == nil {
		if existing.Role != req.Role || existing.Thread != req.Thread || existing.Reason != req.Reason || existing.Text != text {
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
	t := Trigger{ID: req.ID, Role: req.Role, Thread: req.Thread, Reason: req.Reason, Text: text,
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
	} else if got.Role != t.Role || got.Thread != t.Thread || got.Reason != t.Reason || got.Text != t.Text {
		return got, false, fmt.Errorf("trigger %s exists with another role, thread, reason or text: %w", req.ID, ErrIDConflict)
	}
	return got, created, nil
}

// audits are the audit events among acts, for trigger t.
func audits(t Trigger, acts []Action) []AuditEvent {
	var out []AuditEvent
	for _, a := range acts {
		if a.Kind == ActAudit {
			out = append(out, AuditEvent{At: t.Updated, Kind: a.Audit, Trigger: t.ID, Agent: t.Role, Thread: t.Thread, Result: a.Result, Detail: a.Detail})
		}
	}
	return out
}

// Trigger is the recorded trigger id.
func (o *Ops) Trigger(ctx context.Context, id string) (Trigger, error) {
	return o.Store.Trigger(ctx, id)
}

// Triggers lists the recorded triggers.
func (o *Ops) Triggers(ctx context.Context, f TriggerFilter) ([]Trigger, error) {
	return o.Store.Triggers(ctx, f)
}

// Runtimes are the session's runtimes.
func (o *Ops) Runtimes(ctx context.Context) ([]Runtime, error) {
	return o.Store.Runtimes(ctx)
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
	if _, err := o.runtime(ctx, req.To); err != nil {
		return Message{}, err
	}
	from := c.Runtime
	if from == "" {
		from = strings.TrimSpace(req.From)
		if from == "" {
			from = "operator"
		}
		if strings.ContainsAny(from, "\n\r") || len(from) > 64 {
			return Message{}, fmt.Errorf("from %q: one line of at most 64 bytes: %w", from, ErrBadInput)
		}
	}
	now := o.Clock.Now().UTC()
	m, err := o.Store.AddMessage(ctx, Message{Thread: req.Thread, From: from, To: req.To, Text: text, At: now})
	if err != nil {
		return Message{}, err
	}
	if c.Runtime == "" {
		if th, err := o.Store.Thread(ctx, req.Thread); err == nil && th.Turns != 0 {
			th.Turns = 0
			if err := o.Store.PutThread(ctx, th); err != nil {
				return m, err
			}
		}
	}
	if err := o.Store.Audit(ctx, AuditEvent{At: now, Kind: AuditMessage, Agent: req.To, Thread: req.Thread, Result: from}); err != nil {
		return m, err
	}
	o.wake()
	return m, nil
}

// Read returns the calling runtime's unread messages (of thread, or of
// every thread) and moves its read cursors past them: the acknowledgement
// the supervisor trusts most.
func (o *Ops) Read(ctx context.Context, c Caller, thread string) ([]Message, error) {
	if c.Runtime == "" {
		return nil, fmt.Errorf("inbox read works from inside an agent's pane (its PARTY_RUNTIME_TOKEN says whose inbox): %w", ErrToken)
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
		if err := o.Store.Audit(ctx, AuditEvent{At: now, Kind: AuditCursor, Agent: c.Runtime, Thread: th, Result: fmt.Sprint(seq)}); err != nil {
			return msgs, err
		}
	}
	o.wake()
	return msgs, nil
}

// Heartbeat records that the calling runtime is alive (status: active,
// idle or what it says).
func (o *Ops) Heartbeat(ctx context.Context, c Caller, status string) error {
	if c.Runtime == "" {
		return fmt.Errorf("heartbeat works from inside an agent's pane (its PARTY_RUNTIME_TOKEN says whose): %w", ErrToken)
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

// Unblock lets an auto-blocked thread go on.
func (o *Ops) Unblock(ctx context.Context, thread string) (Thread, error) {
	th, err := o.Store.Thread(ctx, thread)
	if err != nil {
		return th, err
	}
	th.Blocked, th.BlockedWhy, th.Turns, th.Same = false, "", 0, 0
	if err := o.Store.PutThread(ctx, th); err != nil {
		return th, err
	}
	if err := o.Store.Audit(ctx, AuditEvent{At: o.Clock.Now().UTC(), Kind: AuditUnblocked, Thread: thread}); err != nil {
		return th, err
	}
	o.wake()
	return th, nil
}

// Messages are the messages of a thread.
func (o *Ops) Messages(ctx context.Context, thread string) ([]Message, error) {
	return o.Store.Messages(ctx, thread, 0)
}

// ThreadAfter is th after one of its triggers completed with answer: a
// turn more, and blocked once it reached l's limits.
func ThreadAfter(l Limits, th Thread, answer string) Thread {
	th.Turns++
	h := sha256.Sum256([]byte(strings.Join(strings.Fields(answer), " ")))
	digest := hex.EncodeToString(h[:8])
	if digest == th.LastAnswer {
		th.Same++
	} else {
		th.LastAnswer, th.Same = digest, 1
	}
	switch {
	case th.Blocked:
	case l.SameAnswers > 0 && th.Same >= l.SameAnswers:
		th.Blocked, th.BlockedWhy = true, fmt.Sprintf("the same answer %d times in a row", th.Same)
	case l.MaxTurns > 0 && th.Turns >= l.MaxTurns:
		th.Blocked, th.BlockedWhy = true, fmt.Sprintf("%d turns without progress", th.Turns)
	}
	return th
}

// rateLimit says until when role (in thread) must wait under l, or zero.
func rateLimit(ctx context.Context, s *Store, l Limits, now time.Time, role, thread string) (time.Time, string, error) {
	since := now.Add(-time.Minute)
	if l.PerRuntime > 0 {
		n, err := s.CountSent(ctx, role, "", since)
		if err != nil {
			return time.Time{}, "", err
		}
		if n >= l.PerRuntime {
			return now.Add(10 * time.Second), fmt.Sprintf("%d triggers to %s in the last minute (limit %d)", n, role, l.PerRuntime), nil
		}
	}
	if l.PerThread > 0 {
		n, err := s.CountSent(ctx, "", thread, since)
		if err != nil {
			return time.Time{}, "", err
		}
		if n >= l.PerThread {
			return now.Add(10 * time.Second), fmt.Sprintf("%d triggers in thread %s in the last minute (limit %d)", n, thread, l.PerThread), nil
		}
	}
	return time.Time{}, "", nil
}
