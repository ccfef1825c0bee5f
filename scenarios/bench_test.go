package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/mockagents/mocklog"
)

// benchServer is a private tmux server with a claude and a codex mock that
// answer at once, for the delivery benchmarks.
type benchServer struct {
	bin  string // the party binary, built as users get it
	env  map[string]string
	tc   *tmux.Client
	log  string
	pane map[string]string
}

func (s *benchServer) getenv(k string) string { return s.env[k] }

func (s *benchServer) environ() []string {
	var out []string
	for k, v := range s.env {
		out = append(out, k+"="+v)
	}
	return out
}

func newBenchServer(b *testing.B) *benchServer {
	return newBench(b, "on *\n  say ok\n", "claude", "codex")
}

// newBench starts a private server with one pane per spec (as --pane
// takes it), whose mocks answer as script says.
func newBench(b *testing.B, scriptText string, panes ...string) *benchServer {
	b.Helper()
	return newBenchWith(b, scriptText, nil, panes...)
}

// newBenchWith is newBench with more arguments for party start.
func newBenchWith(b *testing.B, scriptText string, startArgs []string, panes ...string) *benchServer {
	b.Helper()
	return newBenchEnv(b, scriptText, startArgs, nil, panes...)
}

// newBenchEnv is newBenchWith with more environment (KEY=VALUE; a PATH
// there is put in front of the inherited one) for party and its panes.
func newBenchEnv(b *testing.B, scriptText string, startArgs, env []string, panes ...string) *benchServer {
	b.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Fatalf("tmux is required: %v", err)
	}
	dir := b.TempDir()
	tmpdir, err := os.MkdirTemp("", "pb")
	if err != nil {
		b.Fatal(err)
	}
	script := filepath.Join(dir, "fast.script")
	if err := os.WriteFile(script, []byte(scriptText), 0o644); err != nil {
		b.Fatal(err)
	}
	s := &benchServer{
		env: map[string]string{
			"PATH": os.Getenv("PATH"), "HOME": dir, "XDG_STATE_HOME": filepath.Join(dir, "state"),
			"TMUX_TMPDIR": tmpdir, "LC_ALL": "C.UTF-8", "TERM": "xterm-256color",
			"SOCK": "pb" + filepath.Base(tmpdir)[2:], "PARTY_TMUX_CONFIG": os.DevNull,
			"PARTY_MOCK_LOG": filepath.Join(dir, "mock.log"), "PARTY_MOCK_SCRIPT": script,
			"PARTY_MOCK_TRACE": filepath.Join(dir, "trace.log"),
		},
		log: filepath.Join(dir, "mock.log"),
	}
	s.env["PARTY_TMUX_SOCKET"] = s.env["SOCK"]
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if k == "PATH" {
			v += string(os.PathListSeparator) + s.env["PATH"]
		}
		s.env[k] = v
	}
	// Measure the binary users run, not the test binary standing in for it.
	s.bin = filepath.Join(dir, "party")
	if out, err := exec.Command("go", "build", "-o", s.bin, "../cmd/party").CombinedOutput(); err != nil {
		b.Fatalf("build party: %v\n%s", err, out)
	}
	b.Cleanup(func() {
		killServer(s.getenv, s.env["SOCK"])
		os.RemoveAll(tmpdir)
	})
	s.tc = tmux.New(tmux.Socket{Name: s.env["SOCK"]}, tmux.ExecRunner{Env: s.environ()})
	args := append([]string{"start", "--session", "bench", "--no-attach"}, startArgs...)
	for _, p := range panes {
		args = append(args, "--pane", p)
	}
	s.party(b, args...)
	s.pane = map[string]string{}
	for _, p := range panes {
		role, _, _ := strings.Cut(p, "=")
		s.pane[role] = strings.TrimSpace(s.party(b, "resolve", role))
	}
	for role, want := range map[string]string{"claude": "❯\u00a0", "codex": "› Ask Codex", "gemini": "Type your message", "bot": "mock>"} {
		if id, ok := s.pane[role]; ok {
			s.waitScreen(b, id, want)
		}
	}
	return s
}

func (s *benchServer) party(b *testing.B, args ...string) string {
	b.Helper()
	cmd := exec.Command(s.bin, args...)
	cmd.Env = s.environ()
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("party %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (s *benchServer) waitScreen(b *testing.B, pane, want string) {
	b.Helper()
	deadline := time.Now().Add(waitLimit)
	for time.Now().Before(deadline) {
		screen, err := s.tc.Capture(context.Background(), pane, 0)
		if err == nil && strings.Contains(screen, want) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.Fatalf("pane %s never showed %q", pane, want)
}

func (s *benchServer) entries(b *testing.B) int {
	e, err := mocklog.Read(s.log)
	if err != nil && !os.IsNotExist(err) {
		b.Fatal(err)
	}
	return len(e)
}

// waitEntry waits until the mock log holds more than n entries and returns
// when it saw the new one. It polls the file's size (cheap) and reads the
// log only once it grew.
func (s *benchServer) waitEntry(b *testing.B, n int) time.Time {
	size := func() int64 {
		st, err := os.Stat(s.log)
		if err != nil {
			return 0
		}
		return st.Size()
	}
	before := size()
	if s.entries(b) > n {
		return time.Now() // it came before the wait began
	}
	deadline := time.Now().Add(waitLimit)
	for time.Now().Before(deadline) {
		if size() > before {
			seen := time.Now()
			if s.entries(b) > n {
				return seen
			}
			before = size()
		}
		time.Sleep(100 * time.Microsecond)
	}
	b.Fatalf("no submission after entry %d", n)
	return time.Time{}
}

// entryTime waits until the mock log holds more than n entries and returns
// the time the mock logged entry n at.
func (s *benchServer) entryTime(b *testing.B, n int) time.Time {
	deadline := time.Now().Add(waitLimit)
	for time.Now().Before(deadline) {
		if e, err := mocklog.Read(s.log); err == nil && len(e) > n {
			return e[n].Time
		}
		time.Sleep(time.Millisecond)
	}
	b.Fatalf("no submission after entry %d", n)
	return time.Time{}
}

// idle waits until the agent has answered and shows an empty input line.
func (s *benchServer) idle(b *testing.B, role string) {
	want := map[string]string{"claude": "❯\u00a0\n", "codex": "› Ask Codex", "gemini": "Type your message", "bot": "mock>"}[role]
	s.waitScreen(b, s.pane[role], want)
}

func percentile(d []time.Duration, p float64) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[int(float64(len(d)-1)*p)]
}

func report(b *testing.B, name string, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	b.ReportMetric(float64(sum.Microseconds())/float64(len(d))/1000, name+"-ms/op")
	b.ReportMetric(float64(percentile(d, 0.5).Microseconds())/1000, name+"-p50-ms")
	b.ReportMetric(float64(percentile(d, 0.95).Microseconds())/1000, name+"-p95-ms")
}

var kb100 = func() string {
	var b strings.Builder
	for b.Len() < 100*1024 {
		b.WriteString("the quick brown fox jumps over the lazy dog $HOME `x` 'y' 日本語\n")
	}
	return b.String()
}()

// BenchmarkSend measures a whole party send, from the command's start to
// the submission appearing in the mock agent's log.
func BenchmarkSend(b *testing.B) {
	s := newBenchServer(b)
	for _, c := range []struct{ name, role, text string }{
		{"codex-100KB", "codex", kb100},
		{"claude-1line", "claude", "Review the diff in /tmp/x.patch and report back;"},
	} {
		b.Run(c.name, func(b *testing.B) {
			text := filepath.Join(b.TempDir(), "msg")
			if err := os.WriteFile(text, []byte(c.text), 0o644); err != nil {
				b.Fatal(err)
			}
			var lat, whole []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s.idle(b, c.role)
				n := s.entries(b)
				in, err := os.Open(text)
				if err != nil {
					b.Fatal(err)
				}
				var out strings.Builder
				cmd := exec.Command(s.bin, "send", c.role, "-")
				cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = s.environ(), in, &out, &out
				b.StartTimer()
				start := time.Now()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				// The submission lands in the log before party has confirmed
				// it on screen: watch the log while party runs.
				lat = append(lat, s.waitEntry(b, n).Sub(start))
				if err := cmd.Wait(); err != nil {
					b.Fatalf("party send: %v\n%s", err, out.String())
				}
				whole = append(whole, time.Since(start))
				b.StopTimer()
				in.Close()
			}
			report(b, "party", whole)
			report(b, "send", lat)
		})
	}
}

// BenchmarkPaste100KB compares putting 100 KB into the codex mock's input
// with party's load-buffer + paste-buffer against the naive baseline of
// send-keys -l in 1 KB chunks. Only the delivery of the text is timed; the
// text is then submitted so the next round starts from an empty input.
func BenchmarkPaste100KB(b *testing.B) {
	s := newBenchServer(b)
	pane := s.pane["codex"]
	ctx := context.Background()
	submit := func(b *testing.B) {
		n := s.entries(b)
		time.Sleep(200 * time.Millisecond) // past codex's paste-burst window
		if err := s.tc.SendKey(ctx, pane, "Enter"); err != nil {
			b.Fatal(err)
		}
		s.waitEntry(b, n)
		s.idle(b, "codex")
	}
	b.Run("paste-buffer", func(b *testing.B) {
		var lat []time.Duration
		for i := 0; i < b.N; i++ {
			start := time.Now()
			if err := s.tc.Paste(ctx, pane, []byte(kb100)); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
			b.StopTimer()
			s.waitScreen(b, pane, "[Pasted Content")
			submit(b)
			b.StartTimer()
		}
		report(b, "paste", lat)
	})
	b.Run("send-keys-1KB-chunks", func(b *testing.B) {
		// Newlines would press Enter through send-keys and 1 KB cuts would
		// split UTF-8 characters: the baseline types one long ASCII line.
		line := strings.Repeat("the quick brown fox jumps over the lazy dog ", 100*1024/44+1)[:100*1024]
		var lat []time.Duration
		for i := 0; i < b.N; i++ {
			start := time.Now()
			for off := 0; off < len(line); off += 1024 {
				chunk := line[off:min(off+1024, len(line))]
				if _, err := s.tc.Run(ctx, "send-keys", "-t", pane, "-l", "--", chunk); err != nil {
					b.Fatal(err)
				}
			}
			lat = append(lat, time.Since(start))
			b.StopTimer()
			submit(b)
			b.StartTimer()
		}
		report(b, "sendkeys", lat)
	})
}

// BenchmarkTalkDetection measures how long party talk --wait takes to
// return after the agent emitted its completion: the claude mock's Stop
// hook (the hook path) and the generic mock's marker line (the marker
// path), from the mock's own trace of when it emitted them.
func BenchmarkTalkDetection(b *testing.B) {
	// Gemini runs party's hooks only in a folder it trusts.
	cwd := b.TempDir()
	s := newBenchEnv(b, "on *\n  think 100ms\n  say done\n  marker\n", []string{"--cwd", cwd}, []string{"GEMINI_CLI_TRUST_WORKSPACE=true"},
		"claude", "codex", "gemini", "bot=mockagent")
	trace := s.env["PARTY_MOCK_TRACE"]
	for _, c := range []struct{ name, role, mode string }{
		{"hook", "claude", "stop"}, {"codex-rollout", "codex", "notify"}, {"gemini-hook", "gemini", "after-agent"}, {"marker", "bot", "marker"},
	} {
		b.Run(c.name, func(b *testing.B) {
			var lat []time.Duration
			for i := 0; i < b.N; i++ {
				s.idle(b, c.role)
				var out strings.Builder
				cmd := exec.Command(s.bin, "talk", c.role, fmt.Sprintf("question %d", i), "--wait", "--timeout", "20s")
				cmd.Env, cmd.Stdout, cmd.Stderr = s.environ(), &out, &out
				if err := cmd.Run(); err != nil {
					b.Fatalf("party talk: %v\n%s", err, out.String())
				}
				returned := time.Now()
				entries, err := mocklog.Read(trace)
				if err != nil || len(entries) == 0 {
					b.Fatalf("no trace: %v", err)
				}
				last := entries[len(entries)-1]
				if last.Mode != c.mode {
					b.Fatalf("last trace is %q, want %q", last.Mode, c.mode)
				}
				lat = append(lat, returned.Sub(last.Time))
			}
			report(b, "detect", lat)
		})
	}
}

// BenchmarkTalkWaitCPU measures the CPU one waiting party talk uses while
// the agent never finishes, as a share of one core: the difference between
// a talk that waits 11 s and one that waits 1 s, over the 10 s between, so
// the delivery before the wait is not counted (measured once, whatever
// b.N). The agents keep drawing
// their spinners all along.
func BenchmarkTalkWaitCPU(b *testing.B) {
	s := newBench(b, "on *\n  hang\n", "claude", "bot=mockagent")
	cpu := func(b *testing.B, role, timeout string) time.Duration {
		cmd := exec.Command(s.bin, "talk", role, "wait for me", "--wait", "--timeout", timeout)
		cmd.Env = s.environ()
		_ = cmd.Run() // times out by design
		ps := cmd.ProcessState
		if ps == nil || ps.ExitCode() != 4 {
			b.Fatalf("talk did not time out: %v", ps)
		}
		return ps.UserTime() + ps.SystemTime()
	}
	for _, role := range []string{"claude", "bot"} {
		b.Run(role, func(b *testing.B) {
			short, long := cpu(b, role, "1s"), cpu(b, role, "11s")
			b.ReportMetric(float64((long-short).Microseconds())/10e6*100, "wait-cpu-%-of-core")
			b.ReportMetric(float64(short.Microseconds())/1000, "send-and-1s-cpu-ms")
		})
	}
}

// BenchmarkTalkMarkerFlood measures what a marker wait costs an agent
// that floods its pane with 50 MB before it answers: how long the generic
// mock takes to print the flood (from its own trace) with a talk --wait
// waiting on it beside a plain send (nobody waiting), and the CPU of the
// waiting talk. Sends and talks alternate, b.N each.
func BenchmarkTalkMarkerFlood(b *testing.B) {
	s := newBench(b, "on *\n  flood 50MB\n  say done\n  marker\n", "bot=mockagent")
	trace := s.env["PARTY_MOCK_TRACE"]
	flood := func(b *testing.B) time.Duration {
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			entries, _ := mocklog.Read(trace)
			var start time.Time
			for _, e := range entries {
				switch e.Mode {
				case "flood":
					start = e.Time
				case "flooded":
					return e.Time.Sub(start)
				}
			}
		}
		b.Fatal("the flood never ended")
		return 0
	}
	var sent, waited, cpu []time.Duration
	for i := 0; i < b.N; i++ {
		s.idle(b, "bot")
		_ = os.Remove(trace)
		s.party(b, "send", "bot", fmt.Sprintf("flood %d", i))
		sent = append(sent, flood(b))
		s.idle(b, "bot")
		_ = os.Remove(trace)
		cmd := exec.Command(s.bin, "talk", "bot", fmt.Sprintf("flood and wait %d", i), "--wait", "--timeout", "2m")
		cmd.Env = s.environ()
		_ = cmd.Run() // ANSWER_CUT: the answer starts 50 MB up
		if ps := cmd.ProcessState; ps == nil || ps.ExitCode() != 1 {
			b.Fatalf("talk: %v", cmd.ProcessState)
		}
		waited = append(waited, flood(b))
		cpu = append(cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	}
	report(b, "flood-sent", sent)
	report(b, "flood-waited", waited)
	report(b, "talk-cpu", cpu)
}

// BenchmarkRelayHop measures one relay hop: from the planner mock printing
// its plan block to the executor mock taking the forwarded plan (the
// delivery's settle time included).
func BenchmarkRelayHop(b *testing.B) {
	dir := b.TempDir()
	planner := filepath.Join(dir, "planner.script")
	executor := filepath.Join(dir, "executor.script")
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write(planner, "on /TASK (\\S+) RESULT/\n  say [[POLI:MSG {\"to\":\"USER\",\"type\":\"report\",\"id\":\"$1-report\"}]]\\nok\\n[[/POLI:MSG]]\n"+
		"on /TASK (\\S+):/\n  say [[POLI:MSG {\"to\":\"EXECUTER\",\"type\":\"plan\",\"id\":\"$1-plan\"}]]\\nplan\\n[[/POLI:MSG]]\non *\n  say ready\n")
	write(executor, "on /TASK (\\S+) PLAN/\n  say [[POLI:MSG {\"to\":\"PLANNER\",\"type\":\"result\",\"id\":\"$1-result\"}]]\\ndone\\n[[/POLI:MSG]]\non *\n  say ready\n")
	s := newBench(b, "on *\n  say ok\n", "planner=claude --mock-script "+planner, "executor=codex --mock-script "+executor)
	trace, log := s.env["PARTY_MOCK_TRACE"], s.env["PARTY_MOCK_LOG"]
	var lat []time.Duration
	for i := 0; i < b.N; i++ {
		var out strings.Builder
		cmd := exec.Command(s.bin, "relay", fmt.Sprintf("task %d", i), "--plan-timeout", "20s", "--exec-timeout", "20s")
		cmd.Env, cmd.Stdout, cmd.Stderr = s.environ(), &out, &out
		if err := cmd.Run(); err != nil {
			b.Fatalf("party relay: %v\n%s", err, out.String())
		}
		traces, _ := mocklog.Read(trace)
		subs, _ := mocklog.Read(log)
		// Each round the planner prints two blocks, the plan and then the
		// report: the plan is the one before its last.
		var printed, taken time.Time
		var blocks []time.Time
		for _, t := range traces {
			if t.Agent == "claude" && t.Mode == "block" {
				blocks = append(blocks, t.Time)
			}
		}
		if len(blocks) >= 2 {
			printed = blocks[len(blocks)-2]
		}
		for j := len(subs) - 1; j >= 0; j-- {
			if subs[j].Agent == "codex" && strings.Contains(subs[j].Text, "PLAN") {
				taken = subs[j].Time
				break
			}
		}
		if printed.IsZero() || taken.IsZero() || taken.Before(printed) {
			b.Fatalf("no hop found (printed %v, taken %v)", printed, taken)
		}
		lat = append(lat, taken.Sub(printed))
	}
	report(b, "hop", lat)
}

// BenchmarkReviewRound measures the review coordinator's two hops: from
// the start of "party review request" to the pointer line in the
// reviewer's log (dispatch: diff, prompt, delivery), and from the
// findings file landing to the result line in the implementer's log
// (deliver: noticing the file, schema check, message, delivery).
func BenchmarkReviewRound(b *testing.B) {
	repo := b.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@b", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@b")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("commit", "-q", "--allow-empty", "-m", "init")
	if err := os.WriteFile(filepath.Join(repo, "cache.go"), []byte("package cache\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	s := newBenchWith(b, "on *\n  say ok\n", []string{"--review", "--cwd", repo}, "claude", "codex")
	// One review a round; the loop allows 100 at the most.
	if b.N > 99 {
		b.Fatalf("BenchmarkReviewRound runs at most 99 rounds (review.maxIterations allows 100), asked for %d: -benchtime 50x", b.N)
	}
	s.party(b, "config", "set", "--global", "review.maxIterations", "100")
	s.party(b, "coordinator", "stop")
	s.party(b, "coordinator", "start")
	dir := strings.TrimSpace(s.party(b, "review", "status", "--json"))
	var st struct {
		Coordinator struct{ Running bool } `json:"coordinator"`
	}
	if err := json.Unmarshal([]byte(dir), &st); err != nil || !st.Coordinator.Running {
		b.Fatalf("coordinator not running: %v\n%s", err, dir)
	}
	reviews := filepath.Join(s.env["XDG_STATE_HOME"], "party", "sessions")
	var dispatch, deliver []time.Duration
	for i := 0; i < b.N; i++ {
		s.party(b, "evidence", "add", "critic")
		n := s.entries(b)
		start := time.Now()
		// The command returns once the coordinator took the signal, which
		// is after the dispatch: the mock's own time of the entry counts.
		s.party(b, "review", "request")
		seen := s.entryTime(b, n)
		dispatch = append(dispatch, seen.Sub(start))
		s.idle(b, "codex")

		matches, _ := filepath.Glob(filepath.Join(reviews, "bench-*", "review", "reviews", strconv.Itoa(i+1)))
		if len(matches) != 1 {
			b.Fatalf("review %d: no directory under %s", i+1, reviews)
		}
		tmp := filepath.Join(matches[0], "findings.tmp")
		if err := os.WriteFile(tmp, []byte(`{"findings":[],"summary":"fine","stats":{}}`), 0o644); err != nil {
			b.Fatal(err)
		}
		n = s.entries(b)
		start = time.Now()
		if err := os.Rename(tmp, filepath.Join(matches[0], "findings.json")); err != nil {
			b.Fatal(err)
		}
		seen = s.entryTime(b, n)
		deliver = append(deliver, seen.Sub(start))
		s.idle(b, "claude")
		s.party(b, "review", "re-review", "next round")
	}
	report(b, "dispatch", dispatch)
	report(b, "deliver", deliver)
}
