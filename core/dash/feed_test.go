package dash

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/task"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/sim"
)

// fakeTmux is a server of sessions whose panes and screens a test sets;
// it has no control mode, so the feed falls back to its slow looks.
type fakeTmux struct {
	mu      sync.Mutex
	panes   map[string][]mux.Pane // by session
	screens map[string]string     // by pane id
}

func (f *fakeTmux) ListPanes(_ context.Context, session string) ([]mux.Pane, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.panes[session]
	if !ok {
		return nil, fmt.Errorf("list panes of %s: %w", session, mux.ErrNoSession)
	}
	return p, nil
}

func (f *fakeTmux) Capture(_ context.Context, id string, _ int) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.screens[id]
	if !ok {
		return "", fmt.Errorf("capture %s: %w", id, mux.ErrNoPane)
	}
	return s, nil
}

func (f *fakeTmux) Control(context.Context, string, bool) (*tmux.Control, error) {
	return nil, errors.New("the fake has no control mode")
}

// endSession makes session name go, as a killed session does.
func (f *fakeTmux) endSession(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.panes, name)
}

// fixedClock is a clock that stays at now; its timers are the wall
// clock's.
type fixedClock struct {
	clock.Real
	now time.Time
}

func (c fixedClock) Now() time.Time                                   { return c.now }
func (c fixedClock) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// codexApproval is Codex asking to run a command.
const codexApproval = "  Would you like to run the following command?\n\n  $ ls -la\n\n› 1. Yes, proceed (y)\n  2. No (esc)"

// feedFixture is session "t" of a fake server: a claude pane whose hook
// said it took a prompt, a codex pane asking a permission on screen, a
// pane without a role and a dead one; its review state, its record
// (the team's tasks are asked for in its directory, cwd), no supervisor.
func feedFixture(t *testing.T) (f Feed, fake *fakeTmux, info tmux.SessionInfo, asked *[]string) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, state.AppendEvent(filepath.Join(dir, state.EventLog),
		hook.Event{Pane: "%1", Kind: hook.PromptSubmit, Time: t0, Prompts: []string{"fix the tests"}}))
	require.NoError(t, review.Init(review.Dir(dir), t0, 3))
	require.NoError(t, session.WriteRecord(dir, session.Record{Cwd: "/work/proj"}))
	fake = &fakeTmux{
		panes: map[string][]mux.Pane{"t": {
			{ID: "%1", Role: "claude", Agent: "claude"},
			{ID: "%2", Role: "codex", Agent: "codex"},
			{ID: "%3"},
			{ID: "%4", Role: "old", Agent: "claude", Dead: true, DeadStatus: "1"},
		}},
		screens: map[string]string{"%2": codexApproval},
	}
	info = tmux.SessionInfo{Name: "t", StateDir: dir, SocketPath: "/tmp/fake.sock"}
	asked = new([]string)
	var mu sync.Mutex
	f = Feed{
		Tmux: fake, Clock: fixedClock{now: at(1)}, Getenv: os.Getenv,
		Sessions:      func(context.Context) ([]tmux.SessionInfo, error) { return []tmux.SessionInfo{info}, nil },
		Profile:       func(p mux.Pane) agent.Profile { return agent.ForPane(agent.Kind(p.Agent), p.Role) },
		SupervisorDir: func(stateDir string) string { return filepath.Join(stateDir, "supervise") },
		SupervisorClient: func(string) (*supervise.Client, error) {
			t.Error("the supervisor's API was asked for, with no supervisor running")
			return nil, supervise.ErrNotRunning
		},
		Tasks: func(_ context.Context, cwd string) (task.Store, error) {
			mu.Lock()
			defer mu.Unlock()
			*asked = append(*asked, cwd)
			return nil, task.ErrNotFound
		},
	}
	return f, fake, info, asked
}

func TestFeedSnapshot(t *testing.T) {
	f, _, info, asked := feedFixture(t)
	gone := tmux.SessionInfo{Name: "gone", StateDir: t.TempDir()}

	m, err := f.Snapshot(context.Background(), []tmux.SessionInfo{info, gone})
	require.NoError(t, err)

	require.Len(t, m.Sessions, 1, "a session gone meanwhile is left out")
	s := m.Sessions[0]
	assert.Equal(t, "t", s.Name)
	assert.Equal(t, info.StateDir, s.StateDir)
	assert.Equal(t, at(1), m.Now)
	want := []Agent{
		{Role: "claude", Kind: "claude", Pane: "%1", State: Busy, Since: t0, Prompt: "fix the tests", Hooked: true},
		{Role: "codex", Kind: "codex", Pane: "%2", State: Permission, Since: at(1), Reason: "Would you like to run the following command? ls -la"},
		{Role: "old", Kind: "claude", Pane: "%4", State: Dead, Reason: "exited with status 1"},
	}
	got := make([]Agent, len(s.Agents))
	for i, a := range s.Agents {
		a.busyByEvent = false
		got[i] = a
	}
	assert.Equal(t, want, got)
	require.NotNil(t, s.Review, "the review state")
	assert.Equal(t, 3, s.Review.MaxIterations)
	assert.False(t, s.Review.Running)
	assert.Nil(t, s.Supervisor, "no supervisor store")
	assert.Nil(t, s.Tasks, "the team's store could not be opened")
	assert.Equal(t, []string{"/work/proj"}, *asked, "the tasks were asked for in the session's directory")
}

// TestFeedWatch runs the feed in virtual time: once the session's
// watcher armed its timers, the test moves the clock past the slow look
// and the feed looks, with no real time passing (a feed on the wall
// clock never arms the sim clock's timers, and fails here).
func TestFeedWatch(t *testing.T) {
	f, fake, _, _ := feedFixture(t)
	clk := sim.NewClock()
	f.Clock = clk
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	events := make(chan Event, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.Watch(ctx, events)
	}()

	// The first look: everything, the team's tasks last.
	m := Model{}
	for first := false; !first; {
		select {
		case ev := <-events:
			m = Update(m, ev)
			_, first = ev.(TasksSeen)
		case <-ctx.Done():
			require.FailNow(t, "no first look", "model so far: %+v", m)
		}
	}
	s := m.Session("t")
	require.NotNil(t, s, "session t")
	require.NotNil(t, s.Agent("%2"), "the codex pane")
	assert.Equal(t, Permission, s.Agent("%2").State)
	assert.Equal(t, Busy, s.Agent("%1").State)

	// Armed: the listing of the sessions, and the session's slow look
	// and look at its tasks. Without a control client the panes are
	// listed on the slow look, which finds the session gone.
	require.NoError(t, clk.AwaitTimers(ctx, 3), "the feed waits on its clock")
	fake.endSession("t")
	clk.Advance(slowPoll)
	for gone := false; !gone; {
		select {
		case ev := <-events:
			_, gone = ev.(SessionGone)
		case <-ctx.Done():
			require.FailNow(t, "the session's end was not seen")
		}
	}

	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		require.FailNow(t, "Watch did not return after its context ended")
	}
}

// TestFeedStream: Stream writes the model at once, then, as the virtual
// clock passes a beat, again with the time of the beat.
func TestFeedStream(t *testing.T) {
	f, _, info, _ := feedFixture(t)
	clk := sim.NewClock()
	f.Clock = clk
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- f.Stream(ctx, []tmux.SessionInfo{info}, w, time.Second, 5*time.Second) }()
	lines := bufio.NewScanner(r)
	model := func() Model {
		t.Helper()
		require.True(t, lines.Scan(), "a line of the stream: %v", lines.Err())
		var m Model
		require.NoError(t, json.Unmarshal(lines.Bytes(), &m))
		return m
	}

	start := clk.Now()
	first := model()
	assert.Equal(t, start, first.Now, "the model at once")
	require.Len(t, first.Sessions, 1)

	// Armed: the stream's look and the three of its Watch.
	require.NoError(t, clk.AwaitTimers(ctx, 4), "the stream waits on its clock")
	clk.Advance(5 * time.Second)
	assert.Equal(t, start.Add(5*time.Second), model().Now, "the model again after a beat")

	cancel()
	require.NoError(t, r.Close())
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		require.FailNow(t, "Stream did not return after its context ended")
	}
}
