package session

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/launch"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/core/usage"
)

func TestParsePanes(t *testing.T) {
	got, err := ParsePanes(nil)
	require.NoError(t, err)
	assert.Equal(t, []PaneSpec{
		{Role: "codex", Agent: agent.Codex, Argv: []string{"codex"}},
		{Role: "claude", Agent: agent.Claude, Argv: []string{"claude"}},
		{Role: "shell", Agent: agent.Shell},
	}, got, "default layout")

	got, err = ParsePanes([]string{"planner=claude --model opus", "executor=codex", "notes", "x=/opt/bin/mytui -v"})
	require.NoError(t, err)
	assert.Equal(t, []PaneSpec{
		{Role: "planner", Agent: agent.Claude, Argv: []string{"claude", "--model", "opus"}},
		{Role: "executor", Agent: agent.Codex, Argv: []string{"codex"}},
		{Role: "notes", Agent: agent.Shell},
		{Role: "x", Agent: agent.Generic, Argv: []string{"/opt/bin/mytui", "-v"}},
	}, got)

	for _, bad := range [][]string{{"a=x", "a=y"}, {"bad role=x"}, {"=claude"}, {"a=x 'y"}, {"-a=x"}} {
		_, err := ParsePanes(bad)
		assert.ErrorIs(t, err, usage.Err, "%q", bad)
	}
}

func TestName(t *testing.T) {
	assert.Equal(t, "my-repo", Name("/src/my.repo"))
	assert.Equal(t, "party", Name("/"))
	assert.Equal(t, "a_b-c", Name("/x/a_b:c"))
	assert.Equal(t, "x-y", Name("/x/;x#{y}"))
}

func TestParseSize(t *testing.T) {
	w, h, err := ParseSize("200x50")
	require.NoError(t, err)
	assert.Equal(t, []int{200, 50}, []int{w, h})
	for _, bad := range []string{"", "200", "x50", "19x50", "200x4", "1001x50", "axb", "200x50x1"} {
		_, _, err := ParseSize(bad)
		assert.ErrorIs(t, err, usage.Err, "%q", bad)
	}
}

func TestConfigure(t *testing.T) {
	var cfg config.Config
	cfg.Agents = map[string]config.Agent{"claude": {Command: "claude --model opus"}, "notes": {Command: "codex -m o3"}}
	panes, err := ParsePanes([]string{"claude", "notes", "x=claude"})
	require.NoError(t, err)
	require.NoError(t, configure(panes, []string{"claude", "notes", "x=claude"}, cfg))
	assert.Equal(t, []string{"claude", "--model", "opus"}, panes[0].Argv)
	assert.Equal(t, agent.Codex, panes[1].Agent, "a role's configured command decides its agent")
	assert.Equal(t, []string{"claude"}, panes[2].Argv, "a command given with --pane wins")

	cfg.Agents["claude"] = config.Agent{Command: "'unterminated"}
	panes, _ = ParsePanes(nil)
	assert.ErrorIs(t, configure(panes, nil, cfg), config.ErrInvalid)
}

func TestPaneEnv(t *testing.T) {
	got := PaneEnv([]string{"HOME=/h", "PATH=/bin", "PARTY_SESSION=old", "PARTY_ROLE=r", "PARTY_X=1", "TMUX=t"}, "s")
	assert.Equal(t, []string{"PARTY_SESSION=s", "PATH=/bin", "PARTY_X=1"}, got)
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "bin", "agent")
	require.NoError(t, os.MkdirAll(filepath.Dir(exe), 0o755))
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bin", "plain"), nil, 0o644))

	got, err := LookPath("agent", "/nonexistent:bin", dir)
	require.NoError(t, err)
	assert.Equal(t, exe, got, "a relative PATH entry is taken from cwd")
	got, err = LookPath("./bin/agent", "", dir)
	require.NoError(t, err)
	assert.Equal(t, exe, got)
	_, err = LookPath("plain", filepath.Join(dir, "bin"), dir)
	assert.ErrorIs(t, err, ErrAgentMissing, "not executable")
	_, err = LookPath("bin/plain", "", dir)
	assert.ErrorIs(t, err, ErrAgentMissing)
}

// testDeps are Deps over fake tmux, with an empty environment but HOME and
// PATH, and warnings collected.
func testDeps(t *testing.T, ft *fakeTmux, env map[string]string) (Deps, *[]string) {
	t.Helper()
	var warnings []string
	return Deps{
		Tmux: ft, Server: "test", SocketPath: "/tmp/test.sock",
		Getenv: func(k string) string { return env[k] },
		Getwd:  func() (string, error) { return env["PWD"], nil },
		Clock:  clock.Real{}, Exe: "/opt/party bin/party",
		Warn: func(s string) { warnings = append(warnings, s) },
	}, &warnings
}

func TestWireHooks(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	home := t.TempDir()
	d, warnings := testDeps(t, &fakeTmux{}, map[string]string{"HOME": home})
	d.Gemini = untrustedGemini{}
	panes := []PaneSpec{
		{Role: "c", Agent: agent.Claude, Argv: []string{"/bin/claude"}},
		{Role: "x", Agent: agent.Codex, Argv: []string{"/bin/codex", "-m", "o3"}},
		{Role: "g", Agent: agent.Gemini, Argv: []string{"/bin/gemini"}},
		{Role: "sh", Agent: agent.Shell},
	}
	require.NoError(t, wireHooks(d, dir, cwd, panes, config.MCP{}))

	settings := filepath.Join(dir, "claude-settings.json")
	assert.Equal(t, []string{"/bin/claude", "--settings", settings}, panes[0].launch)
	assert.Equal(t, "claude-settings", panes[0].Hooks)
	b, err := os.ReadFile(settings)
	require.NoError(t, err)
	assert.Contains(t, string(b), `'/opt/party bin/party' hook claude`, "the party binary, shell-quoted")
	assert.Equal(t, []string{"/bin/claude"}, panes[0].Argv, "Argv stays what was asked for")

	require.Len(t, panes[1].launch, 7)
	assert.Equal(t, []string{"/bin/codex", "-m", "o3", "-c"}, panes[1].launch[:4])
	assert.True(t, strings.HasPrefix(panes[1].launch[4], "notify="), "got %q", panes[1].launch[4])
	assert.Contains(t, panes[1].launch[4], "codex-notify")
	assert.Equal(t, []string{"-c", "allow_login_shell=false"}, panes[1].launch[5:], "its tool shell keeps the pane's PATH and PARTY_*")
	assert.Equal(t, "codex-notify", panes[1].Hooks)

	// A folder Gemini does not trust: no hooks, the marker, a warning.
	assert.Equal(t, []string{"/bin/gemini"}, panes[2].launch)
	assert.Empty(t, panes[2].Hooks)
	require.Len(t, *warnings, 1)
	assert.Contains(t, (*warnings)[0], "warning: g pane: Gemini runs no hooks in a folder it does not trust")

	assert.Empty(t, panes[3].launch)
	assert.Empty(t, panes[3].Hooks)
}

func TestSpawn(t *testing.T) {
	dir := t.TempDir()
	s := launch.Spec{Argv: []string{"a;", "b c"}, Env: []string{"K=V"}, Dir: "/w"}
	got, err := Spawn("/bin/party", dir, "role", s)
	require.NoError(t, err)
	path := filepath.Join(dir, "launch", "role.json")
	assert.Equal(t, tmux.Spawn{Cwd: "/w", Argv: launch.Command("/bin/party", path)}, got)
	back, err := launch.Read(path)
	require.NoError(t, err)
	assert.Equal(t, s, back)
}

func TestLayoutOptions(t *testing.T) {
	opts := layoutOptions("s", "/state", []PaneSpec{
		{Role: "planner", Agent: agent.Claude, ID: "%1", Hooks: "claude-settings"},
		{Role: "sh", Agent: agent.Shell, ID: "%2"},
	})
	var got []string
	for _, o := range opts {
		got = append(got, fmt.Sprintf("%s %s %s=%s", o.Scope, o.Target, o.Name, o.Value))
	}
	target := tmux.SessionTarget("s")
	assert.Equal(t, []string{
		" " + target + " @party_state_dir=/state",
		"-w " + target + " pane-border-status=top",
		"-w " + target + " pane-border-format= #{?@party_role,#{@party_role} (#{@party_agent}),#{pane_title}} ",
		"-p %1 @party_role=planner", "-p %1 @party_agent=claude", "-p %1 @party_hooks=claude-settings",
		"-p %2 @party_role=sh", "-p %2 @party_agent=shell",
	}, got)
}

func TestStart(t *testing.T) {
	cwd := t.TempDir()
	bin := filepath.Join(t.TempDir(), "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\n"), 0o755))
	env := map[string]string{"HOME": t.TempDir(), "XDG_STATE_HOME": t.TempDir(), "PATH": bin, "PWD": cwd}

	t.Run("builds the session", func(t *testing.T) {
		ft := &fakeTmux{}
		d, _ := testDeps(t, ft, env)
		d.Environ = []string{"PATH=" + bin, "PARTY_X=1", "SECRET=s"}
		res, err := Start(context.Background(), d, StartOptions{Name: "team", Panes: []string{"exec=codex", "notes"}, Size: "100x30"})
		require.NoError(t, err)
		assert.Equal(t, "team", res.Session)
		assert.Equal(t, "/tmp/test.sock", res.Socket)
		require.Len(t, res.Panes, 2)
		assert.Equal(t, []string{"%0", "%1"}, []string{res.Panes[0].ID, res.Panes[1].ID})
		assert.Equal(t, []string{filepath.Join(bin, "codex")}, res.Panes[0].Argv, "the program is found on the caller's PATH")
		assert.Equal(t, "codex-notify", res.Panes[0].Hooks)
		assert.Equal(t, []string{"new-session team 100x30", "split-window %0", "set-options 8"}, ft.calls)
		assert.Equal(t, tmux.Spawn{Cwd: cwd, Env: []string{"PARTY_SESSION=team", "PATH=" + bin, "PARTY_X=1", "PARTY_STATE_DIR=" + res.StateDir, "PARTY_ROLE=notes"}},
			ft.spawns[1], "a shell pane")
		assert.Equal(t, launch.Command("/opt/party bin/party", filepath.Join(res.StateDir, "launch", "exec.json")), ft.spawns[0].Argv)
		assert.FileExists(t, filepath.Join(res.StateDir, "session.json"))
	})

	t.Run("refuses an existing session", func(t *testing.T) {
		d, _ := testDeps(t, &fakeTmux{exists: true}, env)
		_, err := Start(context.Background(), d, StartOptions{Name: "team", Size: "200x50"})
		assert.ErrorIs(t, err, ErrExists)
	})

	t.Run("kills a half-built session", func(t *testing.T) {
		ft := &fakeTmux{failSplit: true}
		d, _ := testDeps(t, ft, env)
		_, err := Start(context.Background(), d, StartOptions{Name: "half", Panes: []string{"a", "b"}, Size: "200x50"})
		require.Error(t, err)
		assert.Equal(t, []string{"new-session half 200x50", "split-window %0", "kill-session half"}, ft.calls)
	})

	t.Run("brings back a team that died", func(t *testing.T) {
		ft := &fakeTmux{}
		d, warnings := testDeps(t, ft, env)
		_, err := Start(context.Background(), d, StartOptions{Name: "team", Panes: []string{"exec=codex", "other"}, Size: "100x30"})
		require.ErrorIs(t, err, usage.Err, "other panes than the team's")
		assert.ErrorContains(t, err, "--pane exec=codex --pane notes, not --pane exec=codex --pane other")
		_, err = Start(context.Background(), d, StartOptions{Name: "team", Layout: "windows", Size: "100x30"})
		require.ErrorIs(t, err, usage.Err, "another layout than the team's")
		assert.Empty(t, ft.calls, "nothing created")

		res, err := Start(context.Background(), d, StartOptions{Name: "team", Size: "100x30"})
		require.NoError(t, err)
		assert.True(t, res.Restored)
		assert.Equal(t, []string{"new-session team 100x30", "split-window %0", "set-options 8"}, ft.calls)
		assert.Equal(t, launch.Command("/opt/party bin/party", filepath.Join(res.StateDir, "launch", "exec.json")), ft.spawns[0].Argv,
			"a codex with no session of its own yet starts as it was launched")
		require.Len(t, res.Agents, 1)
		assert.False(t, res.Agents[0].Resumed)
		assert.Contains(t, res.Agents[0].Why, "no session of its own yet")
		assert.Empty(t, *warnings, "nothing lost: no warning")

		// Its codex had a thread, whose rollout Codex keeps: resumed by id.
		const thread = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
		rollout := filepath.Join(env["HOME"], ".codex", "sessions", "2026", "11", "29", "rollout-2026-11-29T01-02-03-"+thread+".jsonl")
		require.NoError(t, os.MkdirAll(filepath.Dir(rollout), 0o700))
		require.NoError(t, os.WriteFile(rollout, []byte("{}\n"), 0o600))
		require.NoError(t, state.AppendEvent(filepath.Join(res.StateDir, state.EventLog),
			hook.Event{Time: time.Now().UTC(), Pane: "%9", Role: "exec", Agent: "codex", Kind: hook.TurnComplete, Session: thread}))
		ft2 := &fakeTmux{}
		d.Tmux = ft2
		res, err = Start(context.Background(), d, StartOptions{Name: "team", Size: "100x30"})
		require.NoError(t, err)
		require.Len(t, res.Agents, 1)
		assert.True(t, res.Agents[0].Resumed)
		assert.Equal(t, thread, res.Agents[0].Session)
		assert.Equal(t, rollout, res.Agents[0].Transcript)
		rpath := filepath.Join(res.StateDir, "launch", "exec.resume.json")
		assert.Equal(t, launch.Command("/opt/party bin/party", rpath), ft2.spawns[0].Argv)
		ls, err := launch.Read(rpath)
		require.NoError(t, err)
		assert.Equal(t, []string{"resume", thread}, ls.Argv[len(ls.Argv)-2:])

		// The agent refuses the session (it dies printing why): started
		// again fresh in its pane, with a warning that quotes it.
		ft3 := &fakeTmux{running: []mux.Pane{{ID: "%0", Dead: true}},
			screen: "No conversation found with session ID: " + thread + "\nResume this session with:\nclaude --resume " + thread + "\n\nPane is dead (status 1, Sun Nov 29 01:27:41 2026)\n"}
		d.Tmux = ft3
		res, err = Start(context.Background(), d, StartOptions{Name: "team", Size: "100x30"})
		require.NoError(t, err)
		assert.False(t, res.Agents[0].Resumed)
		assert.Equal(t, "the agent refused to resume it: No conversation found with session ID: "+thread, res.Agents[0].Why)
		assert.Contains(t, ft3.calls, "respawn-pane %0")
		assert.Equal(t, launch.Command("/opt/party bin/party", filepath.Join(res.StateDir, "launch", "exec.json")), ft3.spawns[len(ft3.spawns)-1].Argv)
		require.Len(t, *warnings, 1)
		assert.Contains(t, (*warnings)[0], "exec: started fresh, its session "+thread+" not resumed: the agent refused")
		*warnings = nil

		// The rollout gone: fresh, with a warning naming the role.
		require.NoError(t, os.Remove(rollout))
		d.Tmux = &fakeTmux{}
		res, err = Start(context.Background(), d, StartOptions{Name: "team", Size: "100x30"})
		require.NoError(t, err)
		assert.False(t, res.Agents[0].Resumed)
		require.Len(t, *warnings, 1)
		assert.Contains(t, (*warnings)[0], "exec: started fresh, its session "+thread+" not resumed: Codex keeps no rollout")

		// --fresh: a new team, the old thread listed as earlier.
		d.Tmux = &fakeTmux{}
		res, err = Start(context.Background(), d, StartOptions{Name: "team", Panes: []string{"exec=codex"}, Size: "100x30", Fresh: true})
		require.NoError(t, err)
		assert.False(t, res.Restored)
		rec, err := ReadRecord(res.StateDir)
		require.NoError(t, err)
		require.Len(t, rec.Earlier, 1)
		assert.Equal(t, thread, rec.Earlier[0].Session)
		agents := Agents(res.StateDir, rec, d.Getenv)
		require.Len(t, agents, 1)
		assert.Empty(t, agents[0].Session, "the events of the team it replaced are not its own")
	})

	tests := []struct {
		name string
		opts StartOptions
		want error
	}{
		{"bad pane", StartOptions{Panes: []string{"a b"}, Size: "200x50"}, usage.Err},
		{"bad size", StartOptions{Size: "2x2"}, usage.Err},
		{"cwd not a directory", StartOptions{Cwd: "/nonexistent/dir", Size: "200x50"}, usage.Err},
		{"bad session name", StartOptions{Name: "a:b", Size: "200x50"}, usage.Err},
		{"missing agent", StartOptions{Name: "missing", Panes: []string{"claude"}, Size: "200x50"}, ErrAgentMissing},
		{"nothing to restore", StartOptions{Name: "none", Restore: true, Size: "200x50"}, usage.Err},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ft := &fakeTmux{}
			d, _ := testDeps(t, ft, env)
			_, err := Start(context.Background(), d, tt.opts)
			assert.ErrorIs(t, err, tt.want)
			assert.Empty(t, ft.calls, "nothing created")
		})
	}
}

func TestStop(t *testing.T) {
	ft := &fakeTmux{info: tmux.SessionInfo{StateDir: t.TempDir()}}
	// The runtime dir of the test home: short enough for sockets, so
	// that stop's sweep of dead wake sockets looks there, not in /tmp.
	d, warnings := testDeps(t, ft, map[string]string{"XDG_RUNTIME_DIR": os.Getenv("XDG_RUNTIME_DIR")})
	require.NoError(t, Stop(context.Background(), d, "team"))
	assert.Equal(t, []string{"list-panes", "kill-session team"}, ft.calls)
	assert.Empty(t, *warnings)
}

// fakeTmux records what Start and Stop ask of tmux.
type fakeTmux struct {
	exists, failSplit bool
	info              tmux.SessionInfo
	calls             []string
	spawns            []tmux.Spawn
	panes             int
	running           []mux.Pane // what ListPanes returns
	screen            string     // what Capture returns
}

func (f *fakeTmux) HasSession(context.Context, string) (bool, error) { return f.exists, nil }
func (f *fakeTmux) KillSession(_ context.Context, name string) error {
	f.calls = append(f.calls, "kill-session "+name)
	return nil
}

func (f *fakeTmux) ListPanes(context.Context, string) ([]mux.Pane, error) {
	f.calls = append(f.calls, "list-panes")
	return f.running, nil
}

func (f *fakeTmux) Capture(context.Context, string, int) (string, error) { return f.screen, nil }

func (f *fakeTmux) RespawnPane(_ context.Context, id string, s tmux.Spawn) error {
	f.calls = append(f.calls, "respawn-pane "+id)
	f.spawns = append(f.spawns, s)
	return nil
}

func (f *fakeTmux) SessionInfo(context.Context, string) (tmux.SessionInfo, error) {
	return f.info, nil
}

func (f *fakeTmux) pane(s tmux.Spawn) string {
	f.spawns = append(f.spawns, s)
	id := fmt.Sprintf("%%%d", f.panes)
	f.panes++
	return id
}

func (f *fakeTmux) NewSession(_ context.Context, name string, w, h int, s tmux.Spawn, _ ...tmux.Option) (string, error) {
	f.calls = append(f.calls, fmt.Sprintf("new-session %s %dx%d", name, w, h))
	return f.pane(s), nil
}

func (f *fakeTmux) SplitWindow(_ context.Context, target string, s tmux.Spawn) (string, error) {
	f.calls = append(f.calls, "split-window "+target)
	if f.failSplit {
		return "", fmt.Errorf("split failed")
	}
	return f.pane(s), nil
}

func (f *fakeTmux) SplitBottom(_ context.Context, session string, _ int, s tmux.Spawn) (string, error) {
	f.calls = append(f.calls, "split-bottom "+session)
	return f.pane(s), nil
}

func (f *fakeTmux) NewWindow(_ context.Context, session, name string, s tmux.Spawn) (string, error) {
	f.calls = append(f.calls, "new-window "+session+" "+name)
	return f.pane(s), nil
}

func (f *fakeTmux) SetOptions(_ context.Context, opts ...tmux.Option) error {
	f.calls = append(f.calls, fmt.Sprintf("set-options %d", len(opts)))
	return nil
}

// TestStopEndsThePanesProcessTrees: a pane's process and a child that
// ignore the hang-up and SIGTERM (as an agent's relaunched child may) are
// gone when Stop returns.
func TestStopEndsThePanesProcessTrees(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: only the pane's own process is known")
	}
	cmd := exec.Command("sh", "-c", `trap "" HUP TERM; sh -c 'trap "" HUP TERM; while :; do sleep 0.05; done' & wait`)
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	var tree []proc
	for deadline := time.Now().Add(5 * time.Second); len(tree) < 2 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		tree = procTree([]int{cmd.Process.Pid})
	}
	require.GreaterOrEqual(t, len(tree), 2, "the shell and its child")

	ft := &fakeTmux{info: tmux.SessionInfo{StateDir: t.TempDir()}, running: []mux.Pane{{ID: "%0", PID: cmd.Process.Pid}}}
	d, warnings := testDeps(t, ft, map[string]string{"XDG_RUNTIME_DIR": os.Getenv("XDG_RUNTIME_DIR")})
	d.Clock = quickClock{}
	require.NoError(t, Stop(context.Background(), d, "team"))
	<-done // reaped here: the shell was killed
	assert.Empty(t, living(tree), "every process of the pane's tree ended")
	assert.Empty(t, *warnings)
}

// quickClock's sleeps take a millisecond, whatever they are for: the
// grace periods of Stop pass in virtual time.
type quickClock struct{ clock.Real }

func (quickClock) Sleep(ctx context.Context, _ time.Duration) error {
	return clock.Real{}.Sleep(ctx, time.Millisecond)
}

// untrustedGemini is Deps.Gemini for a folder Gemini does not trust.
type untrustedGemini struct{}

func (untrustedGemini) Wire(string, string, []string, *hook.GeminiMCP) (string, error) {
	return "Gemini runs no hooks in a folder it does not trust", nil
}
func (untrustedGemini) WireWorktree(string, string, string, string, []string, *hook.GeminiMCP) (string, []string, error) {
	return "Gemini runs no hooks in a folder it does not trust", nil, nil
}
func (untrustedGemini) Unwire(context.Context, string) error { return nil }
func (untrustedGemini) SettingsPath(dir string) string       { return filepath.Join(dir, "settings") }
