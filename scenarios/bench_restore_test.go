package scenarios

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/partyhq/party/core/agent"
)

// BenchmarkRestoreReal measures bringing back a team of the real claude,
// codex and gemini after its tmux server was killed: from party start to
// every agent showing its input box, its conversation resumed, next to a
// fresh start of the same team (party start --fresh) to the same point.
// Each round first gives every agent a turn, so there is a session to
// resume.
func BenchmarkRestoreReal(b *testing.B) {
	kinds := []string{"claude", "codex", "gemini"}
	env, work := realEnv(b, "on *\n  say ok\n", kinds...)
	s := newBenchEnv(b, "", []string{"--cwd", work}, env, kinds...)
	ready := func() time.Duration {
		start := time.Now()
		for _, kind := range kinds {
			s.waitInput(b, kind)
		}
		return time.Since(start)
	}
	var restore, fresh []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for _, kind := range kinds {
			s.party(b, "talk", kind, "a turn to resume", "--wait", "--timeout", "90s")
		}
		killServer(s.getenv, s.env["SOCK"])
		b.StartTimer()
		start := time.Now()
		out := s.party(b, "start", "--session", "bench", "--no-attach", "--cwd", work)
		if strings.Count(out, ": resumed ") != len(kinds) {
			b.Fatalf("not every agent resumed:\n%s", out)
		}
		ready()
		restore = append(restore, time.Since(start))
		b.StopTimer()
		killServer(s.getenv, s.env["SOCK"])
		b.StartTimer()
		start = time.Now()
		s.party(b, "start", "--session", "bench", "--no-attach", "--cwd", work, "--fresh",
			"--pane", "claude", "--pane", "codex", "--pane", "gemini")
		ready()
		fresh = append(fresh, time.Since(start))
	}
	b.StopTimer()
	report(b, "restore", restore)
	report(b, "fresh", fresh)
	var r, f time.Duration
	for i := range restore {
		r, f = r+restore[i], f+fresh[i]
	}
	b.ReportMetric(float64(r)/float64(f), "restore/fresh")
}

// waitInput waits until the agent of role shows its input box, as its
// profile reads the screen.
func (s *benchServer) waitInput(b *testing.B, role string) {
	b.Helper()
	cmd := exec.Command(s.bin, "--session", "bench", "resolve", role)
	cmd.Env = s.environ()
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("resolve %s: %v", role, err)
	}
	pane := strings.TrimSpace(string(out))
	profile := agent.Lookup(agent.Kind(role))
	deadline := time.Now().Add(waitLimit)
	for time.Now().Before(deadline) {
		screen, err := s.tc.Capture(context.Background(), pane, 0)
		if _, ok := profile.InputLine(screen); err == nil && ok {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.Fatalf("%s never showed its input box", role)
}
