package panes

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/tmux"
)

// markServer starts a tmux server of its own with a session s whose first
// pane runs argv, and returns a function that runs tmux on it and the
// Effects over that session, with a token for the roles claude and
// codex.
func markServer(t *testing.T, argv ...string) (func(args ...string) string, *Effects) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: needs a real tmux server")
	}
	dir := t.TempDir()
	// A name of its own: one a server was killed on moments ago may not
	// serve again at once (docs/tmux.md §4).
	sock := fmt.Sprintf("party-mark-%d-%d", os.Getpid(), rand.Int64())
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-L", sock, "-f", os.DevNull}, args...)...).CombinedOutput()
		require.NoError(t, err, "tmux %q: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	run(append([]string{"new-session", "-d", "-s", "s", "-x", "80", "-y", "24"}, argv...)...)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", sock, "kill-server").Run() })
	run("set-option", "-g", "remain-on-exit", "on")
	fx := &Effects{Tmux: tmux.New(tmux.Socket{Name: sock}, tmux.ExecRunner{}), Clock: clock.Real{}, Getenv: os.Getenv,
		Config: config.Defaults(), Info: tmux.SessionInfo{Name: "s", StateDir: dir},
		Record: session.Record{Tokens: map[string]string{"claude": "h1", "codex": "h2"}}}
	return run, fx
}

// runs waits until pane runs program (tmux's name of it): a pane's
// program is tmux's own process for a moment after it starts.
func runs(t *testing.T, run func(...string) string, pane, program string) {
	t.Helper()
	require.Eventually(t, func() bool { return run("display-message", "-p", "-t", pane, "#{pane_current_command}") == program },
		5*time.Second, 20*time.Millisecond, "%s runs %s", pane, program)
}

// tag makes pane a runtime's: its role and agent.
func tag(run func(...string) string, pane, role, agent string) {
	run("set-option", "-p", "-t", pane, "@party_role", role)
	run("set-option", "-p", "-t", pane, "@party_agent", agent)
}

// agentBin is a directory of programs named as the agents (claude,
// codex), each sleep, so that a pane runs its agent as tmux names it.
func agentBin(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.Mkdir(bin, 0o700))
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	for _, agent := range []string{"claude", "codex"} {
		require.NoError(t, os.Symlink(sleep, filepath.Join(bin, agent)))
	}
	return bin
}

// TestPanesMark: the panes' mark moves with what Scan reads (the panes,
// the end of a runtime's process, a session learnt from the events) and
// with nothing else; it cannot tell before a Scan, for a pane that runs
// something else than its agent, for a program tmux names otherwise than
// its process, or for a Codex of unknown session.
func TestPanesMark(t *testing.T) {
	ctx := t.Context()
	bin := agentBin(t, "bin")
	run, fx := markServer(t, filepath.Join(bin, "claude"), "1000")
	pane := run("display-message", "-p", "-t", "s:0.0", "#{pane_id}")
	tag(run, pane, "claude", "claude")
	runs(t, run, pane, "claude")
	scan := func() {
		t.Helper()
		_, err := fx.Scan(ctx)
		require.NoError(t, err)
	}

	_, ok := fx.PanesMark(ctx)
	assert.False(t, ok, "before a Scan: its processes are not watched")
	scan()
	m1, ok := fx.PanesMark(ctx)
	require.True(t, ok)
	m, _ := fx.PanesMark(ctx)
	assert.Equal(t, m1, m, "nothing changed")
	run("send-keys", "-t", pane, "x") // printed nowhere: sleep reads nothing
	m, _ = fx.PanesMark(ctx)
	assert.Equal(t, m1, m, "a key press is no change of the panes")

	require.NoError(t, state.AppendEvent(filepath.Join(fx.Info.StateDir, state.EventLog),
		hook.Event{Time: time.Now(), Pane: pane, Agent: "claude", Kind: "submit", Session: "sess-1"}))
	m2, ok := fx.PanesMark(ctx)
	require.True(t, ok)
	assert.NotEqual(t, m1, m2, "a session learnt")

	run("new-window", "-t", "s:", "-n", "codex", filepath.Join(bin, "codex"), "1000")
	m3, ok := fx.PanesMark(ctx)
	require.True(t, ok, "a pane of no runtime yet")
	assert.NotEqual(t, m2, m3, "a new pane")
	codex := run("display-message", "-p", "-t", "s:codex.0", "#{pane_id}")
	tag(run, codex, "codex", "codex")
	runs(t, run, codex, "codex")
	_, ok = fx.PanesMark(ctx)
	assert.False(t, ok, "a runtime the last Scan did not find")
	scan()
	_, ok = fx.PanesMark(ctx)
	assert.False(t, ok, "a Codex whose session is unknown: Scan looks for it")
	run("kill-pane", "-t", codex)
	scan()
	_, ok = fx.PanesMark(ctx)
	assert.True(t, ok)

	run("respawn-pane", "-k", "-t", pane, "sleep", "1000")
	runs(t, run, pane, "sleep")
	scan()
	_, ok = fx.PanesMark(ctx)
	assert.False(t, ok, "claude's pane runs sleep")

	// A program in a path with a space: tmux names it by the path's cut,
	// and by its command line before it took the terminal.
	spaced := agentBin(t, "my bin")
	run("respawn-pane", "-k", "-t", pane, filepath.Join(spaced, "claude"), "1000")
	require.Eventually(t, func() bool {
		scan()
		_, ok := fx.PanesMark(ctx)
		return !ok && fx.commands[pane] == "claude"
	}, 5*time.Second, 20*time.Millisecond, "tmux names the program %q, its process %q", "my", "claude")

	run("respawn-pane", "-k", "-t", pane, filepath.Join(bin, "claude"), "1000")
	runs(t, run, pane, "claude")
	scan()
	m4, ok := fx.PanesMark(ctx)
	require.True(t, ok)
	pid, err := strconv.Atoi(run("display-message", "-p", "-t", pane, "#{pane_pid}"))
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	require.Eventually(t, func() bool {
		m, ok := fx.PanesMark(ctx)
		return ok && m != m4
	}, 5*time.Second, 20*time.Millisecond, "the end of its process")
	m5, _ := fx.PanesMark(ctx)
	fx.exits.end(0) // as a zombie's, which tmux shows alive
	m, _ = fx.PanesMark(ctx)
	assert.NotEqual(t, m5, m, "an end the listing does not show")
}

// inspections counts the tmux processes that captured a pane.
type inspections struct {
	tmux.ExecRunner
	n int
}

func (r *inspections) Run(ctx context.Context, argv []string, stdin []byte) ([]byte, error) {
	if slices.Contains(argv, "capture-pane") {
		r.n++
	}
	return r.ExecRunner.Run(ctx, argv, stdin)
}

// TestPulsesLookAgainOnlyAtWhatPrinted: a pane whose window printed
// nothing since its last look (in a second before it) is not captured
// again, and its pulse is the last one with the events since; one that
// printed is.
func TestPulsesLookAgainOnlyAtWhatPrinted(t *testing.T) {
	ctx := t.Context()
	run, fx := markServer(t, "cat")
	pane := run("display-message", "-p", "-t", "s:0.0", "#{pane_id}")
	tag(run, pane, "claude", "claude")
	runs(t, run, pane, "cat")
	captures := &inspections{}
	fx.Tmux.Runner = captures
	rts := []supervise.Runtime{{Role: "claude", Agent: "claude", Pane: pane, Status: supervise.Ready}}
	nextSecond := func() {
		for now := time.Now().Unix(); time.Now().Unix() == now; {
			time.Sleep(20 * time.Millisecond)
		}
	}

	nextSecond() // the pane printed at its start, in an earlier second
	first := fx.Pulses(ctx, rts)["claude"]
	require.True(t, first.Seen)
	assert.Equal(t, 1, captures.n)
	nextSecond()
	require.NoError(t, state.AppendEvent(filepath.Join(fx.Info.StateDir, state.EventLog),
		hook.Event{Time: time.Now(), Pane: pane, Agent: "claude", Kind: "notify"}))
	again := fx.Pulses(ctx, rts)["claude"]
	assert.Equal(t, 1, captures.n, "not captured again")
	assert.Equal(t, first.Screen, again.Screen)
	assert.True(t, again.Event, "the event since")
	again = fx.Pulses(ctx, rts)["claude"]
	assert.False(t, again.Event, "no event since")
	assert.Equal(t, 1, captures.n)

	run("send-keys", "-t", pane, "-l", "hello")
	require.Eventually(t, func() bool {
		return fx.Pulses(ctx, rts)["claude"].Screen != first.Screen
	}, 5*time.Second, 50*time.Millisecond, "what it printed")
	assert.Greater(t, captures.n, 1)
}

// TestExitsCountAZombie: a watched process that ended is counted, a
// zombie nobody reaps too (tmux #4559: the pane shows alive), and so is a
// pid that is gone already.
func TestExitsCountAZombie(t *testing.T) {
	if !watchExit(t.Context(), os.Getpid(), func() {}) {
		t.Skip("no pidfd: a Scan reads /proc each time")
	}
	cmd := exec.Command("sleep", "1000")
	require.NoError(t, cmd.Start())
	var x exits
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	require.True(t, x.watch(ctx, []int{cmd.Process.Pid}))
	require.True(t, x.watch(ctx, []int{cmd.Process.Pid}), "watched once")
	time.Sleep(50 * time.Millisecond)
	assert.Zero(t, x.count(), "it runs")
	require.NoError(t, cmd.Process.Kill()) // not waited for: a zombie
	require.Eventually(t, func() bool { return x.count() == 1 }, 5*time.Second, 10*time.Millisecond)
	_ = cmd.Wait() // killed
	require.True(t, x.watch(ctx, []int{cmd.Process.Pid}), "gone")
	require.Eventually(t, func() bool { return x.count() == 2 }, 5*time.Second, 10*time.Millisecond)
}
