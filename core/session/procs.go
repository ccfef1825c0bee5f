package session

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/partyhq/party/core/clock"
)

// A proc is a process party started in a pane, or one of its
// descendants, known by its PID and its start time (so that a PID the
// kernel gave to another process since is left alone).
type proc struct {
	pid   int
	start string
}

// StopGrace is how long stop waits for a session's processes to exit on
// the hang-up tmux sends them before it sends SIGTERM, and then SIGKILL.
const StopGrace = 2 * time.Second

// procTree returns the processes of roots and all their descendants, read
// from /proc (where there is none: the roots alone).
func procTree(roots []int) []proc {
	parent := map[int]int{}
	started := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, start, ok := readStat(n)
		if ok {
			parent[n], started[n] = ppid, start
		}
	}
	var tree []proc
	// party stop run from a pane of the session (an agent's tool) is not
	// one of the processes it ends.
	seen := map[int]bool{os.Getpid(): true}
	for _, r := range roots {
		if r > 0 && !seen[r] {
			seen[r] = true
			tree = append(tree, proc{pid: r, start: started[r]})
		}
	}
	for i := 0; i < len(tree); i++ {
		for c, pp := range parent {
			if pp == tree[i].pid && !seen[c] {
				seen[c] = true
				tree = append(tree, proc{pid: c, start: started[c]})
			}
		}
	}
	return tree
}

// readStat reads the parent and the start time of pid from /proc; ok is
// false when pid is gone or a zombie.
func readStat(pid int) (ppid int, start string, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, "", false
	}
	// pid (comm) state ppid … starttime (field 22); comm may hold spaces
	// and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, "", false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return 0, "", false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[19], err == nil
}

// alive reports whether p still runs (not a zombie, and the same process:
// its start time unchanged where /proc tells it).
func (p proc) alive() bool {
	if _, start, ok := readStat(p.pid); ok {
		return p.start == "" || start == p.start
	}
	if _, err := os.Stat("/proc"); err == nil {
		return false // gone, or a zombie
	}
	err := syscall.Kill(p.pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// living returns the procs of ps that still run.
func living(ps []proc) []proc {
	var out []proc
	for _, p := range ps {
		if p.alive() {
			out = append(out, p)
		}
	}
	return out
}

// endProcs waits up to grace for ps to exit, then sends SIGTERM to those
// left and waits again, then SIGKILL; it returns the procs still running
// after all that (none, unless they belong to another user).
func endProcs(ctx context.Context, clk clock.Clock, ps []proc, grace time.Duration) []proc {
	for _, sig := range []syscall.Signal{0, syscall.SIGTERM, syscall.SIGKILL} {
		for _, p := range living(ps) {
			if sig != 0 {
				_ = syscall.Kill(p.pid, sig)
			}
		}
		for waited := time.Duration(0); ; waited += 50 * time.Millisecond {
			if ps = living(ps); len(ps) == 0 {
				return nil
			}
			if waited >= grace || clk.Sleep(ctx, 50*time.Millisecond) != nil {
				break
			}
		}
	}
	return living(ps)
}

// strays are the processes a team's dead server left running: its agents
// (their environment names the team's state dir and carries a runtime
// token) and their descendants. The real gemini outlives a killed tmux
// server (measured: 6 of 8 kills, its two node processes reparented to
// init), and a team brought back must not run beside it.
func strays(stateDir string) []proc {
	dirVar := []byte("\x00PARTY_STATE_DIR=" + stateDir + "\x00")
	var roots []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		env = append(append([]byte{0}, env...), 0) // each variable between NULs
		if bytes.Contains(env, dirVar) && bytes.Contains(env, []byte("\x00PARTY_RUNTIME_TOKEN=")) {
			roots = append(roots, n)
		}
	}
	if len(roots) == 0 {
		return nil
	}
	return procTree(roots)
}
