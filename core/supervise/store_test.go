package supervise

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/wait"
)

// at is a time with nanoseconds in a zone other than UTC: what the store
// gives back is its UTC self, exactly.
func at(sec int) time.Time {
	return time.Date(2025, 3, 4, 5, 6, sec, 123456789, time.FixedZone("CET", 3600))
}

func openStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "state", StoreFile))
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func TestOpenMakesTheStoreOwnerOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, StoreFile)
	s, err := Open(path)
	require.NoError(t, err)
	assert.Equal(t, path, s.Path())
	require.NoError(t, s.Close())

	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "the directory")
	fi, err = os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the file")

	s, err = Open(path)
	require.NoError(t, err, "an existing store opens again")
	require.NoError(t, s.Close())
	assert.Equal(t, len(migrations), userVersion(t, path))
}

func TestOpenKeepsADatabaseItCannotUse(t *testing.T) {
	// A real database's header followed by garbage: SQLite's magic, then
	// nothing it can read.
	header := func() []byte {
		s := openStore(t)
		require.NoError(t, s.Close())
		b, err := os.ReadFile(s.Path())
		require.NoError(t, err)
		return append(b[:100:100], bytes.Repeat([]byte{0xA5}, 8192-100)...)
	}()
	tests := []struct {
		name    string
		content []byte
	}{
		{"text", []byte("this is not a database\n")},
		{"garbage page", bytes.Repeat([]byte{0xDE, 0xAD, 0xBE, 0xEF}, 1024)},
		{"a header and garbage", header},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), StoreFile)
			require.NoError(t, os.WriteFile(path, tt.content, 0o600))
			s, err := Open(path)
			if err == nil {
				s.Close()
			}
			require.ErrorIs(t, err, ErrStore)
			assert.Contains(t, err.Error(), path, "the error names the file")
			got, rerr := os.ReadFile(path)
			require.NoError(t, rerr)
			assert.True(t, bytes.Equal(tt.content, got), "the file is left as it was")
		})
	}
}

func TestOpenRefusesANewerSchema(t *testing.T) {
	s := openStore(t)
	_, err := s.AddMessage(context.Background(), Message{Thread: "th", From: "a", To: "b", Text: "hi", At: at(0)})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	setUserVersion(t, s.Path(), len(migrations)+5)

	_, err = Open(s.Path())
	require.ErrorIs(t, err, ErrStore)
	assert.Contains(t, err.Error(), s.Path())
	assert.Contains(t, err.Error(), fmt.Sprintf("was written by a newer party (schema %d, this one knows %d)", len(migrations)+5, len(migrations)))
	assert.Equal(t, len(migrations)+5, userVersion(t, s.Path()), "the version stays")
}

func TestOpenRefusesAnotherDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), StoreFile)
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	_, err = Open(path)
	require.ErrorIs(t, err, ErrStore)
	assert.Contains(t, err.Error(), path)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(before, after), "the other program's file is left byte for byte (not switched to WAL)")
	for _, side := range []string{"-wal", "-shm"} {
		assert.NoFileExists(t, path+side)
	}
	assert.Equal(t, 0, userVersion(t, path), "nothing was migrated")
}

func userVersion(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var v int
	require.NoError(t, db.QueryRow("PRAGMA user_version").Scan(&v))
	return v
}

func setUserVersion(t *testing.T, path string, v int) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(fmt.Sprintf("PRAGMA user_version = %d", v))
	require.NoError(t, err)
}

func TestRuntimesRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	r := Runtime{
		ID: "s/coder", Role: "coder", Workspace: "/w", Agent: "claude", AgentSession: "abc",
		Session: "s", Window: "@1", Pane: "%3", Target: "s:1.0", PID: 4242, Status: AwaitingAck,
		OperatorBusy: true, LastHeartbeat: at(1), Heartbeat: "working", LastTrigger: "t1",
		TokenHash: tokenHash("secret"), Updated: at(2), Tools: true,
	}
	require.NoError(t, s.PutRuntime(ctx, r))
	require.NoError(t, s.PutRuntime(ctx, Runtime{ID: "s/architect", Role: "architect", Status: Ready, Updated: at(3)}))

	want := r
	want.LastHeartbeat, want.Updated = r.LastHeartbeat.UTC(), r.Updated.UTC()
	got, err := s.Runtime(ctx, "coder")
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, time.UTC, got.Updated.Location())

	all, err := s.Runtimes(ctx)
	require.NoError(t, err)
	require.Len(t, all, 2)
	assert.Equal(t, []string{"architect", "coder"}, []string{all[0].Role, all[1].Role}, "by role")

	r.Status, r.PID = Ready, 7
	require.NoError(t, s.PutRuntime(ctx, r), "an upsert")
	got, err = s.Runtime(ctx, "coder")
	require.NoError(t, err)
	assert.Equal(t, Ready, got.Status)
	assert.Equal(t, 7, got.PID)

	require.NoError(t, s.Heartbeat(ctx, "coder", "idle", at(9)))
	got, err = s.Runtime(ctx, "coder")
	require.NoError(t, err)
	assert.Equal(t, at(9).UTC(), got.LastHeartbeat)
	assert.Equal(t, "idle", got.Heartbeat)
	assert.ErrorIs(t, s.Heartbeat(ctx, "nobody", "idle", at(9)), ErrNotFound)

	// A record read before that heartbeat and put after it keeps it.
	r.PID = 8
	require.NoError(t, s.PutRuntime(ctx, r))
	got, err = s.Runtime(ctx, "coder")
	require.NoError(t, err)
	assert.Equal(t, 8, got.PID)
	assert.Equal(t, at(9).UTC(), got.LastHeartbeat, "the heartbeat never goes back")
	assert.Equal(t, "idle", got.Heartbeat)

	require.NoError(t, s.PutRuntime(ctx, Runtime{ID: "renamed/coder", Role: "coder"}), "a role has one runtime")
	got, err = s.Runtime(ctx, "coder")
	require.NoError(t, err)
	assert.Equal(t, "renamed/coder", got.ID)

	require.NoError(t, s.DeleteRuntime(ctx, "renamed/coder"))
	_, err = s.Runtime(ctx, "coder")
	assert.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, s.DeleteRuntime(ctx, "renamed/coder"), "deleting again is no error")
}

// TestReadsKeptUntilTheNextCommit: the Store of a running loop reads the
// runtimes, the inbox's mark and that no trigger is open once between two
// commits of its own, and hands out copies; any other Store reads them
// each time (another one may write).
func TestReadsKeptUntilTheNextCommit(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	s.keepReads()
	open, err := s.Triggers(ctx, TriggerFilter{Open: true})
	require.NoError(t, err)
	assert.Empty(t, open)
	open, err = s.Triggers(ctx, TriggerFilter{Open: true})
	require.NoError(t, err)
	assert.Empty(t, open, "none open, kept")
	_, _, err = s.AddTrigger(ctx, Trigger{ID: "t1", Role: "claude", Thread: "th", Text: "go", Status: Queued, Created: at(0), Updated: at(0)})
	require.NoError(t, err)
	open, err = s.Triggers(ctx, TriggerFilter{Open: true})
	require.NoError(t, err)
	assert.Len(t, open, 1, "one opened since")

	rt := Runtime{ID: "s/claude", Role: "claude", Status: Ready, Recovery: Recovery{Restarts: []time.Time{at(1).UTC()}}}
	require.NoError(t, s.PutRuntime(ctx, rt))

	got, err := s.Runtimes(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1)
	got[0].Status, got[0].Recovery.Restarts[0] = Offline, at(2)
	again, err := s.Runtimes(ctx)
	require.NoError(t, err)
	assert.Equal(t, []Runtime{rt}, again, "a caller's change to what it got is its own")
	one, err := s.Runtime(ctx, "claude")
	require.NoError(t, err)
	assert.Equal(t, rt, one)
	_, err = s.Runtime(ctx, "codex")
	assert.ErrorIs(t, err, ErrNotFound)

	for _, write := range []struct {
		name string
		do   func() error
		want func(r *Runtime)
	}{
		{"put", func() error { r := rt; r.Status = Triggering; return s.PutRuntime(ctx, r) }, func(r *Runtime) { r.Status = Triggering }},
		{"heartbeat", func() error { return s.Heartbeat(ctx, "claude", "idle", at(3)) }, func(r *Runtime) { r.LastHeartbeat, r.Heartbeat = at(3).UTC(), "idle" }},
		{"liveness", func() error { return s.SetLiveness(ctx, "claude", Liveness{Screen: "x"}) }, func(r *Runtime) { r.Recovery.Live.Screen = "x" }},
	} {
		require.NoError(t, write.do(), write.name)
		write.want(&rt)
		all, err := s.Runtimes(ctx)
		require.NoError(t, err)
		assert.Equal(t, []Runtime{rt}, all, "after a %s", write.name)
		one, err := s.Runtime(ctx, "claude")
		require.NoError(t, err)
		assert.Equal(t, rt, one, "after a %s", write.name)
		shared, err := s.sharedRuntimes(ctx)
		require.NoError(t, err)
		assert.Equal(t, []Runtime{rt}, shared, "after a %s", write.name)
	}
	require.NoError(t, s.DeleteRuntime(ctx, rt.ID))
	_, err = s.Runtime(ctx, "claude")
	assert.ErrorIs(t, err, ErrNotFound, "after a delete")

	other, err := Open(s.Path())
	require.NoError(t, err)
	defer other.Close()
	_, err = other.Runtimes(ctx)
	require.NoError(t, err)
	require.NoError(t, s.PutRuntime(ctx, rt))
	all, err := other.Runtimes(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 1, "a Store that keeps nothing sees another's write")
}

func TestRuntimeByToken(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	require.NoError(t, s.PutRuntime(ctx, Runtime{ID: "s/a", Role: "a", TokenHash: tokenHash("token-a")}))
	require.NoError(t, s.PutRuntime(ctx, Runtime{ID: "s/b", Role: "b", TokenHash: tokenHash("token-b")}))
	require.NoError(t, s.PutRuntime(ctx, Runtime{ID: "s/c", Role: "c"}), "a runtime without a token")

	tests := []struct {
		name  string
		token string
		role  string // "": ErrToken
	}{
		{"right", "token-b", "b"},
		{"another right", "token-a", "a"},
		{"wrong", "token-x", ""},
		{"empty", "", ""},
		{"the hash itself", tokenHash("token-a"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := s.RuntimeByToken(ctx, tt.token)
			if tt.role == "" {
				require.ErrorIs(t, err, ErrToken)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.role, r.Role)
		})
	}
}

func fullTrigger() Trigger {
	answer := "done"
	return Trigger{
		ID: "t1", Role: "coder", Thread: "th", Reason: "review", Text: "look at this\nplease",
		Status: Acked, Class: OperatorBusy, Error: "typing", Attempts: 2, Waits: 3, Outcome: "submitted",
		Reached: true, Force: true, Actor: "me", Why: "urgent",
		Created: at(1), Updated: at(2), DeferredAt: at(3), QuietSince: at(4), NextAt: at(5),
		DeliveredAt: at(6), AckBy: at(7), AckedAt: at(8), AckSource: AckCursor, CompletedAt: at(9),
		Answer: &answer,
		Turn: &TurnRecord{Pane: "%3", Offset: 1234, Nonce: "n", Prompt: "p", Hooks: true,
			Mark: &wait.Mark{History: 7, First: 2, Rows: []string{"mock> [12 chars]", "answer", "", "mock> "}}},
	}
}

func TestTriggerRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	in := fullTrigger()
	want := utcTrigger(in)

	got, created, err := s.AddTrigger(ctx, in, AuditEvent{At: at(1), Kind: "trigger_created", Trigger: "t1"})
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, want, got)

	got, err = s.Trigger(ctx, "t1")
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, at(6).UTC(), got.DeliveredAt, "exact to the nanosecond")
	assert.Equal(t, time.UTC, got.Created.Location())

	bare := Trigger{ID: "t2", Role: "coder", Thread: "th", Text: "x"}
	got, created, err = s.AddTrigger(ctx, bare)
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, Queued, got.Status, "a trigger without a status is queued")
	got, err = s.Trigger(ctx, "t2")
	require.NoError(t, err)
	bare.Status = Queued
	assert.Equal(t, bare, got, "zero times stay zero")

	_, err = s.Trigger(ctx, "nope")
	assert.ErrorIs(t, err, ErrNotFound)
	_, _, err = s.AddTrigger(ctx, Trigger{Role: "coder", Text: "x"})
	assert.ErrorIs(t, err, ErrBadInput, "an id is required")
}

func TestAddTriggerIsIdempotent(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	orig := Trigger{ID: "t1", Role: "coder", Thread: "th", Reason: "r", Text: "do it", Status: Queued, Created: at(1), Updated: at(1)}
	_, created, err := s.AddTrigger(ctx, orig, AuditEvent{At: at(1), Kind: "trigger_created"})
	require.NoError(t, err)
	require.True(t, created)

	tests := []struct {
		name   string
		change func(*Trigger)
		err    error
	}{
		{"same", func(*Trigger) {}, nil},
		{"same content, other state", func(t *Trigger) { t.Status, t.Created, t.Force = Completed, at(30), true }, nil},
		{"other text", func(t *Trigger) { t.Text = "do that" }, ErrIDConflict},
		{"other role", func(t *Trigger) { t.Role = "architect" }, ErrIDConflict},
		{"other thread", func(t *Trigger) { t.Thread = "th2" }, ErrIDConflict},
		{"other reason", func(t *Trigger) { t.Reason = "" }, ErrIDConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			again := orig
			tt.change(&again)
			got, created, err := s.AddTrigger(ctx, again, AuditEvent{At: at(2), Kind: "again"})
			assert.False(t, created)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, utcTrigger(orig), got, "the recorded trigger")
		})
	}
	all, err := s.Triggers(ctx, TriggerFilter{})
	require.NoError(t, err)
	assert.Len(t, all, 1)
	trs, err := s.Transitions(ctx, "t1")
	require.NoError(t, err)
	assert.Len(t, trs, 1, "a repeated submit makes no transition")
	evs, err := s.Events(ctx, 0, 0)
	require.NoError(t, err)
	assert.Len(t, evs, 1, "nor an audit event")
}

func TestSaveTriggerIsACompareAndSwap(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	tr, _, err := s.AddTrigger(ctx, Trigger{ID: "t1", Role: "coder", Thread: "th", Text: "x", Status: Queued, Created: at(1), Updated: at(1)},
		AuditEvent{At: at(1), Kind: "trigger_created", Trigger: "t1"})
	require.NoError(t, err)

	sending := tr
	sending.Status, sending.Updated = TTriggering, at(2)
	require.NoError(t, s.SaveTrigger(ctx, sending, Queued, "send"))

	delivered := sending
	delivered.Status, delivered.Updated, delivered.DeliveredAt, delivered.Attempts = Delivered, at(3), at(3), 1
	require.NoError(t, s.SaveTrigger(ctx, delivered, TTriggering, "sent", AuditEvent{At: at(3), Kind: "trigger_sent", Trigger: "t1", Role: "coder"}))

	stale := sending
	stale.Status, stale.Updated = TFailed, at(4)
	err = s.SaveTrigger(ctx, stale, TTriggering, "fail", AuditEvent{At: at(4), Kind: "trigger_failed"})
	require.ErrorIs(t, err, ErrConflictState, "the trigger moved on from triggering")
	assert.Contains(t, err.Error(), "delivered")

	missing := stale
	missing.ID = "nope"
	require.ErrorIs(t, s.SaveTrigger(ctx, missing, Queued, "x"), ErrNotFound)

	got, err := s.Trigger(ctx, "t1")
	require.NoError(t, err)
	assert.Equal(t, utcTrigger(delivered), got, "the losing save changed nothing")

	trs, err := s.Transitions(ctx, "t1")
	require.NoError(t, err)
	for i := range trs {
		assert.Positive(t, trs[i].Seq)
		trs[i].Seq = 0
	}
	assert.Equal(t, []Transition{
		{Trigger: "t1", At: at(1).UTC(), From: "", To: Queued, Event: "created"},
		{Trigger: "t1", At: at(2).UTC(), From: Queued, To: TTriggering, Event: "send"},
		{Trigger: "t1", At: at(3).UTC(), From: TTriggering, To: Delivered, Event: "sent"},
	}, trs)
	_, err = s.Transitions(ctx, "nope")
	assert.ErrorIs(t, err, ErrNotFound)

	evs, err := s.Events(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, evs, 2, "the losing save's audit event is not recorded")
	assert.Equal(t, []string{"trigger_created", "trigger_sent"}, []string{evs[0].Kind, evs[1].Kind})
}

func TestTriggersFilterInFIFOOrder(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	add := []Trigger{
		// created times out of order: the order is the order of arrival
		{ID: "z", Role: "coder", Thread: "a", Status: Queued, Created: at(5)},
		{ID: "y", Role: "architect", Thread: "a", Status: Completed, Created: at(4)},
		{ID: "x", Role: "coder", From: "architect", Thread: "b", Status: TFailed, Created: at(3)},
		{ID: "w", Role: "coder", Thread: "a", Status: TDeferred, Created: at(2)},
		{ID: "v", Role: "architect", Thread: "b", Status: Queued, Created: at(1)},
	}
	for _, tr := range add {
		_, _, err := s.AddTrigger(ctx, tr)
		require.NoError(t, err)
	}
	tests := []struct {
		name string
		f    TriggerFilter
		want []string
	}{
		{"all", TriggerFilter{}, []string{"z", "y", "x", "w", "v"}},
		{"status", TriggerFilter{Status: Queued}, []string{"z", "v"}},
		{"role", TriggerFilter{Role: "coder"}, []string{"z", "x", "w"}},
		{"thread", TriggerFilter{Thread: "b"}, []string{"x", "v"}},
		{"open", TriggerFilter{Open: true}, []string{"z", "w", "v"}},
		{"open of a role in a thread", TriggerFilter{Open: true, Role: "coder", Thread: "a"}, []string{"z", "w"}},
		{"limit takes the newest", TriggerFilter{Open: true, Limit: 2}, []string{"w", "v"}},
		{"limit above the count", TriggerFilter{Limit: 9}, []string{"z", "y", "x", "w", "v"}},
		{"since: by creation time", TriggerFilter{Since: at(3)}, []string{"z", "y", "x"}},
		{"before: by arrival", TriggerFilter{Before: "x"}, []string{"z", "y"}},
		{"before the first", TriggerFilter{Before: "z"}, []string{}},
		{"the page before a page", TriggerFilter{Before: "w", Limit: 2}, []string{"y", "x"}},
		{"involving", TriggerFilter{Involving: "architect"}, []string{"y", "x", "v"}},
		{"none", TriggerFilter{Role: "nobody"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, err := s.Triggers(ctx, tt.f)
			require.NoError(t, err)
			ids := []string{}
			for _, tr := range ts {
				ids = append(ids, tr.ID)
			}
			assert.Equal(t, tt.want, ids)
		})
	}
	_, err := s.Triggers(ctx, TriggerFilter{Before: "nope"})
	assert.ErrorIs(t, err, ErrNotFound, "a page before a trigger that is not there")
}

func TestCountSent(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	base := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	for i, tr := range []Trigger{
		{ID: "1", Role: "coder", Thread: "a", DeliveredAt: base},
		{ID: "2", Role: "coder", Thread: "a", DeliveredAt: base.Add(100 * time.Millisecond)},
		{ID: "3", Role: "coder", Thread: "b", DeliveredAt: base.Add(time.Second)},
		{ID: "4", Role: "coder", Thread: "a"}, // never delivered
		{ID: "5", Role: "architect", Thread: "a", DeliveredAt: base.Add(time.Second)},
	} {
		tr.Text = strconv.Itoa(i)
		_, _, err := s.AddTrigger(ctx, tr)
		require.NoError(t, err)
	}
	tests := []struct {
		name         string
		role, thread string
		since        time.Time
		want         int
	}{
		{"every thread", "coder", "", time.Time{}, 3},
		{"one thread", "coder", "a", time.Time{}, 2},
		{"since, inclusive", "coder", "", base, 3},
		{"since a fraction", "coder", "", base.Add(50 * time.Millisecond), 2},
		{"since, in another zone", "coder", "", base.Add(time.Second).In(time.FixedZone("X", -7200)), 1},
		{"after all", "coder", "", base.Add(time.Hour), 0},
		{"another role", "architect", "", base, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := s.CountSent(ctx, tt.role, tt.thread, tt.since)
			require.NoError(t, err)
			assert.Equal(t, tt.want, n)
		})
	}
	// A delivery recorded by SaveTrigger counts too.
	tr, err := s.Trigger(ctx, "4")
	require.NoError(t, err)
	tr.Status, tr.DeliveredAt = Delivered, base.Add(time.Hour)
	require.NoError(t, s.SaveTrigger(ctx, tr, Queued, "sent"))
	n, err := s.CountSent(ctx, "coder", "a", base.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}

func TestThreadsRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	th := Thread{ID: "th", Created: at(1), Turns: 3, LastAnswer: "digest", Same: 2, Blocked: true, BlockedWhy: "loop"}
	require.NoError(t, s.PutThread(ctx, th))
	got, err := s.Thread(ctx, "th")
	require.NoError(t, err)
	want := th
	want.Created = th.Created.UTC()
	assert.Equal(t, want, got)

	th.Blocked, th.BlockedWhy, th.Turns = false, "", 0
	require.NoError(t, s.PutThread(ctx, th))
	got, err = s.Thread(ctx, "th")
	require.NoError(t, err)
	assert.False(t, got.Blocked)
	assert.Equal(t, 0, got.Turns)

	_, err = s.Thread(ctx, "nope")
	assert.ErrorIs(t, err, ErrNotFound)
}

func TestMessagesUnreadAndAdvance(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	send := func(thread, from, to, text string, sec int) Message {
		t.Helper()
		m, err := s.AddMessage(ctx, Message{Thread: thread, From: from, To: to, Text: text, At: at(sec)})
		require.NoError(t, err)
		return m
	}
	m1 := send("a", "architect", "coder", "one", 1)
	m2 := send("b", "architect", "coder", "two", 2)
	m3 := send("a", "coder", "architect", "three", 3)
	m4 := send("a", "architect", "coder", "four", 4)
	assert.Equal(t, Message{Seq: m1.Seq, Thread: "a", From: "architect", To: "coder", Text: "one", At: at(1).UTC()}, m1)
	assert.Less(t, m1.Seq, m2.Seq)

	th, err := s.Thread(ctx, "a")
	require.NoError(t, err, "a message makes its thread")
	assert.Equal(t, Thread{ID: "a", Created: at(1).UTC()}, th)
	ths, err := s.Threads(ctx)
	require.NoError(t, err)
	assert.Equal(t, []Thread{{ID: "a", Created: at(1).UTC()}, {ID: "b", Created: at(2).UTC()}}, ths)

	ms, err := s.Messages(ctx, "a", 0)
	require.NoError(t, err)
	assert.Equal(t, []Message{m1, m3, m4}, ms)
	ms, err = s.Messages(ctx, "a", m1.Seq)
	require.NoError(t, err)
	assert.Equal(t, []Message{m3, m4}, ms)

	unread := func(role, thread string) []Message {
		t.Helper()
		ms, err := s.Unread(ctx, role, thread)
		require.NoError(t, err)
		return ms
	}
	assert.Equal(t, []Message{m1, m2, m4}, unread("coder", ""))
	assert.Equal(t, []Message{m1, m4}, unread("coder", "a"))
	assert.Equal(t, []Message{m3}, unread("architect", ""))

	moved, err := s.Advance(ctx, "coder", "a", m1.Seq, at(10))
	require.NoError(t, err)
	assert.True(t, moved)
	assert.Equal(t, []Message{m2, m4}, unread("coder", ""), "the cursor of one thread")

	moved, err = s.Advance(ctx, "coder", "a", m4.Seq, at(11))
	require.NoError(t, err)
	assert.True(t, moved)
	assert.Equal(t, []Message{m2}, unread("coder", ""))

	for _, seq := range []int64{m1.Seq, m4.Seq, 0, -1} {
		moved, err = s.Advance(ctx, "coder", "a", seq, at(12))
		require.NoError(t, err)
		assert.False(t, moved, "never backwards (%d)", seq)
	}
	assert.Empty(t, unread("coder", "a"))

	moved, err = s.Advance(ctx, "coder", "b", m2.Seq, at(13))
	require.NoError(t, err)
	assert.True(t, moved)
	cs, err := s.Cursors(ctx, "coder")
	require.NoError(t, err)
	assert.Equal(t, []Cursor{
		{Role: "coder", Thread: "a", Seq: m4.Seq, At: at(11).UTC()},
		{Role: "coder", Thread: "b", Seq: m2.Seq, At: at(13).UTC()},
	}, cs)
	cs, err = s.Cursors(ctx, "architect")
	require.NoError(t, err)
	assert.Empty(t, cs)

	_, err = s.AddMessage(ctx, Message{To: "coder", Text: "x"})
	assert.ErrorIs(t, err, ErrBadInput, "a thread is required")
}

func TestAuditEvents(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	require.NoError(t, s.Audit(ctx))
	evs := []AuditEvent{
		{At: at(1), Kind: "runtime_registered", Role: "coder"},
		{At: at(2), Kind: "trigger_sent", Trigger: "t1", Role: "coder", Thread: "th", Result: "submitted", Detail: "attempt 1"},
		{At: at(3), Kind: "override", Detail: "forced"},
	}
	require.NoError(t, s.Audit(ctx, evs...))

	got, err := s.Events(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, got, 3)
	for i := range got {
		want := evs[i]
		want.At = want.At.UTC()
		want.Seq = got[i].Seq
		assert.Equal(t, want, got[i])
	}
	after, err := s.Events(ctx, got[0].Seq, 1)
	require.NoError(t, err)
	assert.Equal(t, got[1:2], after)
	none, err := s.Events(ctx, got[2].Seq, 0)
	require.NoError(t, err)
	assert.Empty(t, none)
}

// An audit an older party wrote (schema 3, the role in a column named
// agent) reads back with its role once the store is brought up to date.
func TestAuditOfAnOlderSchemaKeepsItsRole(t *testing.T) {
	path := filepath.Join(t.TempDir(), StoreFile)
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	for _, m := range migrations[:3] {
		_, err = db.Exec(m)
		require.NoError(t, err)
	}
	_, err = db.Exec(`PRAGMA user_version = 3`)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO audit (at, kind, trigger_id, agent, thread) VALUES (?, 'trigger_sent', 't1', 'coder', 'th')`, at(1).Format(time.RFC3339Nano))
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s, err := Open(path)
	require.NoError(t, err)
	defer s.Close()
	got, err := s.Events(context.Background(), 0, 0)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "coder", got[0].Role)
	assert.Equal(t, len(migrations), userVersion(t, path))
}

// TestStoresWriteConcurrently opens one path from 8 goroutines, each with a
// Store of its own, as separate processes would, and writes from all at
// once: nothing is lost and no writer sees the database locked.
func TestStoresWriteConcurrently(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), StoreFile)
	const writers = 8
	each := 50
	if testing.Short() {
		each = 10 // the inner loop's sample; the full run writes 50 each
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				s, err := Open(path)
				if err != nil {
					return err
				}
				defer s.Close()
				for i := range each {
					id := fmt.Sprintf("w%d-%d", w, i)
					if _, _, err := s.AddTrigger(ctx, Trigger{ID: id, Role: "coder", Thread: "th", Text: id, Created: time.Now()},
						AuditEvent{At: time.Now(), Kind: "trigger_created", Trigger: id}); err != nil {
						return err
					}
					if _, err := s.AddMessage(ctx, Message{Thread: fmt.Sprintf("th%d", w), From: "x", To: "coder", Text: id, At: time.Now()}); err != nil {
						return err
					}
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	s, err := Open(path)
	require.NoError(t, err)
	defer s.Close()
	ts, err := s.Triggers(ctx, TriggerFilter{})
	require.NoError(t, err)
	assert.Len(t, ts, writers*each)
	ms, err := s.Unread(ctx, "coder", "")
	require.NoError(t, err)
	assert.Len(t, ms, writers*each)
	evs, err := s.Events(ctx, 0, 0)
	require.NoError(t, err)
	assert.Len(t, evs, writers*each)
	for w := range writers {
		ms, err := s.Messages(ctx, fmt.Sprintf("th%d", w), 0)
		require.NoError(t, err)
		require.Len(t, ms, each)
		for i, m := range ms {
			assert.Equal(t, fmt.Sprintf("w%d-%d", w, i), m.Text, "a writer's messages in its order")
		}
	}
}

// helperEnv names the store a helper process writes to, and its number.
const helperEnv = "SUPERVISE_STORE_HELPER"

// TestHelperProcess is the body of TestStoreAcrossProcesses's processes:
// it adds 25 triggers to the store its environment names.
func TestHelperProcess(t *testing.T) {
	spec := os.Getenv(helperEnv)
	if spec == "" {
		t.Skip("run by TestStoreAcrossProcesses")
	}
	n, path, _ := strings.Cut(spec, ":")
	s, err := Open(path)
	require.NoError(t, err)
	defer s.Close()
	for i := range 25 {
		id := fmt.Sprintf("p%s-%d", n, i)
		_, created, err := s.AddTrigger(context.Background(), Trigger{ID: id, Role: "coder", Thread: "th", Text: id, Created: time.Now()})
		require.NoError(t, err)
		require.True(t, created)
	}
}

// TestStoreAcrossProcesses has 4 processes write one store at once.
func TestStoreAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	path := filepath.Join(t.TempDir(), StoreFile)
	s, err := Open(path)
	require.NoError(t, err)
	defer s.Close()

	const procs = 4
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*bytes.Buffer, procs)
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d:%s", helperEnv, i, path))
		outs[i] = new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		require.NoError(t, cmd.Start())
		cmds[i] = cmd
	}
	for i, cmd := range cmds {
		require.NoError(t, cmd.Wait(), "process %d:\n%s", i, outs[i])
	}

	ts, err := s.Triggers(context.Background(), TriggerFilter{})
	require.NoError(t, err)
	ids := map[string]bool{}
	for _, tr := range ts {
		ids[tr.ID] = true
	}
	assert.Len(t, ids, procs*25, "distinct triggers")
	assert.Len(t, ts, procs*25)
}

// TestSetLivenessTouchesNothingElse: the stall watch's write keeps what a
// worker put meanwhile (status, pid, the rest of the recovery record).
func TestSetLivenessTouchesNothingElse(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	rt := Runtime{ID: "s/claude", Role: "claude", Agent: "claude", Status: AwaitingAck, PID: 7,
		Recovery: Recovery{Restarts: []time.Time{at(1)}, Summarize: true, Live: Liveness{Screen: "old"}}}
	require.NoError(t, s.PutRuntime(ctx, rt))
	// A worker restarts the agent: a new pid and status.
	rt.PID, rt.Status = 8, Starting
	require.NoError(t, s.PutRuntime(ctx, rt))

	live := Liveness{Screen: "new", Sign: at(2)}
	require.NoError(t, s.SetLiveness(ctx, "claude", live))
	got, err := s.Runtime(ctx, "claude")
	require.NoError(t, err)
	assert.Equal(t, 8, got.PID)
	assert.Equal(t, Starting, got.Status)
	assert.Equal(t, "new", got.Recovery.Live.Screen)
	assert.True(t, got.Recovery.Live.Sign.Equal(at(2)))
	assert.True(t, got.Recovery.Summarize)
	assert.Len(t, got.Recovery.Restarts, 1)
	assert.ErrorIs(t, s.SetLiveness(ctx, "ghost", live), ErrNotFound)
}

// TestOpenRecords: the records a supervisor left are read as they are,
// never made, migrated or written.
func TestOpenRecords(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, StoreFile)
	_, err := OpenRecords(path)
	require.ErrorIs(t, err, ErrNotFound)
	_, err = os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "not made")

	s, err := Open(path)
	require.NoError(t, err)
	require.NoError(t, s.PutRuntime(ctx, Runtime{ID: "s/claude", Role: "claude", Agent: "claude", Status: Ready}))
	require.NoError(t, s.Close())

	r, err := OpenRecords(path)
	require.NoError(t, err)
	defer r.Close()
	rts, err := r.Runtimes(ctx)
	require.NoError(t, err)
	require.Len(t, rts, 1)
	assert.Error(t, r.PutRuntime(ctx, Runtime{ID: "s/codex", Role: "codex", Agent: "codex", Status: Ready}), "read-only")
}

// TestQueriesUseIndexes: what the supervisor asks of its store on every
// pass is found from an index, never by reading every trigger stored
// (the history grows without bound; issue 40 measured the cost).
func TestQueriesUseIndexes(t *testing.T) {
	s := openStore(t)
	since := time.Now().Add(-time.Minute)
	tests := []struct {
		name  string
		q     string
		args  []any
		index string
	}{
		{name: "open", index: "triggers_open"},
		{name: "open of a role", index: "triggers_"},
		{name: "of a status", index: "triggers_status"},
		{name: "of a thread", index: "triggers_thread"},
		{name: "sent by all", index: "triggers_sent"},
		{name: "sent by a role", index: "triggers_delivered"},
		{name: "sent in a thread", index: "triggers_"},
	}
	tests[0].q, tests[0].args = triggersQuery(TriggerFilter{Open: true})
	tests[1].q, tests[1].args = triggersQuery(TriggerFilter{Open: true, Role: "codex"})
	tests[2].q, tests[2].args = triggersQuery(TriggerFilter{Status: TFailed})
	tests[3].q, tests[3].args = triggersQuery(TriggerFilter{Thread: "loop"})
	tests[4].q, tests[4].args = sentQuery("", "", since)
	tests[5].q, tests[5].args = sentQuery("codex", "", since)
	tests[6].q, tests[6].args = sentQuery("", "loop", since)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := s.db.Query("EXPLAIN QUERY PLAN "+tt.q, tt.args...)
			require.NoError(t, err)
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, notused int
				var detail string
				require.NoError(t, rows.Scan(&id, &parent, &notused, &detail))
				plan = append(plan, detail)
			}
			require.NoError(t, rows.Err())
			text := strings.Join(plan, "; ")
			assert.Regexp(t, `USING (COVERING )?INDEX `+tt.index, text)
			assert.NotRegexp(t, `SCAN triggers($|;| USING INDEX triggers_(status|role|thread|created|delivered)\b)`, text)
		})
	}
}

// storeWithHistory is a store holding n completed triggers delivered an
// hour ago (written in one transaction) and three open ones.
func storeWithHistory(tb testing.TB, n int) *Store {
	tb.Helper()
	ctx := context.Background()
	s, err := Open(filepath.Join(tb.TempDir(), StoreFile))
	require.NoError(tb, err)
	tb.Cleanup(func() { s.Close() })
	old := fmtTime(time.Now().Add(-time.Hour))
	require.NoError(tb, s.inTx(ctx, Durable, func(tx *sql.Tx) error {
		for i := range n {
			body := fmt.Sprintf(`{"id":"h%d","role":"codex","thread_id":"default","status":"completed"}`, i)
			if _, err := tx.ExecContext(ctx, `INSERT INTO triggers (id, role, thread, status, created, updated, delivered_at, body)
				VALUES (?, 'codex', 'default', ?, ?, ?, ?, ?)`, fmt.Sprintf("h%d", i), string(Completed), old, old, old, body); err != nil {
				return err
			}
		}
		return nil
	}))
	for i := range 3 {
		_, _, err := s.AddTrigger(ctx, Trigger{ID: fmt.Sprintf("open-%d", i), Role: "codex", Thread: DefaultThread, Text: "x",
			Status: Queued, Created: time.Now(), Updated: time.Now()})
		require.NoError(tb, err)
	}
	return s
}

// BenchmarkStoreHistory: what one pass of the supervisor asks of its
// store (the open triggers, the deliveries in the rate window), and the
// trigger list's first page, cost the same with 0, 5,000 or 50,000
// triggers of history.
func BenchmarkStoreHistory(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{0, 5000, 50000} {
		s := storeWithHistory(b, n)
		b.Run(fmt.Sprintf("open/history=%d", n), func(b *testing.B) {
			for b.Loop() {
				ts, err := s.Triggers(ctx, TriggerFilter{Open: true})
				if err != nil || len(ts) != 3 {
					b.Fatalf("open: %d, %v", len(ts), err)
				}
			}
		})
		b.Run(fmt.Sprintf("page/history=%d", n), func(b *testing.B) {
			for b.Loop() {
				ts, err := s.Triggers(ctx, TriggerFilter{Limit: 51})
				if err != nil || len(ts) != min(n+3, 51) {
					b.Fatalf("page: %d, %v", len(ts), err)
				}
			}
		})
		b.Run(fmt.Sprintf("sent/history=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := s.Sent(ctx, "codex", "", time.Now().Add(-time.Minute)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestInboxMarkMovesWithWhatTheInboxFollows: the mark moves with a
// runtime, a message, a cursor, a trigger opened or closed; it stays while
// nothing of them changes (a pass then reads no inbox).
func TestInboxMarkMovesWithWhatTheInboxFollows(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("kept=%v", keep), func(t *testing.T) { testInboxMark(t, keep) })
	}
}

func testInboxMark(t *testing.T, keep bool) {
	ctx := context.Background()
	s := openStore(t)
	if keep {
		s.keepReads()
	}
	last := ""
	moved := func(step string) {
		t.Helper()
		m, err := s.InboxMark(ctx)
		require.NoError(t, err)
		assert.NotEqual(t, last, m, "%s left the mark as it was", step)
		again, err := s.InboxMark(ctx)
		require.NoError(t, err)
		assert.Equal(t, m, again, "nothing changed since %s", step)
		last = m
	}
	moved("the start")
	require.NoError(t, s.PutRuntime(ctx, Runtime{ID: "s/b", Role: "b", Status: Ready, Updated: at(0)}))
	moved("a runtime")
	m, err := s.AddMessage(ctx, Message{Thread: "th", From: "a", To: "b", Text: "hi", At: at(1)})
	require.NoError(t, err)
	moved("a message")
	_, err = s.Advance(ctx, "b", "th", m.Seq, at(2))
	require.NoError(t, err)
	moved("a cursor")
	t1, _, err := s.AddTrigger(ctx, Trigger{ID: "t1", Role: "b", Thread: "th", Text: "go", Status: Queued, Created: at(3), Updated: at(3)})
	require.NoError(t, err)
	moved("a trigger opened")
	_, _, err = s.AddTrigger(ctx, Trigger{ID: "t2", Role: "b", Thread: "th", Text: "go", Status: Queued, Created: at(4), Updated: at(4)})
	require.NoError(t, err)
	moved("another opened")
	t1.Status, t1.Updated = Completed, at(5)
	require.NoError(t, s.SaveTrigger(ctx, t1, Queued, "completed"))
	moved("one closed")
}

// TestPruneTakesTheOldClosedOnly: a prune deletes the closed triggers
// older than its cut, oldest first and a batch at a time, with their
// transitions, and the audit rows older than the cut; open triggers stay
// however old, and so do the recent ones.
func TestPruneTakesTheOldClosedOnly(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	add := func(id string, status TriggerStatus, sec int) {
		t.Helper()
		tr, _, err := s.AddTrigger(ctx, Trigger{ID: id, Role: "b", Thread: "th", Text: "go", Status: Queued, Created: at(sec), Updated: at(sec)})
		require.NoError(t, err)
		if status != Queued {
			tr.Status, tr.Updated = status, at(sec+1)
			require.NoError(t, s.SaveTrigger(ctx, tr, Queued, string(status)))
		}
	}
	add("old-done", Completed, 0)
	add("old-failed", TFailed, 2)
	add("old-open", Queued, 4)
	add("new-done", Completed, 40)
	require.NoError(t, s.Audit(ctx, AuditEvent{At: at(1), Kind: "trigger_sent", Trigger: "old-done"},
		AuditEvent{At: at(41), Kind: "trigger_sent", Trigger: "new-done"}))
	ids := func() []string {
		ts, err := s.Triggers(ctx, TriggerFilter{})
		require.NoError(t, err)
		var out []string
		for _, tr := range ts {
			out = append(out, tr.ID)
		}
		return out
	}

	n, err := s.Prune(ctx, at(30), 1, nil)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "a batch of one of each: a trigger and an audit row")
	assert.Equal(t, []string{"old-failed", "old-open", "new-done"}, ids(), "the oldest closed one went first")
	var left int
	require.NoError(t, s.db.QueryRowContext(ctx, `SELECT count(*) FROM transitions WHERE trigger_id = 'old-done'`).Scan(&left))
	assert.Zero(t, left, "with its transitions")

	n, err = s.Prune(ctx, at(30), 100, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, []string{"old-open", "new-done"}, ids(), "an open trigger stays however old")
	evs, err := s.Events(ctx, 0, 100)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, "new-done", evs[0].Trigger, "the recent audit row stays")

	n, err = s.Prune(ctx, at(30), 100, nil)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing old is left")
	_, _, err = s.AddTrigger(ctx, Trigger{ID: "old-done", Role: "b", Thread: "th", Text: "again", Status: Queued, Created: at(50), Updated: at(50)})
	require.NoError(t, err, "a pruned id is free again")
}

// TestStoreSyncsTheStepsThatDecide: of a trigger's life, the commits that
// decide whether its text goes to the agent are synced (synchronous FULL:
// its acceptance, the record before the paste, the report that it reached
// the agent) and the rest are not (NORMAL: acked, completed, the
// runtime's status, a heartbeat, an audit line, the thread's count),
// each transaction with the level it asked for.
func TestStoreSyncsTheStepsThatDecide(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), StoreFile))
	require.NoError(t, err)
	defer s.Close()
	rt := Runtime{ID: "r1", Role: "codex", Status: Ready}
	require.NoError(t, s.PutRuntime(ctx, rt))
	at := time.Now()
	tr := Trigger{ID: "t1", Role: "codex", Thread: DefaultThread, Text: "x", Status: Queued, Created: at, Updated: at}
	base := s.synced.Load()
	step := func(from, to TriggerStatus) {
		t.Helper()
		tr.Status = to
		require.NoError(t, s.SaveTrigger(ctx, tr, from, "test"))
	}
	_, _, err = s.AddTrigger(ctx, tr)
	require.NoError(t, err)
	step(Queued, TTriggering)
	tr.Reached, tr.DeliveredAt = true, at
	step(TTriggering, Delivered)
	assert.Equal(t, int64(3), s.synced.Load()-base, "accepted, recorded before the paste, reached")

	base = s.synced.Load()
	step(Delivered, Acked)
	step(Acked, Completed)
	rt.Status = Triggering
	require.NoError(t, s.putStatus(ctx, rt))
	require.NoError(t, s.Heartbeat(ctx, "codex", "working", at))
	require.NoError(t, s.Audit(ctx, AuditEvent{At: at, Kind: AuditAck, Trigger: "t1", Role: "codex"}))
	require.NoError(t, s.PutThread(ctx, Thread{ID: DefaultThread, Created: at}))
	assert.Zero(t, s.synced.Load()-base, "worked out again after a crash")

	level := func(d Durability) (n int) {
		require.NoError(t, s.inTx(ctx, d, func(tx *sql.Tx) error {
			return tx.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&n)
		}))
		return n
	}
	for range 3 { // the pool's connections keep a level: each write sets its own
		assert.Equal(t, 2, level(Durable), "FULL")
		assert.Equal(t, 1, level(Lazy), "NORMAL")
	}
	tr2 := Trigger{ID: "t2", Role: "codex", Thread: DefaultThread, Text: "y", Status: Queued, Created: at, Updated: at}
	_, _, err = s.AddTrigger(ctx, tr2)
	require.NoError(t, err)
	tr2.Status = TFailed
	base = s.synced.Load()
	require.NoError(t, s.SaveTrigger(ctx, tr2, Queued, "test"))
	assert.Equal(t, int64(1), s.synced.Load()-base, "a failure is synced")
}
