package scenarios

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkDashIdle measures party dash (started by party start
// --dashboard) over a session of 10 idle mock agents and the supervisor,
// over 30 s with no traffic: its share of a core, its resident memory, and
// the tmux server's share meanwhile (its control client gives the server
// work too). Measured once, whatever b.N.
func BenchmarkDashIdle(b *testing.B) {
	var panes []string
	for i := 0; i < 10; i++ {
		panes = append(panes, fmt.Sprintf("a%d=claude", i))
	}
	s := newBenchWith(b, "on *\n  say ok\n", []string{"--supervise", "--dashboard"}, panes...)
	out, err := s.tc.Run(context.Background(), "display-message", "-p", "-t", "=bench:party-dash", "#{pane_id} #{pane_pid} #{pid}")
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(out))
	dashPID, _ := strconv.Atoi(f[1])
	serverPID, _ := strconv.Atoi(f[2])
	for _, p := range panes {
		role, _, _ := strings.Cut(p, "=")
		s.waitScreen(b, s.pane[role], "❯\u00a0")
	}
	s.waitScreen(b, f[0], "10 agents · 0 busy · 0 need you")
	time.Sleep(3 * time.Second) // settled
	b.ResetTimer()
	d0, _ := procTicks(b, dashPID)
	s0, _ := procTicks(b, serverPID)
	start := time.Now()
	time.Sleep(30 * time.Second)
	d1, rss := procTicks(b, dashPID)
	s1, _ := procTicks(b, serverPID)
	elapsed := time.Since(start)
	share := func(t int64) float64 { return float64(time.Duration(t)*10*time.Millisecond) / float64(elapsed) * 100 }
	b.ReportMetric(share(d1-d0), "dash-cpu-%-of-core")
	b.ReportMetric(float64(rss)/(1<<20), "dash-rss-MB")
	b.ReportMetric(share(s1-s0), "tmux-cpu-%-of-core")
}

// procTicks is the CPU time of process pid in clock ticks (1/100 s on
// Linux) and its resident memory in bytes, from /proc.
func procTicks(b *testing.B, pid int) (int64, int64) {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	rss, _ := strconv.ParseInt(f[21], 10, 64)
	return ut + st, rss * int64(os.Getpagesize())
}
