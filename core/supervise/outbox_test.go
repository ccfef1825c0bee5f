package supervise

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
)

func outbound(mod ...func(*Outbound)) Outbound {
	o := Outbound{ID: "msg-1", Thread: "th", From: "claude", Origin: "claude@a", Role: "codex", Text: "hi", At: t0,
		Forward: Forward{Host: "b", State: FwdPending, NextAt: t0}}
	for _, m := range mod {
		m(&o)
	}
	return o
}

// TestForwardPhaseTable is every edge of the outbox's policy: from a
// state, on an event, to a state with its actions.
func TestForwardPhaseTable(t *testing.T) {
	p := DefaultForwardPolicy
	tried := func(n int) func(*Outbound) {
		return func(o *Outbound) { o.Attempts, o.NextAt = n, t0.Add(p.backoff(n)) }
	}
	tests := []struct {
		name  string
		from  Outbound
		ev    ForwardEvent
		want  ForwardState
		acts  []string
		stale bool
		then  func(t *testing.T, got Outbound)
	}{
		{name: "a recorded entry is tried at once", from: outbound(), ev: ForwardEvent{Kind: FwTry, At: t0},
			want: FwdPending, acts: []string{"forward"}, then: func(t *testing.T, got Outbound) {
				assert.Equal(t, 1, got.Attempts)
				assert.Equal(t, t0.Add(time.Second), got.NextAt, "the next try, saved before this one is made")
			}},
		{name: "a try before its time does not apply", from: outbound(tried(1)), ev: ForwardEvent{Kind: FwTry, At: t0},
			stale: true},
		{name: "the host took it", from: outbound(tried(1)), ev: ForwardEvent{Kind: FwSent, At: after(time.Second), Seq: 7},
			want: FwdForwarded, acts: []string{"audit:message_forwarded"}, then: func(t *testing.T, got Outbound) {
				assert.Equal(t, int64(7), got.Seq)
				assert.Equal(t, after(time.Second), got.ForwardedAt)
				assert.True(t, got.NextAt.IsZero())
			}},
		{name: "an unreachable host is tried again", from: outbound(tried(1)),
			ev:   ForwardEvent{Kind: FwError, At: after(time.Second), Code: "HOST_UNREACHABLE", Err: "refused"},
			want: FwdPending, acts: []string{"audit:message_forward_retry"}, then: func(t *testing.T, got Outbound) {
				assert.Equal(t, "HOST_UNREACHABLE", got.Code)
				assert.Equal(t, "refused", got.Error)
				assert.Equal(t, t0.Add(time.Second), got.NextAt, "the try's own next time stands")
			}},
		{name: "a host that refused it fails it", from: outbound(tried(1)),
			ev:   ForwardEvent{Kind: FwError, At: after(time.Second), Code: "ROLE_NOT_FOUND", Err: "no role", Refused: true},
			want: FwdFailed, acts: []string{"audit:message_forward_failed"}, then: func(t *testing.T, got Outbound) {
				assert.Equal(t, "ROLE_NOT_FOUND", got.Code)
				assert.True(t, got.NextAt.IsZero())
			}},
		{name: "a failure after the give-up time fails it", from: outbound(tried(3)),
			ev:   ForwardEvent{Kind: FwError, At: after(p.GiveUp), Code: "HOST_TIMEOUT", Err: "silent"},
			want: FwdFailed, acts: []string{"audit:message_forward_failed"}},
		{name: "a report on a forwarded entry does not apply",
			from: outbound(func(o *Outbound) { o.State = FwdForwarded }), ev: ForwardEvent{Kind: FwSent, At: t0, Seq: 8}, stale: true},
		{name: "a try of a failed entry does not apply",
			from: outbound(func(o *Outbound) { o.State = FwdFailed }), ev: ForwardEvent{Kind: FwTry, At: t0}, stale: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, acts, err := StepForward(p, tt.from, tt.ev)
			if tt.stale {
				require.ErrorIs(t, err, ErrStale)
				assert.Equal(t, tt.from, got, "a stale event leaves the entry as it was")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.State)
			assert.Equal(t, tt.acts, kinds(acts))
			if tt.then != nil {
				tt.then(t, got)
			}
		})
	}
}

// TestForwardBackoffInVirtualTime: a host that does not answer is tried
// at 0, 1, 3, 7 … s (the wait doubling from 1 s to its cap of 60 s),
// each try made when it is due and never before, until the give-up time;
// the first failure after it fails the entry, with the last error's code.
func TestForwardBackoffInVirtualTime(t *testing.T) {
	p := DefaultForwardPolicy
	o := outbound()
	now := t0
	var tries []time.Duration
	for o.State == FwdPending {
		n, acts, err := StepForward(p, o, ForwardEvent{Kind: FwTry, At: now})
		require.NoError(t, err)
		require.Equal(t, []string{"forward"}, kinds(acts))
		_, _, err = StepForward(p, n, ForwardEvent{Kind: FwTry, At: n.NextAt.Add(-time.Millisecond)})
		require.ErrorIs(t, err, ErrStale, "no try before the next is due")
		tries = append(tries, now.Sub(t0))
		now = now.Add(2 * time.Second) // the forward's ssh took 2 s to fail
		o, _, err = StepForward(p, n, ForwardEvent{Kind: FwError, At: now, Code: "HOST_UNREACHABLE", Err: "refused"})
		require.NoError(t, err)
		now = latest(now, o.NextAt)
		require.Less(t, len(tries), 10000, "it gives up")
	}
	want := []time.Duration{0, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, 64 * time.Second}
	assert.Equal(t, want, tries[:len(want)], "got tries at %v", tries[:len(want)])
	for i := len(want); i < len(tries); i++ {
		assert.Equal(t, time.Minute, tries[i]-tries[i-1], "try %d: capped at a minute", i)
	}
	assert.Equal(t, FwdFailed, o.State)
	assert.Equal(t, "HOST_UNREACHABLE", o.Code)
	assert.GreaterOrEqual(t, now.Sub(t0), p.GiveUp)
	assert.Less(t, now.Sub(t0), p.GiveUp+2*time.Minute, "it gave up at the first failure after the give-up time")
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// TestRefused: only the answer of a supervisor that refused a call is
// final; no connection, no supervisor and a server error may go later.
func TestRefused(t *testing.T) {
	assert.True(t, Refused(&APIError{Status: http.StatusNotFound, Code: "NOT_FOUND"}))
	assert.True(t, Refused(&APIError{Status: http.StatusBadRequest, Code: "BAD_REQUEST"}))
	assert.False(t, Refused(&APIError{Status: http.StatusServiceUnavailable, Code: "NOT_RUNNING"}))
	assert.False(t, Refused(&APIError{Status: http.StatusInternalServerError, Code: "INTERNAL"}))
	assert.False(t, Refused(ErrNoAnswer))
	assert.False(t, Refused(ErrNotRunning))
}

// TestMessageIDTakenOnce: a message sent again with its id (a forward
// retried after its answer was lost) is recorded once: the second send
// returns the first's message, adds no row, no audit line, no trigger's
// cause; the same id with another text is a conflict.
func TestMessageIDTakenOnce(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	o := &Ops{Store: s, Clock: clock.Real{}, Policy: DefaultPolicy, Limits: DefaultLimits}
	require.NoError(t, s.PutRuntime(ctx, Runtime{ID: "s/codex", Role: "codex", Agent: "codex", Status: Ready}))
	req := MessageRequest{ID: "msg-1", Thread: "th", To: "codex", From: "claude@a", Text: "say \"hi\"\n$(x)"}
	first, err := o.Send(ctx, Caller{}, req)
	require.NoError(t, err)
	mark, err := s.InboxMark(ctx)
	require.NoError(t, err)
	events, err := s.Events(ctx, 0, 0)
	require.NoError(t, err)

	again, err := o.Send(ctx, Caller{}, req)
	require.NoError(t, err)
	assert.Equal(t, first, again, "the stored message, not a new one")
	msgs, err := s.Messages(ctx, "th", 0)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	assert.Equal(t, "msg-1", msgs[0].ID)
	assert.Equal(t, "claude@a", msgs[0].From)
	assert.Equal(t, req.Text, msgs[0].Text)
	mark2, err := s.InboxMark(ctx)
	require.NoError(t, err)
	assert.Equal(t, mark, mark2, "nothing new for the inbox to trigger")
	events2, err := s.Events(ctx, 0, 0)
	require.NoError(t, err)
	assert.Len(t, events2, len(events), "no second audit line")

	// Its recipient gone meanwhile: still the one recorded, not NOT_FOUND
	// (which would fail a delivered message at the sender's outbox).
	require.NoError(t, s.DeleteRuntime(ctx, "s/codex"))
	again, err = o.Send(ctx, Caller{}, req)
	require.NoError(t, err)
	assert.Equal(t, first, again)

	req.Text = "other"
	_, err = o.Send(ctx, Caller{}, req)
	require.ErrorIs(t, err, ErrIDConflict)

	// The store alone: the unique index holds whatever the caller does.
	_, created, err := s.AddMessageOnce(ctx, Message{ID: "msg-2", Thread: "th", From: "x", To: "codex", Text: "a", At: at(1)})
	require.NoError(t, err)
	assert.True(t, created)
	got, created, err := s.AddMessageOnce(ctx, Message{ID: "msg-2", Thread: "th", From: "x", To: "codex", Text: "a", At: at(2)})
	require.NoError(t, err)
	assert.False(t, created)
	assert.Equal(t, at(1).UTC(), got.At, "the first one's")
	_, err = s.db.ExecContext(ctx, `INSERT INTO messages (msg_id, thread, sender, recipient, text, at) VALUES ('msg-2', 'th', 'x', 'codex', 'a', '')`)
	require.Error(t, err, "the unique index refuses a second row of an id")
	msgs, err = s.Messages(ctx, "th", 0)
	require.NoError(t, err)
	assert.Len(t, msgs, 2)
}

// TestOutsend: a runtime's message to another host is recorded from the
// runtime its token names (never the name the request gives) with this
// host's name for the host there, pending and due at once; the same id
// again is the same entry; a try is saved only while it is pending.
func TestOutsend(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	o := &Ops{Store: s, Clock: clock.Real{}, Policy: DefaultPolicy, Limits: DefaultLimits, Self: "laptop"}
	req := OutboundRequest{ID: "msg-1", Host: "box", To: "codex", Thread: "th", From: "forged", Text: "hi"}
	got, created, err := o.Outsend(ctx, Caller{Runtime: "claude"}, req)
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, "claude", got.From)
	assert.Equal(t, "claude@laptop", got.Origin)
	assert.Equal(t, "codex@box", got.To())
	assert.Equal(t, FwdPending, got.State)
	assert.Equal(t, got.At, got.NextAt)

	again, created, err := o.Outsend(ctx, Caller{Runtime: "claude"}, req)
	require.NoError(t, err)
	assert.False(t, created)
	assert.Equal(t, got, again)
	_, _, err = o.Outsend(ctx, Caller{Runtime: "codex"}, req)
	require.ErrorIs(t, err, ErrIDConflict, "another sender, the same id")

	made, _, err := o.Outsend(ctx, Caller{}, OutboundRequest{Host: "box", To: "codex", Text: "no id"})
	require.NoError(t, err)
	assert.Regexp(t, `^msg-[0-9a-f]{16}$`, made.ID)
	assert.Equal(t, "operator@laptop", made.Origin)
	assert.Equal(t, DefaultThread, made.Thread)

	for _, bad := range []OutboundRequest{
		{Host: "box; rm", To: "codex", Text: "x"},
		{Host: "box", To: "co dex", Text: "x"},
		{Host: "box", To: "codex", Session: "-x", Text: "x"},
		{Host: "box", To: "codex", Text: " "},
	} {
		_, _, err := o.Outsend(ctx, Caller{}, bad)
		assert.ErrorIs(t, err, ErrBadInput, "%+v", bad)
	}
	_, _, err = (&Ops{Store: s, Clock: clock.Real{}}).Outsend(ctx, Caller{}, req)
	assert.ErrorIs(t, err, ErrNotRunning, "only the supervisor, which knows its host's name, records")

	mine, err := o.Outbox(ctx, Caller{Runtime: "codex"}, "")
	require.NoError(t, err)
	assert.Empty(t, mine, "a runtime sees its own entries only")
	all, err := o.Outbox(ctx, Caller{}, "")
	require.NoError(t, err)
	assert.Len(t, all, 2)

	n, _, err := StepForward(DefaultForwardPolicy, got, ForwardEvent{Kind: FwSent, At: got.At, Seq: 3})
	require.NoError(t, err)
	require.NoError(t, s.SaveOutbound(ctx, n))
	require.ErrorIs(t, s.SaveOutbound(ctx, n), ErrConflictState, "a forwarded entry is never saved again")
	pending, err := s.Pending(ctx)
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.Equal(t, made.ID, pending[0].ID)
}
