package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/mockagents/fakemodel"
	"github.com/partyhq/party/mockagents/realagent"
)

// workScript makes a message starting with "work" a long turn (so that a
// send during it meets a busy agent) and answers anything else at once.
const workScript = "on /^work/\n  think 3s\n  say done\non *\n  say ok\n"

// BenchmarkSendIdleBusy measures whole party send commands (start to exit,
// submission confirmed) to the mocks, idle and busy.
func BenchmarkSendIdleBusy(b *testing.B) {
	kinds := []string{"claude", "codex", "gemini"}
	s := newBench(b, workScript, kinds...)
	for _, kind := range kinds {
		benchSendIdleBusy(b, s, kind, "mock")
	}
}

// BenchmarkSendReal is BenchmarkSendIdleBusy on the pinned real agents,
// answering from the fake model. Run it with a small -benchtime (20x):
// each busy round waits out a 3 s turn.
func BenchmarkSendReal(b *testing.B) {
	for _, kind := range []string{"claude", "codex", "gemini"} {
		s := newRealBench(b, kind)
		benchSendIdleBusy(b, s, kind, "real")
	}
}

// newRealBench starts the real agent kind in a private server, seeded for
// the fake model, which answers as workScript says.
func newRealBench(b *testing.B, kind string) *benchServer {
	b.Helper()
	env, work := realEnv(b, workScript, kind)
	return newBenchEnv(b, workScript, []string{"--cwd", work}, env, kind)
}

// realEnv starts the fake model, answering as scriptText says, and seeds
// the real agents kinds for it in a home of their own: it returns the
// environment for party and the agents, and the agents' folder.
func realEnv(b *testing.B, scriptText string, kinds ...string) (env []string, work string) {
	b.Helper()
	bin, err := realagent.BinDir()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	script := filepath.Join(dir, "model.script")
	if err := os.WriteFile(script, []byte(scriptText), 0o644); err != nil {
		b.Fatal(err)
	}
	srv, err := fakemodel.Start(fakemodel.Options{ScriptPath: script, LogPath: filepath.Join(dir, "model.log")})
	if err != nil {
		b.Fatal(err)
	}
	token := newToken()
	b.Cleanup(func() {
		_, _ = realagent.Reap(token)
		_ = srv.Close()
	})
	work, home := filepath.Join(dir, "work"), filepath.Join(dir, "home")
	for _, d := range []string{work, home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	env = []string{"HOME=" + home, "PATH=" + bin, realagent.TokenVar + "=" + token}
	for _, kind := range kinds {
		if _, err := realagent.Bin(kind); err != nil {
			b.Fatal(err)
		}
		e, err := realagent.Seed(realagent.SeedOptions{Kind: kind, Home: home, ModelURL: srv.URL(), WorkDir: work})
		if err != nil {
			b.Fatal(err)
		}
		env = append(env, e...)
	}
	return env, work
}

func benchSendIdleBusy(b *testing.B, s *benchServer, kind, where string) {
	profile := agent.Lookup(agent.Kind(kind))
	screen := func() string {
		sc, _ := s.tc.Capture(context.Background(), s.pane[kind], 0)
		return sc
	}
	waitFor := func(what string, ok func(string) bool) {
		deadline := time.Now().Add(waitLimit)
		for !ok(screen()) {
			if time.Now().After(deadline) {
				b.Fatalf("%s %s never %s:\n%s", where, kind, what, screen())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	idle := func(sc string) bool {
		in, found := profile.InputLine(sc)
		return found && in == "" && !profile.IsBusy(sc)
	}
	send := func(text string) time.Duration {
		start := time.Now()
		cmd := exec.Command(s.bin, "send", kind, text)
		cmd.Env = s.environ()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("party send %s %q: %v\n%s\nscreen:\n%s", kind, text, err, out, screen())
		}
		return time.Since(start)
	}
	b.Run(where+"-"+kind+"-idle", func(b *testing.B) {
		var d []time.Duration
		for i := 0; i < b.N; i++ {
			waitFor("turned idle", idle)
			d = append(d, send("one line for the idle agent"))
		}
		report(b, "send", d)
	})
	// busy starts a long turn and reports whether the agent was seen busy
	// in it (a loaded machine can miss codex's short busy line).
	busy := func() bool {
		waitFor("turned idle", idle)
		answers := strings.Count(screen(), "done")
		send("work on it")
		deadline := time.Now().Add(waitLimit)
		for time.Now().Before(deadline) {
			sc := screen()
			if profile.IsBusy(sc) {
				return true
			}
			if strings.Count(sc, "done") > answers && idle(sc) {
				return false
			}
			time.Sleep(5 * time.Millisecond)
		}
		return false
	}
	b.Run(where+"-"+kind+"-busy", func(b *testing.B) {
		var d []time.Duration
		for i := 0; i < b.N; i++ {
			for try := 0; !busy(); try++ {
				if try == 3 {
					b.Fatalf("%s %s never seen busy in 3 long turns:\n%s", where, kind, screen())
				}
			}
			d = append(d, send("one line for the busy agent"))
		}
		report(b, "send", d)
	})
}

// BenchmarkTalkReal measures, on the real agents, how long a talk --wait
// takes to return after the agent's completion event was logged (claude's
// Stop, codex's notify, gemini's AfterAgent: the event log's time).
func BenchmarkTalkReal(b *testing.B) {
	for _, kind := range []string{"claude", "codex", "gemini"} {
		s := newRealBench(b, kind)
		b.Run("real-"+kind, func(b *testing.B) {
			var lat []time.Duration
			for i := 0; i < b.N; i++ {
				cmd := exec.Command(s.bin, "talk", kind, fmt.Sprintf("question %d", i), "--wait", "--timeout", "60s")
				cmd.Env = s.environ()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("party talk: %v\n%s", err, out)
				}
				returned := time.Now()
				done, ok := lastEvent(s.env["XDG_STATE_HOME"], "turn-complete")
				if !ok {
					b.Fatalf("no turn-complete event for the talk")
				}
				lat = append(lat, returned.Sub(done))
			}
			report(b, "detect", lat)
		})
	}
}

// lastEvent returns the time of the last event of kind in the session
// event logs under the state root.
func lastEvent(stateHome, kind string) (time.Time, bool) {
	logs, _ := filepath.Glob(filepath.Join(stateHome, "party", "sessions", "*", "events.jsonl"))
	var last time.Time
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			var ev struct {
				Time time.Time `json:"time"`
				Kind string    `json:"kind"`
			}
			if json.Unmarshal([]byte(line), &ev) == nil && ev.Kind == kind && ev.Time.After(last) {
				last = ev.Time
			}
		}
	}
	return last, !last.IsZero()
}
