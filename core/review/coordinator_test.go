package review

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
)

// fakeClock is a clock the test moves by hand; its timers are the wall
// clock's (the code under test sets none).
type fakeClock struct {
	clock.Real
	now time.Time
}

func (c *fakeClock) Now() time.Time { return c.now }
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.now = c.now.Add(d)
	return ctx.Err()
}

// fakeEffects records what the coordinator sent.
type fakeEffects struct {
	sent      []string
	diff      Diff
	diffErr   error
	down      map[string]bool // roles whose panes take nothing
	respawned []string        // what the next Health reports
}

func (f *fakeEffects) Diff(context.Context, string) (Diff, error) { return f.diff, f.diffErr }
func (f *fakeEffects) Send(_ context.Context, role, line string) error {
	if f.down[role] {
		return errors.New(role + " is down")
	}
	f.sent = append(f.sent, role+": "+line)
	return nil
}
func (f *fakeEffects) Health(context.Context) ([]string, error) {
	roles := f.respawned
	f.respawned = nil
	return roles, nil
}

func newCoordinator(t *testing.T) (*Coordinator, *fakeEffects, *fakeClock) {
	t.Helper()
	dir := t.TempDir()
	clk := &fakeClock{now: t0}
	require.NoError(t, Init(dir, clk.now, 3))
	fx := &fakeEffects{diff: Diff{Patch: []byte("diff --git a/x b/x\n"), MergeBase: "abc"}}
	c := &Coordinator{Dir: dir, Clock: clk, Effects: fx, Logf: t.Logf,
		Config: Config{Implementer: "claude", Reviewer: "codex", Base: "main", FindingsTimeout: time.Minute, Poll: 10 * time.Millisecond}}
	s, err := Load(dir)
	require.NoError(t, err)
	c.status = s
	return c, fx, clk
}

func send(t *testing.T, c *Coordinator, clk *fakeClock, ev Event) string {
	t.Helper()
	clk.now = clk.now.Add(time.Second)
	ev.At = clk.now
	id, err := WriteSignal(c.Dir, ev)
	require.NoError(t, err)
	return id
}

func TestCoordinatorReviewRound(t *testing.T) {
	c, fx, clk := newCoordinator(t)
	ctx := context.Background()
	send(t, c, clk, Event{Kind: EvEvidence, Evidence: Critic})
	req := send(t, c, clk, Event{Kind: EvRequest, Title: "cache"})
	require.NoError(t, c.pass(ctx))

	res, ok, err := ReadResult(c.Dir, req)
	require.NoError(t, err)
	require.True(t, ok, "the request has a result")
	assert.Equal(t, InReview, res.State)
	require.Len(t, fx.sent, 1)
	assert.Equal(t, "codex: [COORDINATOR] review request 1. Read: "+filepath.Join(c.Dir, "reviews/1/prompt.md"), fx.sent[0])
	prompt, err := os.ReadFile(filepath.Join(c.Dir, "reviews/1/prompt.md"))
	require.NoError(t, err)
	assert.Contains(t, string(prompt), filepath.Join(c.Dir, "reviews/1/diff.patch"))
	assert.Contains(t, string(prompt), filepath.Join(c.Dir, "reviews/1/findings.json"))

	findings := `{"findings":[{"id":"F1","file":"a.go","line":3,"severity":"blocking","category":"correctness","description":"off by one","suggestion":"use <"}],"summary":"one bug","stats":{"files_reviewed":1,"blocking":1,"non_blocking":0}}`
	require.NoError(t, os.WriteFile(filepath.Join(c.Dir, "reviews/1/findings.json"), []byte(findings), 0o600))
	clk.now = clk.now.Add(time.Second)
	require.NoError(t, c.pass(ctx))
	assert.Equal(t, Verdict, c.status.Phase)
	assert.True(t, c.status.Review.Delivered)
	require.Len(t, fx.sent, 2)
	msgPath := filepath.Join(c.Dir, "reviews/1/message.md")
	assert.Equal(t, "claude: [COORDINATOR] review result ready. Read: "+msgPath, fx.sent[1])
	msg, err := os.ReadFile(msgPath)
	require.NoError(t, err)
	assert.Contains(t, string(msg), "F1 [blocking, correctness] a.go:3: off by one")

	// A signal is applied once: replaying the same file changes nothing.
	ap := send(t, c, clk, Event{Kind: EvApprove})
	b, err := os.ReadFile(filepath.Join(c.Dir, "signals", ap+".json"))
	require.NoError(t, err)
	require.NoError(t, c.pass(ctx))
	assert.Equal(t, Verify, c.status.State)
	require.NoError(t, os.WriteFile(filepath.Join(c.Dir, "signals", ap+".json"), b, 0o600))
	before := c.status
	require.NoError(t, c.pass(ctx))
	assert.Equal(t, before, c.status)
	sigs, err := Signals(c.Dir)
	require.NoError(t, err)
	assert.Empty(t, sigs)

	log, err := os.ReadFile(filepath.Join(c.Dir, TransitionsFile))
	require.NoError(t, err)
	assert.Contains(t, string(log), `"event":"approve","from":"REVIEW (verdict)","to":"VERIFY"`)
}

func TestCoordinatorRejectsWithAResult(t *testing.T) {
	c, fx, clk := newCoordinator(t)
	id := send(t, c, clk, Event{Kind: EvApprove})
	require.NoError(t, c.pass(context.Background()))
	res, ok, err := ReadResult(c.Dir, id)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "no-review", res.Code)
	assert.ErrorIs(t, ResultError(res), ErrNoReview)
	assert.Empty(t, fx.sent)
	assert.Equal(t, Idle, c.status.State)
}

func TestCoordinatorInvalidAndLateFindings(t *testing.T) {
	c, fx, clk := newCoordinator(t)
	ctx := context.Background()
	send(t, c, clk, Event{Kind: EvEvidence, Evidence: Critic})
	send(t, c, clk, Event{Kind: EvRequest})
	require.NoError(t, c.pass(ctx))
	require.NoError(t, os.WriteFile(c.findingsPath(1), []byte(`{"verdict":"APPROVE","findings":[],"summary":"ok"}`), 0o600))
	clk.now = clk.now.Add(time.Second)
	require.NoError(t, c.pass(ctx))
	assert.Equal(t, Invalid, c.status.Review.Outcome)
	msg, err := os.ReadFile(filepath.Join(c.reviewDir(1), "message.md"))
	require.NoError(t, err)
	assert.Contains(t, string(msg), "verdict")

	send(t, c, clk, Event{Kind: EvReReview})
	send(t, c, clk, Event{Kind: EvRequest})
	require.NoError(t, c.pass(ctx))
	assert.Equal(t, 2, c.status.Review.N)
	clk.now = clk.now.Add(2 * time.Minute)
	require.NoError(t, c.pass(ctx))
	assert.Equal(t, Late, c.status.Review.Outcome)
	assert.Contains(t, fx.sent[len(fx.sent)-1], "review result ready")

	// Findings that arrive after the timeout are delivered, not dropped.
	require.NoError(t, os.WriteFile(c.findingsPath(2), []byte(`{"findings":[],"summary":"fine","stats":{"files_reviewed":1}}`), 0o600))
	require.NoError(t, c.pass(ctx))
	assert.Equal(t, Valid, c.status.Review.Outcome)
}

func TestCoordinatorRecovers(t *testing.T) {
	c, fx, clk := newCoordinator(t)
	ctx := context.Background()
	send(t, c, clk, Event{Kind: EvEvidence, Evidence: Critic})
	send(t, c, clk, Event{Kind: EvRequest})
	require.NoError(t, c.pass(ctx))
	require.Len(t, fx.sent, 1)

	// A new coordinator on the same dir: no findings yet, so it dispatches
	// review 1 again.
	c2 := &Coordinator{Dir: c.Dir, Clock: clk, Effects: fx, Config: c.Config, Logf: t.Logf}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	require.NoError(t, c2.Run(cctx))
	require.Len(t, fx.sent, 2)
	assert.True(t, strings.HasPrefix(fx.sent[1], "codex: [COORDINATOR] review request 1."))

	// With findings written while it was down, the next one delivers them.
	require.NoError(t, os.WriteFile(c.findingsPath(1), []byte(`{"findings":[],"summary":"fine","stats":{}}`), 0o600))
	c3 := &Coordinator{Dir: c.Dir, Clock: clk, Effects: fx, Config: c.Config, Logf: t.Logf}
	require.NoError(t, c3.Run(cctx))
	require.Len(t, fx.sent, 3)
	assert.Contains(t, fx.sent[2], "claude: [COORDINATOR] review result ready.")
	assert.Equal(t, Verdict, c3.Status().Phase)
}

func TestCoordinatorDispatchFailure(t *testing.T) {
	c, fx, clk := newCoordinator(t)
	fx.diff = Diff{}
	send(t, c, clk, Event{Kind: EvEvidence, Evidence: Critic})
	send(t, c, clk, Event{Kind: EvRequest})
	require.NoError(t, c.pass(context.Background()))
	assert.Equal(t, Implement, c.status.State)
	assert.Equal(t, 0, c.status.Reviews)
	require.Len(t, fx.sent, 1)
	assert.Contains(t, fx.sent[0], "claude: [COORDINATOR] notice result ready.")
}

func TestMarkers(t *testing.T) {
	c, _, clk := newCoordinator(t)
	c.Config.MarkerDir = t.TempDir()
	send(t, c, clk, Event{Kind: EvSession, Text: "sid1"})
	send(t, c, clk, Event{Kind: EvEvidence, Evidence: Critic})
	require.NoError(t, c.pass(context.Background()))
	assert.FileExists(t, filepath.Join(c.Config.MarkerDir, "claude-code-critic-sid1"))
	send(t, c, clk, Event{Kind: EvEdit})
	require.NoError(t, c.pass(context.Background()))
	assert.NoFileExists(t, filepath.Join(c.Config.MarkerDir, "claude-code-critic-sid1"), "an edit makes the evidence stale")
}

// The coordinator's own evidence keeps the marker names that hook setups
// read: codex-ran and codex.
func TestMarkersOfTheCoordinatorsEvidence(t *testing.T) {
	c, _, clk := newCoordinator(t)
	c.Config.MarkerDir = t.TempDir()
	send(t, c, clk, Event{Kind: EvSession, Text: "sid1"})
	reviewed(t, c, clk)
	assert.FileExists(t, filepath.Join(c.Config.MarkerDir, "claude-codex-ran-sid1"))
	send(t, c, clk, Event{Kind: EvApprove})
	passAt(t, c, clk, 0)
	assert.FileExists(t, filepath.Join(c.Config.MarkerDir, "claude-codex-sid1"))
}

func TestCodeEdit(t *testing.T) {
	assert.True(t, CodeEdit("/w/repo/cache.go", "/w/repo"))
	assert.True(t, CodeEdit("/w/repo/sub/x", "/w/repo"))
	assert.False(t, CodeEdit("/w/repo/NOTES.md", "/w/repo"))
	assert.False(t, CodeEdit("/w/repo/run.jsonl", "/w/repo"))
	assert.False(t, CodeEdit("/w/repository/x.go", "/w/repo"), "a sibling directory is outside")
	assert.False(t, CodeEdit("/tmp/scratch.go", "/w/repo"))
	assert.False(t, CodeEdit("/w/repo/x.go", ""))
}

func TestGate(t *testing.T) {
	none := in(Implement, "")
	none.Evidence = map[Kind]time.Time{}
	tests := []struct {
		name string
		s    Status
		cmd  string
		deny bool
	}{
		{"request without critic evidence", none, "party review request --base main", true},
		{"request with evidence", in(Implement, ""), "party review request", false},
		{"request after cd", none, "cd /repo && /usr/local/bin/party --json review request", true},
		{"quoted text is not a command", none, `echo "party review request"`, false},
		{"approve without review", in(Implement, ""), "party review approve", true},
		{"approve after findings", in(InReview, Verdict), "party review approve", false},
		{"approve in a subshell", in(InReview, Dispatched), "(party -L x review approve)", true},
		{"other commands", none, "go test ./... ; party review status", false},
		{"critic evidence recorded first in the same line", none, "party evidence add critic && party review request", false},
		{"critic evidence recorded after the request", none, "party review request; party evidence add critic", true},
		{"other evidence does not stand for the critic", none, "party evidence add minimizer && party review request", true},
		{"evidence add as text is not a command", none, "echo party evidence add critic && party review request", true},
		{"flags after the subcommand", in(Implement, ""), "party review --json approve", true},
		{"flags between the words", none, "party evidence --json add critic && party review request --base main", false},
		{"a flag value is not a subcommand", none, "party review --title approve request", true},
		{"approve in a substitution", in(InReview, Dispatched), "echo $(party review approve)", true},
		{"approve in a conditional", in(InReview, Dispatched), "if true; then\n  party review approve\nfi", true},
		{"approve after an assignment", in(InReview, Dispatched), "PARTY_SESSION=x party review approve", true},
		{"approve on a line before a syntax error", in(InReview, Dispatched), "party review approve\nfi", true},
		{"an escaped name is the command", none, `\party review request`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Gate(tt.s, tt.cmd)
			assert.Equal(t, tt.deny, got != "", "reason %q", got)
		})
	}
}

// passAt moves the clock by d and runs one pass.
func passAt(t *testing.T, c *Coordinator, clk *fakeClock, d time.Duration) {
	t.Helper()
	clk.now = clk.now.Add(d)
	require.NoError(t, c.pass(context.Background()))
}

func writeFindings(t *testing.T, c *Coordinator, n int, body string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(c.reviewDir(n), 0o700))
	require.NoError(t, os.WriteFile(c.findingsPath(n), []byte(body), 0o600))
}

const cleanFindings = `{"findings":[],"summary":"fine","stats":{"files_reviewed":1}}`

// reviewed runs review 1 to valid findings.
func reviewed(t *testing.T, c *Coordinator, clk *fakeClock) {
	t.Helper()
	send(t, c, clk, Event{Kind: EvEvidence, Evidence: Critic})
	send(t, c, clk, Event{Kind: EvRequest})
	passAt(t, c, clk, 0)
	writeFindings(t, c, 1, cleanFindings)
	passAt(t, c, clk, time.Second)
	require.Equal(t, Valid, c.status.Review.Outcome)
}

func TestCoordinatorTakesASignalStampedBeforeOneApplied(t *testing.T) {
	c, _, clk := newCoordinator(t)
	early := clk.now.Add(time.Second)
	send(t, c, clk, Event{Kind: EvSession, Text: "sid"})
	send(t, c, clk, Event{Kind: EvSession, Text: "sid2"})
	passAt(t, c, clk, 0)
	// A sender whose clock read earlier writes its signal only now.
	id, err := WriteSignal(c.Dir, Event{Kind: EvEvidence, Evidence: Critic, At: early})
	require.NoError(t, err)
	require.Less(t, id, c.status.Signal, "the late signal sorts first")
	passAt(t, c, clk, 0)
	res, ok, err := ReadResult(c.Dir, id)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Empty(t, res.Error)
	assert.Contains(t, c.status.Evidence, Critic, "the late signal was applied, not dropped")
}

func TestCoordinatorRetriesDeliveryUntilTheAgentTakesIt(t *testing.T) {
	c, fx, clk := newCoordinator(t)
	send(t, c, clk, Event{Kind: EvEvidence, Evidence: Critic})
	send(t, c, clk, Event{Kind: EvRequest})
	passAt(t, c, clk, 0)
	fx.down = map[string]bool{"claude": true}
	writeFindings(t, c, 1, cleanFindings)
	passAt(t, c, clk, time.Second)
	require.Equal(t, Verdict, c.status.Phase)
	assert.False(t, c.status.Review.Delivered)
	passAt(t, c, clk, time.Second)
	assert.Len(t, fx.sent, 1, "no retry before the backoff")

	fx.down = nil
	passAt(t, c, clk, retryFirst)
	require.Len(t, fx.sent, 2)
	assert.Contains(t, fx.sent[1], "claude: [COORDINATOR] review result ready.")
	assert.True(t, c.status.Review.Delivered)
	passAt(t, c, clk, retryMax)
	assert.Len(t, fx.sent, 2, "delivered once")
}

func TestCoordinatorRedispatchesToARespawnedReviewer(t *testing.T) {
	c, fx, clk := newCoordinator(t)
	c.Config.HealthInterval = time.Second
	send(t, c, clk, Event{Kind: EvEvidence, Evidence: Critic})
	send(t, c, clk, Event{Kind: EvRequest})
	passAt(t, c, clk, 0)
	require.Len(t, fx.sent, 1)

	fx.respawned = []string{"codex"}
	passAt(t, c, clk, time.Second)
	assert.Len(t, fx.sent, 1, "the respawned agent gets time to start")
	passAt(t, c, clk, respawnGrace)
	require.Len(t, fx.sent, 2)
	assert.True(t, strings.HasPrefix(fx.sent[1], "codex: [COORDINATOR] review request 1."), fx.sent[1])
	assert.Equal(t, Dispatched, c.status.Phase)
}

func TestApproveNeedsTheFindingsFileAndFreshReview(t *testing.T) {
	c, _, clk := newCoordinator(t)
	reviewed(t, c, clk)

	require.NoError(t, os.Remove(c.findingsPath(1)))
	id := send(t, c, clk, Event{Kind: EvApprove})
	passAt(t, c, clk, 0)
	res, _, err := ReadResult(c.Dir, id)
	require.NoError(t, err)
	assert.ErrorIs(t, ResultError(res), ErrNoReview)
	assert.Contains(t, res.Error, "is gone")

	writeFindings(t, c, 1, cleanFindings)
	send(t, c, clk, Event{Kind: EvEdit})
	id = send(t, c, clk, Event{Kind: EvApprove})
	passAt(t, c, clk, 0)
	res, _, err = ReadResult(c.Dir, id)
	require.NoError(t, err)
	assert.ErrorIs(t, ResultError(res), ErrNoReview)
	assert.Contains(t, res.Error, "changed after review 1 ran")
	assert.NotContains(t, c.status.Evidence, ReviewApproved)
}

func TestNextReviewPointsToThePreviousFindings(t *testing.T) {
	c, fx, clk := newCoordinator(t)
	reviewed(t, c, clk)
	send(t, c, clk, Event{Kind: EvReReview, Reason: "fix: F1"})
	send(t, c, clk, Event{Kind: EvEdit})
	send(t, c, clk, Event{Kind: EvEvidence, Evidence: Critic})
	// The first try of review 2 finds nothing to review.
	fx.diff = Diff{}
	send(t, c, clk, Event{Kind: EvRequest})
	passAt(t, c, clk, 0)
	require.Equal(t, Implement, c.status.State)

	fx.diff = Diff{Patch: []byte("diff --git a/x b/x\n"), MergeBase: "abc", Uncommitted: true}
	send(t, c, clk, Event{Kind: EvRequest})
	passAt(t, c, clk, 0)
	require.Equal(t, 2, c.status.Review.N)
	prompt, err := os.ReadFile(filepath.Join(c.reviewDir(2), "prompt.md"))
	require.NoError(t, err)
	assert.Contains(t, string(prompt), "Your previous findings are in "+c.findingsPath(1))
	assert.Contains(t, string(prompt), "The implementer's note: fix: F1")
	assert.Contains(t, string(prompt), "It includes changes that are not committed yet.")
}

func TestCoordinatorTakesTheConfiguredCap(t *testing.T) {
	c, _, _ := newCoordinator(t)
	c.Config.MaxIterations = 5
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, c.Run(ctx))
	s, err := Load(c.Dir)
	require.NoError(t, err)
	assert.Equal(t, 5, s.MaxIterations)
}

func TestCoordinatorRedeliversToARespawnedImplementer(t *testing.T) {
	c, fx, clk := newCoordinator(t)
	c.Config.HealthInterval = time.Second
	reviewed(t, c, clk)
	require.Len(t, fx.sent, 2)
	require.True(t, c.status.Review.Delivered)

	fx.respawned = []string{"claude"}
	passAt(t, c, clk, time.Second)
	assert.Len(t, fx.sent, 2, "the respawned agent gets time to start")
	passAt(t, c, clk, respawnGrace)
	require.Len(t, fx.sent, 3)
	assert.Equal(t, fx.sent[1], fx.sent[2], "the same result line again")
	passAt(t, c, clk, retryMax)
	assert.Len(t, fx.sent, 3, "once")
}

func TestAnEditDuringTheReviewMakesItStale(t *testing.T) {
	c, _, clk := newCoordinator(t)
	send(t, c, clk, Event{Kind: EvEvidence, Evidence: Critic})
	send(t, c, clk, Event{Kind: EvRequest})
	passAt(t, c, clk, 0)
	// The implementer edits while the reviewer reads the old diff.
	send(t, c, clk, Event{Kind: EvEdit})
	passAt(t, c, clk, 0)
	writeFindings(t, c, 1, cleanFindings)
	passAt(t, c, clk, time.Second)
	require.Equal(t, Valid, c.status.Review.Outcome)
	id := send(t, c, clk, Event{Kind: EvApprove})
	passAt(t, c, clk, 0)
	res, _, err := ReadResult(c.Dir, id)
	require.NoError(t, err)
	assert.ErrorIs(t, ResultError(res), ErrNoReview, "the edit came after the diff the reviewer saw")
}

func TestRecoveryRecordsTheLastSignalBeforeOlderOnes(t *testing.T) {
	c, _, clk := newCoordinator(t)
	send(t, c, clk, Event{Kind: EvEvidence, Evidence: Critic})
	passAt(t, c, clk, 0)
	// A request applied and saved, then a crash before its file was
	// removed; a signal stamped earlier arrives meanwhile.
	early := clk.now.Add(500 * time.Millisecond)
	req := send(t, c, clk, Event{Kind: EvRequest})
	b, err := os.ReadFile(filepath.Join(c.Dir, "signals", req+".json"))
	require.NoError(t, err)
	passAt(t, c, clk, 0)
	require.NoError(t, os.Remove(filepath.Join(c.Dir, "results", req+".json")))
	require.NoError(t, os.WriteFile(filepath.Join(c.Dir, "signals", req+".json"), b, 0o600))
	older, err := WriteSignal(c.Dir, Event{Kind: EvEvidence, Evidence: Minimizer, At: early})
	require.NoError(t, err)
	require.Less(t, older, req)

	c2 := &Coordinator{Dir: c.Dir, Clock: clk, Effects: c.Effects, Config: c.Config, Logf: t.Logf}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Run recovers, then stops
	require.NoError(t, c2.Run(ctx))
	require.NoError(t, c2.pass(context.Background()))
	assert.Equal(t, 1, c2.Status().Reviews, "the request was applied once")
	res, ok, err := ReadResult(c.Dir, req)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Empty(t, res.Error)
}

func TestStaleFindingsAreNotTakenForANewReview(t *testing.T) {
	c, _, clk := newCoordinator(t)
	writeFindings(t, c, 1, cleanFindings)
	send(t, c, clk, Event{Kind: EvEvidence, Evidence: Critic})
	send(t, c, clk, Event{Kind: EvRequest})
	passAt(t, c, clk, 0)
	passAt(t, c, clk, time.Second)
	assert.Equal(t, Dispatched, c.status.Phase, "the old file is not review 1's findings")
	aside, err := filepath.Glob(c.findingsPath(1) + ".stale-*")
	require.NoError(t, err)
	assert.Len(t, aside, 1, "kept, not deleted")
}
