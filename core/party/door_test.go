package party

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/exitcode"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
)

// doorRig is a supervisor serving the real Ops on the socket of a
// session's state dir, over a store kept somewhere else: a command that
// opened the session's own store would make a file there.
type doorRig struct {
	stateDir string
	store    *supervise.Store
	env      func(token string) *Env
}

func newDoorRig(t *testing.T) doorRig {
	t.Helper()
	ctx := context.Background()
	stateDir := t.TempDir()
	run, err := os.MkdirTemp("/tmp", "pd")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(run) })
	envOf := func(token string) *Env {
		vars := map[string]string{"PARTY_STATE_DIR": stateDir, "XDG_RUNTIME_DIR": run, "PARTY_RUNTIME_TOKEN": token}
		return &Env{Getenv: func(k string) string { return vars[k] }, Clock: clock.Real{}}
	}
	st, err := supervise.Open(filepath.Join(t.TempDir(), "elsewhere", supervise.StoreFile))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	require.NoError(t, st.PutRuntime(ctx, supervise.Runtime{ID: "s/claude", Role: "claude", Agent: "claude", Pane: "%1",
		Status: supervise.Ready, TokenHash: state.HashToken("tok-claude")}))
	require.NoError(t, st.PutThread(ctx, supervise.Thread{ID: "stuck", Blocked: true, BlockedWhy: "loop"}))
	ops := &supervise.Ops{Store: st, Clock: clock.Real{}, Policy: supervise.DefaultPolicy, Limits: supervise.DefaultLimits,
		Managed: func(context.Context, string) (bool, error) { return true, nil },
		StopPane: func(context.Context, supervise.Runtime, time.Duration) (string, error) {
			return "exited on C-c", nil
		}, Self: "here"}
	// It serves on a socket of its own environment's runtime dir, not
	// the commands': they take it from its daemon file.
	sock := filepath.Join(run, "elsewhere.sock")
	require.NoError(t, os.MkdirAll(supervise.Dir(stateDir), 0o700))
	require.NoError(t, supervise.WriteProc(supervise.Dir(stateDir), supervise.ProcState{State: supervise.ProcServing, PID: os.Getpid(), At: time.Now(), Socket: sock}))
	ln, err := supervise.ListenUnix(sock)
	require.NoError(t, err)
	sctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- (&supervise.Server{Service: ops, Logf: t.Logf}).Serve(sctx, ln, false) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-served)
	})
	return doorRig{stateDir: stateDir, store: st, env: envOf}
}

// TestCommandsGoThroughTheDoor: every supervisor command, the
// operator's and a runtime's, is answered by the supervisor through its
// API; none opens the store of the session (it would be made).
func TestCommandsGoThroughTheDoor(t *testing.T) {
	ctx := context.Background()
	r := newDoorRig(t)
	op, claude := r.env(""), r.env("tok-claude")

	res, err := Trigger(ctx, op, TriggerOptions{TriggerRequest: supervise.TriggerRequest{ID: "t1", Role: "claude", Text: "hi"}})
	require.NoError(t, err)
	assert.True(t, res.Created)
	tr, err := TriggerShow(ctx, op, "t1")
	require.NoError(t, err)
	assert.Equal(t, "hi", tr.Text)
	page, err := TriggerList(ctx, op, TriggerListOptions{Status: "queued"})
	require.NoError(t, err)
	require.Len(t, page.Triggers, 1)
	rts, err := Runtimes(ctx, op)
	require.NoError(t, err)
	require.Len(t, rts, 1)

	_, err = InboxSend(ctx, op, supervise.MessageRequest{Thread: "th", To: "claude", Text: "note"})
	require.NoError(t, err)
	msgs, err := InboxList(ctx, op, "th")
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	msgs, err = InboxRead(ctx, claude, "")
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	assert.Equal(t, "note", msgs[0].Text)
	require.NoError(t, Heartbeat(ctx, claude, "busy"))
	_, err = TriggerUnblock(ctx, claude, "stuck")
	assert.ErrorIs(t, err, supervise.ErrForbidden, "the rules hold at this door")
	th, err := TriggerUnblock(ctx, op, "stuck")
	require.NoError(t, err)
	assert.False(t, th.Blocked)

	var kinds []string
	require.NoError(t, SupervisorEvents(ctx, op, false, func(e supervise.AuditEvent) { kinds = append(kinds, e.Kind) }))
	assert.NotEmpty(t, kinds)

	rt, err := StopRuntime(ctx, op, RuntimeStopOptions{Role: "claude"})
	require.NoError(t, err)
	assert.Equal(t, supervise.Offline, rt.Status)
	_, err = r.store.Runtime(ctx, "claude")
	assert.ErrorIs(t, err, supervise.ErrNotFound, "deregistered by the supervisor")

	_, err = os.Stat(filepath.Join(supervise.Dir(r.stateDir), supervise.StoreFile))
	assert.ErrorIs(t, err, os.ErrNotExist, "no command opened the session's store")
}

// TestTriggerListPages: the list shows the newest --limit triggers and
// says when there are more; --before pages back from the first shown;
// a runtime's page counts only the triggers it may see.
func TestTriggerListPages(t *testing.T) {
	ctx := context.Background()
	r := newDoorRig(t)
	op, claude := r.env(""), r.env("tok-claude")
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		role := "claude"
		if id == "b" || id == "d" {
			role = "codex"
		}
		_, _, err := r.store.AddTrigger(ctx, supervise.Trigger{ID: id, Role: role, Thread: "t", Status: supervise.Queued, Created: time.Now()})
		require.NoError(t, err)
	}
	ids := func(p TriggerPage) (out []string) {
		for _, t := range p.Triggers {
			out = append(out, t.ID)
		}
		return out
	}

	page, err := TriggerList(ctx, op, TriggerListOptions{Limit: 2})
	require.NoError(t, err)
	assert.Equal(t, []string{"d", "e"}, ids(page))
	assert.True(t, page.More)
	page, err = TriggerList(ctx, op, TriggerListOptions{Limit: 2, Before: "d"})
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "c"}, ids(page))
	assert.True(t, page.More)
	page, err = TriggerList(ctx, op, TriggerListOptions{Limit: 2, Before: "b"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, ids(page))
	assert.False(t, page.More)
	page, err = TriggerList(ctx, op, TriggerListOptions{Limit: 5})
	require.NoError(t, err)
	assert.Len(t, page.Triggers, 5)
	assert.False(t, page.More, "exactly the limit is not more")

	page, err = TriggerList(ctx, claude, TriggerListOptions{Limit: 2})
	require.NoError(t, err)
	assert.Equal(t, []string{"c", "e"}, ids(page), "a runtime's page is of its own triggers")
	assert.True(t, page.More)

	page, err = TriggerList(ctx, op, TriggerListOptions{Since: "1h"})
	require.NoError(t, err)
	assert.Len(t, page.Triggers, 5)
	page, err = TriggerList(ctx, op, TriggerListOptions{Since: time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	require.NoError(t, err)
	assert.Empty(t, page.Triggers)

	for _, bad := range []TriggerListOptions{{Limit: -1}, {Since: "yesterday"}, {Status: "nonsense"}} {
		_, err = TriggerList(ctx, op, bad)
		assert.ErrorIs(t, err, ErrUsage, "%+v", bad)
	}
	_, err = TriggerList(ctx, op, TriggerListOptions{Before: "nope"})
	assert.ErrorIs(t, err, supervise.ErrNotFound)
}

// TestWaitingIsToldByTheSupervisor: trigger --wait is told by the supervisor when
// the trigger ends (a long poll woken by the store's commit), and events
// --follow is told of each new event.
func TestWaitingIsToldByTheSupervisor(t *testing.T) {
	ctx := context.Background()
	r := newDoorRig(t)
	op := r.env("")
	_, err := Trigger(ctx, op, TriggerOptions{TriggerRequest: supervise.TriggerRequest{ID: "t1", Role: "claude", Text: "hi"}})
	require.NoError(t, err)

	done := make(chan error, 1)
	var got TriggerResult
	go func() {
		var err error
		got, err = Trigger(ctx, op, TriggerOptions{TriggerRequest: supervise.TriggerRequest{ID: "t1", Role: "claude", Text: "hi"},
			Wait: true, Timeout: time.Minute})
		done <- err
	}()
	tr, err := r.store.Trigger(ctx, "t1")
	require.NoError(t, err)
	from := tr.Status
	answer := "ok"
	tr.Status, tr.Updated, tr.Answer = supervise.Completed, time.Now(), &answer
	require.NoError(t, r.store.SaveTrigger(ctx, tr, from, "test"))
	require.NoError(t, <-done)
	assert.Equal(t, supervise.Completed, got.Status)

	fctx, cancel := context.WithCancel(ctx)
	seen := make(chan string, 16)
	followed := make(chan error, 1)
	go func() {
		followed <- SupervisorEvents(fctx, op, true, func(e supervise.AuditEvent) { seen <- e.Kind })
	}()
	require.NoError(t, r.store.Audit(ctx, supervise.AuditEvent{At: time.Now(), Kind: "test_mark"}))
	for k := range seen {
		if k == "test_mark" {
			break
		}
	}
	cancel()
	assert.NoError(t, <-followed)
}

// TestNoSupervisor: with no supervisor, a command that changes something
// fails NO_SUPERVISOR; one that reads shows what the last one recorded,
// read-only, or fails alike when none ever ran.
func TestNoSupervisor(t *testing.T) {
	ctx := context.Background()
	stateDir := t.TempDir()
	run, err := os.MkdirTemp("/tmp", "pd")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(run) })
	vars := map[string]string{"PARTY_STATE_DIR": stateDir, "XDG_RUNTIME_DIR": run}
	env := &Env{Getenv: func(k string) string { return vars[k] }, Clock: clock.Real{}}

	req := TriggerOptions{TriggerRequest: supervise.TriggerRequest{ID: "t1", Role: "claude", Text: "hi"}}
	_, err = Trigger(ctx, env, req)
	require.ErrorIs(t, err, supervise.ErrNotRunning)
	code, exit := Classify(err)
	assert.Equal(t, "NO_SUPERVISOR", code)
	assert.Equal(t, exitcode.ExitNotFound, exit)
	_, err = TriggerList(ctx, env, TriggerListOptions{})
	require.ErrorIs(t, err, supervise.ErrNotRunning, "no records either")

	st, err := supervise.Open(filepath.Join(supervise.Dir(stateDir), supervise.StoreFile))
	require.NoError(t, err)
	ops := &supervise.Ops{Store: st, Clock: clock.Real{}, Policy: supervise.DefaultPolicy, Limits: supervise.DefaultLimits,
		Managed: func(context.Context, string) (bool, error) { return true, nil }}
	_, _, err = ops.Submit(ctx, supervise.Caller{}, req.TriggerRequest)
	require.NoError(t, err)
	require.NoError(t, st.Close())

	page, err := TriggerList(ctx, env, TriggerListOptions{})
	require.NoError(t, err)
	require.Len(t, page.Triggers, 1, "the records the last supervisor left")
	_, err = Trigger(ctx, env, TriggerOptions{TriggerRequest: supervise.TriggerRequest{ID: "t2", Role: "claude", Text: "hi"}})
	require.ErrorIs(t, err, supervise.ErrNotRunning, "nothing is written without a supervisor")
}
