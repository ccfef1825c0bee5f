package scenarios

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/partyhq/party/mockagents/mocklog"
)

// waitTriggers waits until no trigger is open.
func (s *benchServer) waitTriggers(b *testing.B) {
	deadline := time.Now().Add(10 * waitLimit)
	for time.Now().Before(deadline) {
		var open []json.RawMessage
		for _, st := range []string{"queued", "deferred", "triggering", "delivered", "retrying", "acked"} {
			var ts []json.RawMessage
			if err := json.Unmarshal([]byte(s.party(b, "trigger", "list", "--status", st, "--json")), &ts); err != nil {
				b.Fatal(err)
			}
			open = append(open, ts...)
		}
		if len(open) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatal("triggers still open")
}

// BenchmarkTrigger measures a trigger to an idle agent from party
// trigger's start to the envelope in the mock agent's log (the daemon
// picks it up, looks at the pane, delivers), beside a party send of the
// same text to the same agent.
func BenchmarkTrigger(b *testing.B) {
	s := newBenchWith(b, "on *\n  say ok\n", []string{"--supervise"}, "claude")
	s.party(b, "supervise", "status")
	var trig, send []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, how := range []string{"trigger", "send"} {
			b.StopTimer()
			s.idle(b, "claude")
			n := s.entries(b)
			args := []string{"send", "claude", "Review the diff in /tmp/x.patch and report back;"}
			if how == "trigger" {
				args = []string{"trigger", "claude", "Review the diff in /tmp/x.patch and report back;", "--id", "b" + strconv.Itoa(i), "--thread", "b" + strconv.Itoa(i)}
			}
			cmd := exec.Command(s.bin, args...)
			cmd.Env = s.environ()
			b.StartTimer()
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("party %s: %v\n%s", how, err, out)
			}
			d := s.waitEntry(b, n).Sub(start)
			b.StopTimer()
			if how == "trigger" {
				trig = append(trig, d)
				s.waitTriggers(b)
			} else {
				send = append(send, d)
			}
			b.StartTimer()
		}
	}
	report(b, "trigger", trig)
	report(b, "send", send)
}

// BenchmarkSupervisorIdle measures the supervisor of a session of 10 idle
// mock agents over 30 s with no traffic: its share of a core and its
// resident memory (from /proc). Measured once, whatever b.N.
func BenchmarkSupervisorIdle(b *testing.B) {
	var panes []string
	for i := 0; i < 10; i++ {
		panes = append(panes, fmt.Sprintf("a%d=claude", i))
	}
	s := newBenchWith(b, "on *\n  say ok\n", []string{"--supervise"}, panes...)
	var proc struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(s.party(b, "supervise", "status", "--json")), &proc); err != nil || proc.PID == 0 {
		b.Fatalf("supervisor pid: %v", err)
	}
	time.Sleep(3 * time.Second) // registered, settled
	ticks := func() (int64, int64) {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(proc.PID), "stat"))
		if err != nil {
			b.Fatal(err)
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		rss, _ := strconv.ParseInt(f[21], 10, 64)
		return ut + st, rss * int64(os.Getpagesize())
	}
	before, _ := ticks()
	start := time.Now()
	time.Sleep(30 * time.Second)
	after, rss := ticks()
	// Clock ticks are 1/100 s on Linux.
	cpu := time.Duration(after-before) * 10 * time.Millisecond
	b.ReportMetric(float64(cpu)/float64(time.Since(start))*100, "cpu-%-of-core")
	b.ReportMetric(float64(rss)/(1<<20), "rss-MB")
}

// BenchmarkWaitersIdle measures the clients that wait on the supervisor
// while nothing happens: party trigger --wait on a trigger whose agent
// hangs in its turn, and party supervise events --follow, each over 30 s:
// their share of a core (from /proc). They wait on the supervisor's watch
// endpoint (a long poll), so they should cost next to nothing. Measured
// once, whatever b.N.
func BenchmarkWaitersIdle(b *testing.B) {
	s := newBenchWith(b, "on *\n  hang\n", []string{"--supervise"}, "claude")
	start := func(args ...string) *exec.Cmd {
		cmd := exec.Command(s.bin, args...)
		cmd.Env = s.environ()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	wait := start("trigger", "claude", "work on it", "--id", "w1", "--wait", "--timeout", "10m")
	follow := start("supervise", "events", "--follow")
	s.waitEntry(b, 0) // the trigger reached the agent, which hangs in its turn
	time.Sleep(3 * time.Second)
	b.ResetTimer()
	w0, _ := procTicks(b, wait.Process.Pid)
	f0, _ := procTicks(b, follow.Process.Pid)
	begin := time.Now()
	time.Sleep(30 * time.Second)
	w1, _ := procTicks(b, wait.Process.Pid)
	f1, _ := procTicks(b, follow.Process.Pid)
	elapsed := time.Since(begin)
	share := func(t int64) float64 { return float64(time.Duration(t)*10*time.Millisecond) / float64(elapsed) * 100 }
	b.ReportMetric(share(w1-w0), "trigger-wait-cpu-%-of-core")
	b.ReportMetric(share(f1-f0), "events-follow-cpu-%-of-core")
}

// BenchmarkTriggerFlood queues 200 triggers at once over 4 agents and
// measures the time until all are completed; each must reach its agent
// exactly once. Measured once, whatever b.N.
func BenchmarkTriggerFlood(b *testing.B) {
	agents := []string{"a0=claude", "a1=claude", "a2=claude", "a3=claude"}
	s := newBenchWith(b, "on *\n  say ok\n", []string{"--supervise"}, agents...)
	s.party(b, "config", "set", "--global", "supervise.ratePerRuntime", "10000")
	s.party(b, "config", "set", "--global", "supervise.ratePerThread", "10000")
	s.party(b, "supervise", "stop")
	s.party(b, "supervise", "start")
	{
		const i = 0
		n := s.entries(b)
		start := time.Now()
		for k := 0; k < 200; k++ {
			s.party(b, "trigger", fmt.Sprintf("a%d", k%4), "flood "+strconv.Itoa(k), "--id", fmt.Sprintf("f%d-%d", i, k), "--thread", fmt.Sprintf("f%d-%d", i, k))
		}
		queued := time.Since(start)
		s.waitTriggers(b)
		b.ReportMetric(queued.Seconds(), "queue-200-s")
		b.ReportMetric(time.Since(start).Seconds(), "all-done-s")
		entries, err := mocklog.Read(s.log)
		if err != nil {
			b.Fatal(err)
		}
		seen := map[string]int{}
		for _, e := range entries[n:] {
			seen[e.Text]++
		}
		if len(entries)-n != 200 {
			b.Fatalf("the agents got %d submissions for 200 triggers", len(entries)-n)
		}
		for text, c := range seen {
			if c != 1 {
				b.Fatalf("%q reached an agent %d times", text, c)
			}
		}
	}
}
