package demo

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/roles"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
)

// Session is a session the demo starts.
type Session struct {
	Name  string
	Cwd   string   // "" is the current directory
	Panes []string // ROLE[=COMMAND]; nil is the default party
	// Review runs the review coordinator.
	Review bool
}

// Party is party's own commands on the demo's server.
type Party interface {
	// Start starts s detached and returns its state dir; what party start
	// prints goes to w.
	Start(ctx context.Context, w io.Writer, s Session) (stateDir string, err error)
	// Panes prints the panes of session into w (party panes).
	Panes(ctx context.Context, w io.Writer, session string) error
	// Send delivers text to role in session and returns what
	// party send --json printed.
	Send(ctx context.Context, session, role, text string) (json.RawMessage, error)
}

// Demo is one run of the demo.
type Demo struct {
	Party Party
	// Mux is the demo's private server, to list and capture panes.
	Mux   mux.Multiplexer
	Clock clock.Clock
	Log   io.Writer // what the demo shows
	Setup *Setup
	// Environ is the environment git runs with.
	Environ []string
}

// Result is what party demo --json prints.
type Result struct {
	Deliveries []json.RawMessage `json:"deliveries"`
	Received   []Entry           `json:"received"`
	Review     *review.Status    `json:"review"`
}

// Entry is one line of the mock agents' log: a submission they received.
type Entry struct {
	Agent string `json:"agent"`
	Mode  string `json:"mode"`
	Text  string `json:"text"`
}

// Messages are delivered by role; the texts carry what breaks naive
// senders (shell syntax, a trailing ';', a leading '-', several lines).
var Messages = []struct{ Role, Text string }{
	{"claude", "Review $(git diff) and `make test`; keep $HOME as is;"},
	{"codex", "-n Implement the parser:\n\t1. tokens\n\t2. tree\nReport back when done."},
	{"shell", "echo 'hello from party'"},
}

// Session names of the demo.
const (
	PartySession  = "demo"
	ReviewSession = "review"
)

// Timeouts of the demo's waits.
const (
	idleTimeout   = 15 * time.Second
	logTimeout    = 10 * time.Second
	reviewTimeout = 30 * time.Second
	poll          = 20 * time.Millisecond
	// screenPause lets an agent finish drawing its answer before its
	// screen is shown.
	screenPause = 600 * time.Millisecond
)

// Run runs the demo and returns what it saw.
func (d *Demo) Run(ctx context.Context) (Result, error) {
	var res Result
	fmt.Fprintf(d.Log, "== starting the default party on a private tmux server (-L %s)\n", d.Setup.Socket)
	if _, err := d.Party.Start(ctx, d.Log, Session{Name: PartySession}); err != nil {
		return res, err
	}
	panes, err := WaitAgents(ctx, d.Mux, d.Clock, PartySession)
	if err != nil {
		return res, err
	}
	if err := d.Party.Panes(ctx, d.Log, PartySession); err != nil {
		return res, err
	}
	for _, m := range Messages {
		fmt.Fprintf(d.Log, "\n== party send %s %q\n", m.Role, m.Text)
		out, err := d.Party.Send(ctx, PartySession, m.Role, m.Text)
		if err != nil {
			return res, err
		}
		res.Deliveries = append(res.Deliveries, out)
		var r struct {
			Outcome string `json:"outcome"`
			Pane    string `json:"pane"`
			MS      int64  `json:"ms"`
			Enters  int    `json:"enters"`
		}
		_ = json.Unmarshal(out, &r)
		fmt.Fprintf(d.Log, "   %s to %s in %d ms (%d Enter)\n", r.Outcome, r.Pane, r.MS, r.Enters)
	}

	fmt.Fprintf(d.Log, "\n== what the mock agents received (from their log)\n")
	if res.Received, err = WaitLog(ctx, d.Clock, d.Setup.MockLog, 2); err != nil {
		return res, err
	}
	for _, e := range res.Received {
		fmt.Fprintf(d.Log, "   %-6s %-6s %s: %q\n", e.Agent, e.Mode, Exactness(e.Text), e.Text)
	}
	for _, role := range []string{"claude", "codex", "shell"} {
		p, err := roles.Resolve(panes, role)
		if err != nil {
			return res, err
		}
		_ = d.Clock.Sleep(ctx, screenPause)
		screen, err := d.Mux.Capture(ctx, p.ID, 0)
		if err != nil {
			return res, err
		}
		fmt.Fprintf(d.Log, "\n== screen of %s (%s)\n%s\n", role, p.ID, LastLines(screen, 8))
	}
	res.Review, err = d.review(ctx)
	return res, err
}

// Exactness says whether text is one of the Messages as sent.
func Exactness(text string) string {
	for _, m := range Messages {
		if m.Text == text {
			return "byte-exact"
		}
	}
	return "differs from what was sent"
}

// WaitAgents waits until the claude and codex panes of session show their
// input lines and its shell (if any) its prompt, and returns the session's
// panes.
func WaitAgents(ctx context.Context, m mux.Multiplexer, clk clock.Clock, session string) ([]mux.Pane, error) {
	panes, err := m.ListPanes(ctx, session)
	if err != nil {
		return nil, err
	}
	for _, role := range []string{"claude", "codex"} {
		p, err := roles.Resolve(panes, role)
		if err != nil {
			return nil, err
		}
		if err := waitIdle(ctx, m, clk, p.ID, agent.Lookup(agent.Kind(role))); err != nil {
			return nil, err
		}
	}
	// A shell whose rc files take their time (pyenv init: 1.4 s on an
	// idle machine, more under load) shows nothing until its prompt; a
	// line sent before it is echoed by the terminal and runs only later,
	// so its send could not be confirmed.
	if p, err := roles.Resolve(panes, "shell"); err == nil {
		if err := waitShown(ctx, m, clk, p.ID, agent.Shell, func(screen string) bool { return strings.TrimSpace(screen) != "" }); err != nil {
			return nil, err
		}
	}
	return panes, nil
}

// waitIdle waits until the agent in pane shows its input line.
func waitIdle(ctx context.Context, m mux.Multiplexer, clk clock.Clock, pane string, p agent.Profile) error {
	return waitShown(ctx, m, clk, pane, p.Kind, func(screen string) bool {
		_, found := p.InputLine(screen)
		return found
	})
}

// waitShown waits until the screen of pane (running kind) is ready, as
// ready says.
func waitShown(ctx context.Context, m mux.Multiplexer, clk clock.Clock, pane string, kind agent.Kind, ready func(screen string) bool) error {
	var screen string
	err := pollFor(ctx, clk, idleTimeout, func() (bool, error) {
		var err error
		// A capture that hangs (a tmux server stuck) must not outlast
		// the wait.
		cctx, cancel := context.WithTimeout(ctx, idleTimeout)
		defer cancel()
		if screen, err = m.Capture(cctx, pane, 0); err != nil {
			return false, err
		}
		return ready(screen), nil
	})
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s never showed its prompt; last screen:\n%s: %w", kind, screen, err)
	}
	return err
}

// pollFor calls done every poll of clk until it says so, for at most
// timeout of clk's time (then context.DeadlineExceeded) or until ctx ends.
func pollFor(ctx context.Context, clk clock.Clock, timeout time.Duration, done func() (bool, error)) error {
	deadline := clk.Now().Add(timeout)
	for {
		ok, err := done()
		if ok || err != nil {
			return err
		}
		if !clk.Now().Before(deadline) {
			return context.DeadlineExceeded
		}
		if err := clk.Sleep(ctx, poll); err != nil {
			return err
		}
	}
}

// WaitLog waits until the mock agents' log at path has n entries, and
// returns them all.
func WaitLog(ctx context.Context, clk clock.Clock, path string, n int) ([]Entry, error) {
	var entries []Entry
	err := pollFor(ctx, clk, logTimeout, func() (bool, error) {
		var err error
		if entries, err = readLog(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, err
		}
		return len(entries) >= n, nil
	})
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return entries, fmt.Errorf("mock log has %d of %d entries: %w", len(entries), n, err)
	}
	return entries, err
}

// readLog reads the entries of the mock agents' log; lines that are not
// entries are skipped.
func readLog(path string) ([]Entry, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var entries []Entry
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var e Entry
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			entries = append(entries, e)
		}
	}
	return entries, sc.Err()
}

// LastLines is the last n lines of a screen, indented as the demo shows
// screens.
func LastLines(s string, n int) string {
	return "   | " + strings.Join(session.LastLines(s, n), "\n   | ")
}

// Setup is the demo's private world: a temporary directory, a tmux
// server of its own and the environment that party and the mocks run
// with. Close removes the directory.
type Setup struct {
	Dir     string
	Socket  string // the tmux socket name
	MockLog string // where the mocks log what they receive
	// Env overrides the caller's environment.
	Env map[string]string
}

// ErrNoMocks is a mock agent missing from the mock directory.
var ErrNoMocks = errors.New("mock agent not found")

// MissingMockError names the mock agent not found.
type MissingMockError struct{ Agent, Dir string }

func (e *MissingMockError) Error() string {
	return fmt.Sprintf("mock agent %s not found in %s (run 'make build')", e.Agent, e.Dir)
}

func (e *MissingMockError) Unwrap() error { return ErrNoMocks }

// NewSetup prepares the demo's world for the party binary exe, with the
// mock agents of mockDir ("": mock/ beside exe) first on PATH, then exe's
// directory (the review loop's agents run party), then path.
func NewSetup(mockDir, exe, path string, pid int) (*Setup, error) {
	if mockDir == "" {
		mockDir = filepath.Join(filepath.Dir(exe), "mock")
	}
	mockDir, err := filepath.Abs(mockDir)
	if err != nil {
		return nil, err
	}
	for _, m := range []string{"claude", "codex"} {
		if _, err := os.Stat(filepath.Join(mockDir, m)); err != nil {
			return nil, &MissingMockError{Agent: m, Dir: mockDir}
		}
	}
	tmp, err := os.MkdirTemp("", "party-demo-")
	if err != nil {
		return nil, err
	}
	s := &Setup{Dir: tmp, Socket: fmt.Sprintf("party-demo-%d", pid), MockLog: filepath.Join(tmp, "mock.log")}
	sep := string(os.PathListSeparator)
	s.Env = map[string]string{
		"PATH":              mockDir + sep + filepath.Dir(exe) + sep + path,
		"PARTY_TMUX_SOCKET": s.Socket,
		"PARTY_TMUX_CONFIG": os.DevNull,
		"XDG_STATE_HOME":    filepath.Join(tmp, "state"),
		"PARTY_MOCK_LOG":    s.MockLog,
	}
	if state.FitsRuntimeDir(tmp) {
		// The wake-up sockets, removed with tmp. A longer $TMPDIR would
		// send them to the shared /tmp/party-UID: the caller's stays.
		s.Env["XDG_RUNTIME_DIR"] = tmp
	}
	return s, nil
}

// Getenv is getenv with the setup's environment over it.
func (s *Setup) Getenv(getenv func(string) string) func(string) string {
	return func(k string) string {
		if v, ok := s.Env[k]; ok {
			return v
		}
		return getenv(k)
	}
}

// Environ is environ with the setup's environment over it.
func (s *Setup) Environ(environ []string) []string {
	out := []string{}
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); s.Env[k] == "" {
			out = append(out, kv)
		}
	}
	for k, v := range s.Env {
		out = append(out, k+"="+v)
	}
	return out
}

// Close removes the demo's directory.
func (s *Setup) Close() error { return os.RemoveAll(s.Dir) }
