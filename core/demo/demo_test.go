package demo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/demo"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/sim"
)

// fakeParty stands in for party's commands: the sessions are the
// simulator's; a send is logged as the mock agents log what they get; the
// review session's coordinator is found at PR_READY.
type fakeParty struct {
	t       *testing.T
	setup   *demo.Setup
	started []string
	sent    []string
}

func (p *fakeParty) Start(_ context.Context, w io.Writer, s demo.Session) (string, error) {
	p.started = append(p.started, s.Name)
	fmt.Fprintf(w, "started %s\n", s.Name)
	dir := p.t.TempDir()
	if s.Review {
		require.NotEmpty(p.t, s.Cwd, "the review runs in its repository")
		for _, a := range s.Panes {
			script := a[strings.LastIndex(a, " ")+1:]
			require.FileExists(p.t, script, "the mock's script is written")
		}
		rd := review.Dir(dir)
		st := review.New(time.Now().UTC(), 3)
		st.State, st.Reviews = review.PRReady, 2
		require.NoError(p.t, state.MkdirPrivate(rd))
		require.NoError(p.t, review.Save(rd, st))
		for _, tr := range []review.Transition{{Event: "approve", From: "REVIEW", To: "VERIFY"}, {Event: "evidence", From: "VERIFY", To: "VERIFY"}} {
			require.NoError(p.t, state.AppendEvent(filepath.Join(rd, review.TransitionsFile), tr))
		}
	}
	return dir, nil
}

func (p *fakeParty) Panes(_ context.Context, w io.Writer, session string) error {
	fmt.Fprintf(w, "panes of %s\n", session)
	return nil
}

func (p *fakeParty) Send(_ context.Context, session, role, text string) (json.RawMessage, error) {
	p.sent = append(p.sent, session+" "+role)
	if session == demo.PartySession && role != "shell" {
		mode := "submit"
		if role == "codex" {
			text += " (mangled)"
		}
		require.NoError(p.t, state.AppendEvent(p.setup.MockLog, map[string]string{"agent": role, "mode": mode, "text": text}))
	}
	return json.RawMessage(`{"role":"` + role + `","outcome":"submitted","pane":"%1","ms":7,"enters":1}`), nil
}

// runDemo runs the demo on sim with a fake party; it returns the result,
// the log, the party and the setup.
func runDemo(t *testing.T) (demo.Result, string, *fakeParty, *demo.Setup) {
	t.Helper()
	clock := sim.NewClock()
	m := sim.NewMux(clock)
	for _, role := range []string{"codex", "claude", "shell"} {
		m.Add(demo.PartySession, role, sim.NewAgent(role))
	}
	m.Add(demo.ReviewSession, "claude", sim.NewAgent("claude"))
	m.Add(demo.ReviewSession, "codex", sim.NewAgent("codex"))
	setup := &demo.Setup{Dir: t.TempDir(), Socket: "party-demo-1"}
	setup.MockLog = filepath.Join(setup.Dir, "mock.log")
	party := &fakeParty{t: t, setup: setup}
	var log strings.Builder
	d := &demo.Demo{Party: party, Mux: m, Clock: clock, Log: &log, Setup: setup, Environ: os.Environ()}
	res, err := d.Run(context.Background())
	require.NoError(t, err)
	out := log.String()
	assert.Contains(t, out, "== starting the default party on a private tmux server (-L party-demo-1)\nstarted demo\n")
	assert.Contains(t, out, "panes of demo")
	assert.Contains(t, out, "   submitted to %1 in 7 ms (1 Enter)")
	assert.Contains(t, out, `   claude submit byte-exact: "Review $(git diff)`)
	assert.Contains(t, out, `   codex  submit differs from what was sent: "-n Implement`)
	assert.Contains(t, out, "== screen of shell (%2)")
	require.Len(t, res.Deliveries, len(demo.Messages))
	assert.JSONEq(t, `{"role":"claude","outcome":"submitted","pane":"%1","ms":7,"enters":1}`, string(res.Deliveries[0]))
	require.Len(t, res.Received, 2)
	assert.Equal(t, "claude", res.Received[0].Agent)
	return res, out, party, setup
}

// The demo's review loop needs git: a missing git fails the test, as a
// missing tmux fails the scenarios.
func TestDemoRunInSim(t *testing.T) {
	_, err := exec.LookPath("git")
	require.NoError(t, err, "git is required (apt-get install -y git)")
	res, out, party, setup := runDemo(t)
	require.NotNil(t, res.Review)
	assert.Equal(t, review.PRReady, res.Review.State)
	assert.Equal(t, []string{demo.PartySession, demo.ReviewSession}, party.started)
	assert.Equal(t, "review claude", party.sent[len(party.sent)-1])
	assert.Contains(t, out, "   approve          REVIEW -> VERIFY")
	assert.NotContains(t, out, "VERIFY -> VERIFY", "only transitions that changed the state")
	assert.Contains(t, out, "   | State: PR_READY for")
	assert.Contains(t, out, "   | Reviews: 0/3 (2 in all)")
	assert.DirExists(t, filepath.Join(setup.Dir, "repo", ".git"))
}

// Where git is missing, the demo says so and skips its review loop.
func TestDemoWithoutGitSkipsTheReview(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	res, out, party, _ := runDemo(t)
	assert.Nil(t, res.Review)
	assert.Contains(t, out, "skipped: git is not installed")
	assert.Equal(t, []string{demo.PartySession}, party.started)
}

func TestWaitAgentsTimesOutWithTheScreen(t *testing.T) {
	clock := sim.NewClock()
	m := sim.NewMux(clock)
	slow := sim.NewAgent("claude")
	m.Add("s", "claude", slow)
	slow.StartAfter(time.Hour)
	m.Add("s", "codex", sim.NewAgent("codex"))
	_, err := demo.WaitAgents(context.Background(), m, clock, "s")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorContains(t, err, "claude never showed its prompt; last screen:\n claude is starting")
}

func TestWaitLog(t *testing.T) {
	clock := sim.NewClock()
	path := filepath.Join(t.TempDir(), "mock.log")
	_, err := demo.WaitLog(context.Background(), clock, path, 1)
	assert.ErrorContains(t, err, "mock log has 0 of 1 entries")

	require.NoError(t, os.WriteFile(path, []byte("not json\n{\"agent\":\"codex\",\"mode\":\"submit\",\"text\":\"hi\"}\n"), 0o600))
	got, err := demo.WaitLog(context.Background(), clock, path, 1)
	require.NoError(t, err)
	assert.Equal(t, []demo.Entry{{Agent: "codex", Mode: "submit", Text: "hi"}}, got)
}

func TestNewSetup(t *testing.T) {
	mocks := t.TempDir()
	_, err := demo.NewSetup(mocks, "/opt/party/party", "/bin", 7)
	assert.ErrorIs(t, err, demo.ErrNoMocks)
	assert.EqualError(t, err, "mock agent claude not found in "+mocks+" (run 'make build')")

	for _, m := range []string{"claude", "codex"} {
		require.NoError(t, os.WriteFile(filepath.Join(mocks, m), nil, 0o755))
	}
	s, err := demo.NewSetup(mocks, "/opt/party/party", "/bin", 7)
	require.NoError(t, err)
	assert.DirExists(t, s.Dir)
	assert.Equal(t, "party-demo-7", s.Socket)
	assert.Equal(t, mocks+":/opt/party:/bin", s.Env["PATH"], "the mocks first, then party")
	getenv := s.Getenv(func(k string) string { return "caller's " + k })
	assert.Equal(t, s.MockLog, getenv("PARTY_MOCK_LOG"))
	assert.Equal(t, "caller's HOME", getenv("HOME"))
	env := s.Environ([]string{"HOME=/h", "PATH=/old"})
	assert.Contains(t, env, "HOME=/h")
	assert.Contains(t, env, "PATH="+s.Env["PATH"])
	assert.NotContains(t, env, "PATH=/old")
	require.NoError(t, s.Close())
	assert.NoDirExists(t, s.Dir)

	t.Setenv("TMPDIR", "/tmp")
	s, err = demo.NewSetup(mocks, "/opt/party/party", "/bin", 7)
	require.NoError(t, err)
	assert.Equal(t, s.Dir, s.Env["XDG_RUNTIME_DIR"], "the wake-up sockets in the demo's own dir, removed with it")
	require.NoError(t, s.Close())
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), strings.Repeat("long", 10)))
	require.NoError(t, os.MkdirAll(os.Getenv("TMPDIR"), 0o700))
	s, err = demo.NewSetup(mocks, "/opt/party/party", "/bin", 7)
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	assert.Equal(t, "caller's XDG_RUNTIME_DIR", s.Getenv(func(k string) string { return "caller's " + k })("XDG_RUNTIME_DIR"),
		"a dir too long for sockets is not the runtime dir: the caller's stays (not the shared /tmp/party-UID)")
}

func TestLastLines(t *testing.T) {
	assert.Equal(t, "   | b\n   | c", demo.LastLines("a\nb\nc\n\n", 2))
}

// blankShell is a mux whose shell pane shows nothing until shown: a shell
// still reading its rc files.
type blankShell struct {
	*sim.Mux
	shell string
	blank int // captures of the shell left blank; <0: forever
}

func (m *blankShell) Capture(ctx context.Context, id string, lines int) (string, error) {
	if id == m.shell && m.blank != 0 {
		m.blank--
		return "\n\n", nil
	}
	return m.Mux.Capture(ctx, id, lines)
}

// The shell's line is sent once it shows its prompt: before, a slow rc
// file (pyenv init) left the terminal's echo alone on screen and the send
// unconfirmed.
func TestWaitAgentsWaitsForTheShellsPrompt(t *testing.T) {
	for _, tt := range []struct {
		name  string
		blank int
	}{{"a shell that starts", 10}, {"a shell that never shows a prompt", -1}} {
		t.Run(tt.name, func(t *testing.T) {
			clock := sim.NewClock()
			m := &blankShell{Mux: sim.NewMux(clock), blank: tt.blank}
			m.Add("s", "claude", sim.NewAgent("claude"))
			m.Add("s", "codex", sim.NewAgent("codex"))
			m.shell = m.Add("s", "shell", sim.NewAgent("shell")).Info.ID
			_, err := demo.WaitAgents(context.Background(), m, clock, "s")
			if tt.blank < 0 {
				assert.ErrorIs(t, err, context.DeadlineExceeded)
				assert.ErrorContains(t, err, "shell never showed its prompt")
				return
			}
			require.NoError(t, err)
			assert.Zero(t, m.blank, "every blank screen was looked at before")
		})
	}
}
