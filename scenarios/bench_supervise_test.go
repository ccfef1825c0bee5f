package scenarios

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/mockagents/mocklog"

	_ "modernc.org/sqlite" // the store's driver, to seed its history
)

// waitTriggers waits until no trigger is open.
func (s *benchServer) waitTriggers(b *testing.B) {
	deadline := time.Now().Add(10 * waitLimit)
	for time.Now().Before(deadline) {
		var open []json.RawMessage
		for _, st := range []string{"queued", "deferred", "triggering", "delivered", "retrying", "acked"} {
			var ts []json.RawMessage
			if err := json.Unmarshal([]byte(s.party(b, "trigger", "list", "--status", st, "--limit", "1", "--json")), &ts); err != nil {
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

// BenchmarkSupervisorIdle measures the supervisor of a session of 10, 60
// and 200 idle mock agents (a window each) over 30 s with no traffic: its
// share of a core, its CPU-seconds a minute (with the tmux commands it
// ran) and its resident memory (from /proc). Measured once, whatever b.N.
func BenchmarkSupervisorIdle(b *testing.B) {
	for _, n := range []int{10, 60, 200} {
		b.Run(fmt.Sprintf("runtimes=%d", n), func(b *testing.B) {
			s := newBenchWith(b, "on *\n  say ok\n", []string{"--supervise", "--layout", "windows"}, fleet(n)...)
			pid := s.supervisorPID(b)
			s.waitReady(b, n)
			time.Sleep(3 * time.Second) // settled
			before, _ := cpuTime(b, pid)
			start := time.Now()
			time.Sleep(30 * time.Second)
			after, rss := cpuTime(b, pid)
			cpu := after - before
			b.ReportMetric(float64(cpu)/float64(time.Since(start))*100, "cpu-%-of-core")
			b.ReportMetric(cpu.Seconds()*float64(time.Minute)/float64(time.Since(start)), "cpu-s-per-min")
			b.ReportMetric(float64(rss)/(1<<20), "rss-MB")
		})
	}
}

// BenchmarkSupervisorWaiting measures the supervisor of 10 mock agents
// that each work on a long turn of a trigger (acked, its answer awaited)
// over 30 s: its CPU-seconds a minute with the tmux commands it ran, next
// to BenchmarkSupervisorIdle's 10 idle ones: what a waiting turn costs
// (the 0.26 CPU-s a minute each, when a turn asked a tmux process
// about its pane every second). Measured once, whatever b.N.
func BenchmarkSupervisorWaiting(b *testing.B) {
	const n = 10
	s := newBenchWith(b, "on /long/\n  think 10m\n  say done\n", []string{"--supervise", "--layout", "windows"}, fleet(n)...)
	pid := s.supervisorPID(b)
	s.waitReady(b, n)
	for i := range n {
		s.party(b, "trigger", fmt.Sprintf("a%d", i), "a long one", "--id", fmt.Sprintf("w%d", i))
	}
	for deadline := time.Now().Add(10 * waitLimit); ; time.Sleep(200 * time.Millisecond) {
		if strings.Count(s.party(b, "trigger", "list", "--json"), `"status": "acked"`) == n {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("fewer than %d triggers acked", n)
		}
	}
	time.Sleep(3 * time.Second) // settled
	before, _ := cpuTime(b, pid)
	start := time.Now()
	time.Sleep(30 * time.Second)
	after, _ := cpuTime(b, pid)
	perMin := (after - before).Seconds() * float64(time.Minute) / float64(time.Since(start))
	b.ReportMetric(perMin, "cpu-s-per-min")
	b.ReportMetric(perMin/n, "cpu-s-per-min-per-turn")
}

// fleet is n agent panes for party start: a0=claude … a<n-1>=claude.
func fleet(n int) []string {
	var panes []string
	for i := range n {
		panes = append(panes, fmt.Sprintf("a%d=claude", i))
	}
	return panes
}

// supervisorPID is the pid of the session's supervisor.
func (s *benchServer) supervisorPID(b *testing.B) int {
	var proc struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(s.party(b, "supervise", "status", "--json")), &proc); err != nil || proc.PID == 0 {
		b.Fatalf("supervisor pid: %v", err)
	}
	return proc.PID
}

// waitReady waits until the supervisor has n runtimes ready.
func (s *benchServer) waitReady(b *testing.B, n int) {
	for deadline := time.Now().Add(10 * waitLimit); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var rts []struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal([]byte(s.party(b, "runtimes", "--json")), &rts); err != nil {
			b.Fatal(err)
		}
		ready := 0
		for _, rt := range rts {
			if rt.Status == "ready" {
				ready++
			}
		}
		if ready == n {
			return
		}
	}
	b.Fatalf("fewer than %d runtimes ready", n)
}

// treeTicks are the clock ticks a process used with those of the
// children it waited for (the tmux commands it ran), and its resident
// memory.
func treeTicks(b *testing.B, pid int) (int64, int64) {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	var t int64
	for _, i := range []int{11, 12, 13, 14} { // utime, stime, cutime, cstime
		n, _ := strconv.ParseInt(f[i], 10, 64)
		t += n
	}
	rss, _ := strconv.ParseInt(f[21], 10, 64)
	return t, rss * int64(os.Getpagesize())
}

// cpuTime is the CPU time process pid used, to the nanosecond (its
// process CPU clock: all its threads'), with that of the children it
// waited for (the tmux commands it ran, in clock ticks), and its resident
// memory. At a few milliseconds a minute, ticks alone measure nothing.
func cpuTime(b *testing.B, pid int) (time.Duration, int64) {
	children, rss := childTicks(b, pid)
	var ts unix.Timespec
	if err := unix.ClockGettime(int32((^pid)<<3|2), &ts); err != nil { // MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)
		b.Fatalf("the CPU clock of %d: %v", pid, err)
	}
	return time.Duration(ts.Nano()) + ticksTime(children), rss
}

// childTicks are the clock ticks of the children process pid waited for,
// and its resident memory.
func childTicks(b *testing.B, pid int) (int64, int64) {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	var t int64
	for _, i := range []int{13, 14} { // cutime, cstime
		n, _ := strconv.ParseInt(f[i], 10, 64)
		t += n
	}
	rss, _ := strconv.ParseInt(f[21], 10, 64)
	return t, rss * int64(os.Getpagesize())
}

// ticksTime is n clock ticks (1/100 s on Linux).
func ticksTime(n int64) time.Duration { return time.Duration(n) * 10 * time.Millisecond }

// BenchmarkTriggerHistory measures the supervisor with 0, 5,000 and
// 50,000 completed triggers in its store: the throughput of 100 triggers
// queued at once to 10 agents (from the first queued to the last
// completed; the median of three rounds), the supervisor's CPU per trigger (with the tmux commands it
// ran) beside a party send's (with its own), and the time of party
// trigger list's first page. Measured once, whatever b.N.
func BenchmarkTriggerHistory(b *testing.B) {
	const agents, triggers, rounds = 10, 100, 3
	for _, history := range []int{0, 5000, 50000} {
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			s := newBenchWith(b, "on *\n  say ok\n", []string{"--supervise"}, fleet(agents)...)
			s.party(b, "config", "set", "--global", "supervise.ratePerRuntime", "10000")
			s.party(b, "config", "set", "--global", "supervise.ratePerThread", "10000")
			s.party(b, "supervise", "stop")
			seedHistory(b, s, history)
			s.party(b, "supervise", "start")
			pid := s.supervisorPID(b)
			s.waitReady(b, agents)
			// Rounds of triggers, the rate their median: one round's rate
			// moves by a tenth with what else the machine does.
			var rates []float64
			c0, _ := treeTicks(b, pid)
			for round := range rounds {
				n := s.entries(b)
				start := time.Now()
				for k := range triggers {
					id := fmt.Sprintf("r%dt%d", round, k)
					s.party(b, "trigger", fmt.Sprintf("a%d", k%agents), "history "+id, "--id", id, "--thread", id)
				}
				s.waitTriggers(b)
				rates = append(rates, triggers/time.Since(start).Seconds())
				if got := s.entries(b) - n; got != triggers {
					b.Fatalf("the agents got %d submissions for %d triggers", got, triggers)
				}
			}
			c1, _ := treeTicks(b, pid)
			slices.Sort(rates)
			var send time.Duration
			for k := range 20 {
				s.idle(b, fmt.Sprintf("a%d", k%agents))
				cmd := exec.Command(s.bin, "send", fmt.Sprintf("a%d", k%agents), "send "+strconv.Itoa(k))
				cmd.Env = s.environ()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("party send: %v\n%s", err, out)
				}
				send += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime() // with the tmux commands it waited for
			}
			list := time.Now()
			s.party(b, "trigger", "list")
			b.ReportMetric(float64(time.Since(list).Milliseconds()), "list-ms")
			b.ReportMetric(rates[len(rates)/2], "triggers-per-s")
			b.ReportMetric(float64(ticksTime(c1-c0).Milliseconds())/(rounds*triggers), "supervisor-cpu-ms-per-trigger")
			b.ReportMetric(float64(send.Milliseconds())/20, "send-cpu-ms")
		})
	}
}

// seedHistory writes n completed triggers of an hour ago into the
// session's supervisor store (its daemon stopped), in one transaction as
// the store would keep them.
func seedHistory(b *testing.B, s *benchServer, n int) {
	if n == 0 {
		return
	}
	paths, err := filepath.Glob(filepath.Join(s.env["XDG_STATE_HOME"], "party", "sessions", "bench-*", "supervise", supervise.StoreFile))
	if err != nil || len(paths) != 1 {
		b.Fatalf("the supervisor's store: %v %v", paths, err)
	}
	db, err := sql.Open("sqlite", paths[0])
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	at := time.Now().Add(-time.Hour).UTC()
	stamp := at.Format("2006-01-02T15:04:05.000000000Z07:00")
	for i := range n {
		t := supervise.Trigger{ID: fmt.Sprintf("h%d", i), Role: fmt.Sprintf("a%d", i%10), Thread: fmt.Sprintf("h%d", i),
			Text: "history", Status: supervise.Completed, Created: at, Updated: at, DeliveredAt: at, CompletedAt: at}
		body, err := json.Marshal(t)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Exec(`INSERT INTO triggers (id, role, thread, status, created, updated, delivered_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			t.ID, t.Role, t.Thread, string(t.Status), stamp, stamp, stamp, string(body)); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
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
