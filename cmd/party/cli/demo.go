package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/route"
	"github.com/partyhq/party/core/tmux"
)

// DemoOptions are the inputs of party demo.
type DemoOptions struct {
	MockDir string
	Keep    bool
}

func newDemoCmd(f *Factory, runF func(context.Context, *DemoOptions) error) *cobra.Command {
	opts := &DemoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a party of mock agents on a private tmux server",
		Long: `Start the default party (codex, claude and a shell) with the mock agents
on a private tmux server, deliver a message to each by role, show what each
agent received and answered; then run the review loop (party start --review)
between a claude and a codex mock in a new git repository until PR_READY;
then stop everything: no tmux server, process or file is left behind.`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return demoRun(c.Context(), f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.MockDir, "mock-dir", "", "directory of the mock agents (default: mock/ beside the party binary)")
	return cmd
}

// demoMessages are delivered by role; the texts carry what breaks naive
// senders (shell syntax, a trailing ';', a leading '-', several lines).
var demoMessages = []struct{ role, text string }{
	{"claude", "Review $(git diff) and `make test`; keep $HOME as is;"},
	{"codex", "-n Implement the parser:\n\t1. tokens\n\t2. tree\nReport back when done."},
	{"shell", "echo 'hello from party'"},
}

func demoRun(ctx context.Context, f *Factory, opts *DemoOptions) error {
	mockDir := opts.MockDir
	if mockDir == "" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		mockDir = filepath.Join(filepath.Dir(exe), "mock")
	}
	mockDir, err := filepath.Abs(mockDir)
	if err != nil {
		return err
	}
	for _, m := range []string{"claude", "codex"} {
		if _, err := os.Stat(filepath.Join(mockDir, m)); err != nil {
			return fmt.Errorf("%w: mock agent %s not found in %s (run 'make build')", errUsage, m, mockDir)
		}
	}
	tmp, err := os.MkdirTemp("", "party-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	sock := "party-demo-" + strconv.Itoa(os.Getpid())
	mockLog := filepath.Join(tmp, "mock.log")
	exe, err := exeForPanes()
	if err != nil {
		return err
	}
	env := map[string]string{
		// The mocks first, then party itself: the review loop's agents run it.
		"PATH":              mockDir + string(os.PathListSeparator) + filepath.Dir(exe) + string(os.PathListSeparator) + f.Getenv("PATH"),
		"PARTY_TMUX_SOCKET": sock,
		"PARTY_TMUX_CONFIG": os.DevNull,
		"XDG_STATE_HOME":    filepath.Join(tmp, "state"),
		"XDG_RUNTIME_DIR":   tmp, // wake-up sockets, removed with tmp
		"PARTY_MOCK_LOG":    mockLog,
	}
	df := *f
	df.Socket, df.SocketPath, df.Session = "", "", "demo"
	df.Getenv = func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return f.Getenv(k)
	}
	df.Environ = func() []string {
		out := []string{}
		for _, kv := range f.Environ() {
			if k, _, _ := strings.Cut(kv, "="); env[k] == "" {
				out = append(out, kv)
			}
		}
		for k, v := range env {
			out = append(out, k+"="+v)
		}
		return out
	}
	df.JSON = false
	log := f.IO.ErrOut
	if !f.JSON {
		log = f.IO.Out
	}
	quiet := df
	quiet.IO.Out = log
	tc := df.Tmux()
	defer stopServer(tc, "demo")

	fmt.Fprintf(log, "== starting the default party on a private tmux server (-L %s)\n", sock)
	if err := startRun(ctx, &quiet, &StartOptions{Session: "demo", Size: "160x48", NoAttach: true}); err != nil {
		return err
	}
	panes, err := waitAgents(ctx, f, tc, "demo")
	if err != nil {
		return err
	}
	if err := panesRun(ctx, &quiet); err != nil {
		return err
	}
	var results []sendJSON
	for _, m := range demoMessages {
		fmt.Fprintf(log, "\n== party send %s %q\n", m.role, m.text)
		var out strings.Builder
		one := quiet
		one.IO.Out, one.JSON = &out, true
		err := sendRun(ctx, &one, &SendOptions{Role: m.role, Text: m.text})
		var r sendJSON
		_ = json.Unmarshal([]byte(out.String()), &r)
		results = append(results, r)
		if err != nil {
			return err
		}
		fmt.Fprintf(log, "   %s to %s in %d ms (%d Enter)\n", r.Outcome, r.Pane, r.MS, r.Enters)
	}

	fmt.Fprintf(log, "\n== what the mock agents received (from their log)\n")
	entries, err := waitLog(ctx, f, mockLog, 2)
	if err != nil {
		return err
	}
	for _, e := range entries {
		exact := "differs from what was sent"
		for _, m := range demoMessages {
			if m.text == e.Text {
				exact = "byte-exact"
			}
		}
		fmt.Fprintf(log, "   %-6s %-6s %s: %q\n", e.Agent, e.Mode, exact, e.Text)
	}
	for _, role := range []string{"claude", "codex", "shell"} {
		p, err := route.Resolve(panes, role)
		if err != nil {
			return err
		}
		_ = f.Clock.Sleep(ctx, 600*time.Millisecond)
		screen, err := tc.Capture(ctx, p.ID, 0)
		if err != nil {
			return err
		}
		fmt.Fprintf(log, "\n== screen of %s (%s)\n%s\n", role, p.ID, lastLines(screen, 8))
	}
	rs, err := demoReview(ctx, &quiet, tc, tmp, log)
	if err != nil {
		return err
	}
	if f.JSON {
		writeJSON(f.IO.Out, map[string]any{"deliveries": results, "received": entries, "review": rs})
	}
	fmt.Fprintf(log, "\n== stopping: the session, its agents and the tmux server\n")
	return nil
}

// waitAgents waits until the claude and codex panes of session show their
// input lines, and returns the session's panes.
func waitAgents(ctx context.Context, f *Factory, tc *tmux.Client, session string) ([]mux.Pane, error) {
	panes, err := tc.ListPanes(ctx, session)
	if err != nil {
		return nil, err
	}
	for _, role := range []string{"claude", "codex"} {
		p, err := route.Resolve(panes, role)
		if err != nil {
			return nil, err
		}
		if err := waitIdle(ctx, f, tc, p.ID, agent.Lookup(agent.Kind(role))); err != nil {
			return nil, err
		}
	}
	return panes, nil
}

// waitIdle waits until the agent in pane shows its input line.
func waitIdle(ctx context.Context, f *Factory, tc *tmux.Client, pane string, p agent.Profile) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	for {
		screen, err := tc.Capture(ctx, pane, 0)
		if err != nil {
			return err
		}
		if _, found := p.InputLine(screen); found {
			return nil
		}
		if err := f.Clock.Sleep(ctx, 20*time.Millisecond); err != nil {
			return fmt.Errorf("%s never showed its prompt; last screen:\n%s: %w", p.Kind, screen, err)
		}
	}
}

// demoEntry is one line of the mock agents' log.
type demoEntry struct {
	Agent string `json:"agent"`
	Mode  string `json:"mode"`
	Text  string `json:"text"`
}

func waitLog(ctx context.Context, f *Factory, path string, n int) ([]demoEntry, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		var entries []demoEntry
		if fh, err := os.Open(path); err == nil {
			sc := bufio.NewScanner(fh)
			sc.Buffer(make([]byte, 1<<20), 1<<26)
			for sc.Scan() {
				var e demoEntry
				if json.Unmarshal(sc.Bytes(), &e) == nil {
					entries = append(entries, e)
				}
			}
			fh.Close()
		}
		if len(entries) >= n {
			return entries, nil
		}
		if err := f.Clock.Sleep(ctx, 20*time.Millisecond); err != nil {
			return entries, fmt.Errorf("mock log has %d of %d entries: %w", len(entries), n, err)
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "   | " + strings.Join(lines, "\n   | ")
}

// stopServer kills the demo's tmux server and waits for it to exit.
func stopServer(tc *tmux.Client, session string) {
	ctx := context.Background()
	rows, err := tc.Query(ctx, []string{"#{pid}", "#{socket_path}"}, "display-message", "-p", "-t", tmux.SessionTarget(session))
	_, _ = tc.Run(ctx, "kill-server")
	if err != nil || len(rows) != 1 {
		return
	}
	pid, _ := strconv.Atoi(rows[0][0])
	for i := 0; i < 500 && pid > 0; i++ {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	os.Remove(rows[0][1])
}
