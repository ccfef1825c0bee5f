package sim_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/roles"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/sim"
)

// respawnMux is the sim multiplexer with the respawns the coordinator's
// health check asks for recorded (the sim has no processes to restart).
type respawnMux struct {
	*sim.Mux
	respawned []string
}

func (m *respawnMux) RespawnPane(_ context.Context, id string, spawn tmux.Spawn) error {
	m.respawned = append(m.respawned, id+" "+strings.Join(spawn.Argv, " "))
	return nil
}

// coordinatorFixture is a session "s" with a claude and a codex agent and
// the coordinator's pane effects on it, delivering with the real delivery
// protocol in virtual time.
type coordinatorFixture struct {
	clock         *sim.Clock
	mux           *respawnMux
	claude, codex *sim.Agent
	fx            *review.PaneEffects
	log           []string
}

func newCoordinatorFixture(t *testing.T) *coordinatorFixture {
	t.Helper()
	clock := sim.NewClock()
	f := &coordinatorFixture{clock: clock, mux: &respawnMux{Mux: sim.NewMux(clock)},
		claude: sim.NewAgent("claude"), codex: sim.NewAgent("codex")}
	f.mux.Add("s", "claude", f.claude)
	f.mux.Add("s", "codex", f.codex)
	d := &deliver.Deliverer{Mux: f.mux, Clock: clock, Locker: &sim.Locker{}}
	f.fx = &review.PaneEffects{Session: "s", Panes: f.mux,
		Launch: map[string]review.Launch{"claude": {Argv: []string{"claude"}}, "codex": {Argv: []string{"codex"}}},
		Logf:   func(format string, args ...any) { f.log = append(f.log, fmt.Sprintf(format, args...)) },
		Deliver: func(ctx context.Context, role, line string) (string, deliver.Result, error) {
			panes, err := f.mux.ListPanes(ctx, "s")
			if err != nil {
				return "", deliver.Result{}, err
			}
			p, err := roles.Resolve(panes, role)
			if err != nil {
				return "", deliver.Result{}, err
			}
			res, err := d.Send(ctx, deliver.Request{Pane: p.ID, Profile: agent.Lookup(agent.Kind(p.Agent)), Text: line})
			return p.ID, res, err
		}}
	return f
}

func texts(subs []sim.Submission) []string {
	var out []string
	for _, s := range subs {
		out = append(out, s.Text)
	}
	return out
}

// TestCoordinatorEffectsSend types the coordinator's lines into simulated
// agents: a confirmed line, a line whose Enter is never confirmed (sent
// once, never pasted again), and a dead pane (an error: the coordinator
// retries it later).
func TestCoordinatorEffectsSend(t *testing.T) {
	ctx := context.Background()
	t.Run("confirmed", func(t *testing.T) {
		f := newCoordinatorFixture(t)
		require.NoError(t, f.fx.Send(ctx, "codex", "[COORDINATOR] review request 1. Read: /x/prompt.md"))
		assert.Equal(t, []string{"[COORDINATOR] review request 1. Read: /x/prompt.md"}, texts(f.codex.Submissions))
		assert.Empty(t, f.claude.Submissions)
		assert.Equal(t, []string{"sent to codex (%1): [COORDINATOR] review request 1. Read: /x/prompt.md [submitted]"}, f.log)
	})
	t.Run("unconfirmed is not sent again", func(t *testing.T) {
		f := newCoordinatorFixture(t)
		f.claude.LoseEnters(100)
		require.NoError(t, f.fx.Send(ctx, "claude", "hello"))
		assert.Equal(t, 1, f.pastes("%0"), "pastes")
		assert.Equal(t, []string{"sent to claude (%0): hello [unconfirmed: not sent again]"}, f.log)
	})
	t.Run("dead pane", func(t *testing.T) {
		f := newCoordinatorFixture(t)
		f.codex.Die("1")
		err := f.fx.Send(ctx, "codex", "hello")
		require.ErrorIs(t, err, deliver.ErrPaneDead)
		assert.Empty(t, f.log)
	})
}

// pastes counts the pastes into pane.
func (f *coordinatorFixture) pastes(pane string) int {
	n := 0
	for _, c := range f.mux.Calls() {
		if c.Op == "paste" && c.Pane == pane {
			n++
		}
	}
	return n
}

// TestCoordinatorEffectsHealth: a dead agent is respawned with its launch
// command, a live one is left alone.
func TestCoordinatorEffectsHealth(t *testing.T) {
	f := newCoordinatorFixture(t)
	f.codex.Die("137")
	roles, err := f.fx.Health(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"codex"}, roles)
	assert.Equal(t, []string{"%1 codex"}, f.mux.respawned)
	assert.Equal(t, []string{"health: codex (%1) was dead (status 137); respawned"}, f.log)
}

// TestCoordinatorOnSim runs the coordinator with its pane effects on the
// sim, in virtual time: a review request reaches the reviewer's pane
// through the delivery protocol, with the diff git made of a real
// repository (a new, untracked file).
func TestCoordinatorOnSim(t *testing.T) {
	_, err := exec.LookPath("git")
	require.NoError(t, err, "git is required, as tmux is (apt-get install -y git)")
	repo := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "init"}} {
		out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t.invalid"}, args...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	require.NoError(t, os.WriteFile(filepath.Join(repo, "cache.go"), []byte("package cache\n"), 0o600))
	f := newCoordinatorFixture(t)
	f.fx.Cwd = repo
	dir := filepath.Join(t.TempDir(), "review")
	require.NoError(t, review.Init(dir, f.clock.Now(), 3))
	delivered := make(chan struct{})
	var once sync.Once
	logf := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		t.Log(line)
		if strings.HasSuffix(line, "delivered to codex") {
			once.Do(func() { close(delivered) })
		}
	}
	c := &review.Coordinator{Dir: dir, Clock: f.clock, Effects: f.fx, Logf: logf,
		Config: review.Config{Implementer: "claude", Reviewer: "codex", Base: "main", FindingsTimeout: time.Hour, Poll: 100 * time.Millisecond}}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }() // ends when ctx is cancelled
	for _, ev := range []review.Event{{Kind: review.EvEvidence, Evidence: review.Critic}, {Kind: review.EvRequest, Title: "cache"}} {
		ev.At = f.clock.Now()
		_, err := review.WriteSignal(dir, ev)
		require.NoError(t, err)
	}
	select {
	case <-delivered:
	case <-time.After(10 * time.Second):
		t.Error("the review request was not delivered")
	}
	cancel()
	require.NoError(t, <-done)
	s, err := review.Load(dir)
	require.NoError(t, err)
	require.Equal(t, review.InReview, s.State, "the request was dispatched")
	prompt := filepath.Join(review.ReviewDir(dir, 1), "prompt.md")
	assert.Equal(t, []string{"[COORDINATOR] review request 1. Read: " + prompt}, texts(f.codex.Submissions))
	assert.Empty(t, f.claude.Submissions)
	patch, err := os.ReadFile(filepath.Join(review.ReviewDir(dir, 1), "diff.patch"))
	require.NoError(t, err)
	assert.Contains(t, string(patch), "+package cache", "the untracked file is in the diff")
}
