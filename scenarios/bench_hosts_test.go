package scenarios

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/partyhq/party/core/dash"
	"github.com/partyhq/party/mockagents/mocklog"
)

// benchHosts are the hosts of BenchmarkHosts, each a real sshd of its own.
var benchHosts = []string{"h1", "h2", "h3"}

// BenchmarkHosts measures party across hosts, over three real sshds on
// loopback (startSSHD), each a host of its own: its own HOME, state, tmux
// server and a team of one mock claude, started from here with party
// start --host. Both ends run the same party binary; the machine's cores
// are shared by this host, the sshds and the hosts' tmux servers and
// agents, so the figures are an upper bound of party's own overhead with
// no network latency in them.
//
//   - talk-local: party talk claude --wait to this host's mock agent, from
//     the command's start to its answer on stdout;
//   - talk-remote: the same to claude@h1: one ssh connection made for the
//     command and used for its life (party talk --wait run there, the
//     text on its stdin), as party makes it;
//   - talk-remote-mux: the same through an SSH destination whose
//     ~/.ssh/config entry has ControlMaster (ControlPersist 60): the
//     connection reused across commands, as a user's own ssh config can
//     make it (party's ssh reads it);
//   - dash-3-hosts: party dash --once --json with the three hosts
//     configured (each looked at at once: party dash --once --json run
//     there), next to dash-local, the same with no host configured.
//
// Each talk is counted from outside party: its text must be in the mock
// log of the host it went to, once, and its answer "ok" on stdout; each
// dash must show every host online with its claude. The thresholds:
// talk-remote's p50 within 2 s of talk-local's, dash-3-hosts' p50 under
// 5 s (ssh's ConnectTimeout).
func BenchmarkHosts(b *testing.B) {
	s := newBenchWith(b, "on *\n  say ok\n", nil, "claude")
	script := s.env["PARTY_MOCK_SCRIPT"]
	home := s.env["HOME"]
	// The hosts run the party measured here, first on their PATH.
	path := filepath.Dir(s.bin) + string(os.PathListSeparator) + os.Getenv("PATH")
	logs := map[string]string{"claude": s.log}
	var h1 *sshdState
	for _, name := range benchHosts {
		r := startSSHD(sshdHost{Alias: name, Work: b.TempDir(), Home: home, Path: path, Fatalf: b.Fatalf, Defer: b.Cleanup})
		if h1 == nil {
			h1 = r
		}
		// The mock there answers as the one here (agents.claude.command
		// in the host's own configuration).
		cfg := exec.Command(s.bin, "config", "set", "--global", "agents.claude.command", "claude --mock-script "+script)
		cfg.Env = append(s.environ(), "HOME="+filepath.Join(r.remote, "home"), "XDG_CONFIG_HOME="+filepath.Join(r.remote, "config"))
		if out, err := cfg.CombinedOutput(); err != nil {
			b.Fatalf("config set there: %v\n%s", err, out)
		}
		s.party(b, "config", "set", "--global", "hosts."+name+".ssh", name)
		s.party(b, "start", "--host", name, "--session", "rb", "--pane", "claude", "--cwd", filepath.Join(r.remote, "work"))
		logs["claude@"+name] = filepath.Join(r.remote, "mock.log")
	}
	// h1 again, as a destination whose connection ssh keeps (ControlMaster).
	cm, err := os.MkdirTemp("", "pcm")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(cm) })
	sshDir := filepath.Join(filepath.Dir(h1.remote), "sshd")
	mux := fmt.Sprintf("Host h1mux\n  HostName 127.0.0.1\n  Port %d\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n  BatchMode yes\n  LogLevel ERROR\n  ControlMaster auto\n  ControlPath %s/%%C\n  ControlPersist 60\n",
		h1.port, filepath.Join(sshDir, "user_key"), filepath.Join(sshDir, "known_hosts"), cm)
	f, err := os.OpenFile(filepath.Join(home, ".ssh", "config"), os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.WriteString(mux); err != nil {
		b.Fatal(err)
	}
	f.Close()
	b.Cleanup(func() {
		stop := exec.Command("ssh", "-O", "exit", "h1mux") // the scenarios' ssh: -F $HOME/.ssh/config
		stop.Env = s.environ()
		_ = stop.Run()
	})
	logs["claude@h1mux"] = logs["claude@h1"]

	// dash runs party dash --once --json (with no host configured: local)
	// and checks every host is online with its claude.
	dashOnce := func(local bool) (time.Duration, error) {
		cmd := exec.Command(s.bin, "dash", "--once", "--json")
		cmd.Env = s.environ()
		if local {
			cmd.Env = append(cmd.Env, "XDG_CONFIG_HOME="+b.TempDir())
		}
		start := time.Now()
		out, err := cmd.Output()
		d := time.Since(start)
		if err != nil {
			return d, fmt.Errorf("party dash --once: %v\n%s", err, out)
		}
		var m dash.Model
		if err := json.Unmarshal(out, &m); err != nil {
			return d, err
		}
		if local {
			if len(m.Hosts) != 0 || len(m.Sessions) != 1 {
				return d, fmt.Errorf("dash here only: %d hosts, %d sessions", len(m.Hosts), len(m.Sessions))
			}
			return d, nil
		}
		if len(m.Hosts) != len(benchHosts) {
			return d, fmt.Errorf("dash: %d hosts, want %d", len(m.Hosts), len(benchHosts))
		}
		for _, h := range m.Hosts {
			if !h.Online || len(h.Sessions) != 1 || len(h.Sessions[0].Agents) != 1 || h.Sessions[0].Agents[0].State != dash.Idle {
				return d, fmt.Errorf("dash: host %s not online with an idle claude: %+v", h.Name, h)
			}
		}
		return d, nil
	}
	deadline := time.Now().Add(waitLimit)
	for {
		_, err := dashOnce(false)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// talk talks to role --wait, and checks the answer and the mock log.
	talk := func(role string, i int) time.Duration {
		text := fmt.Sprintf("bench question %d for %s", i, role)
		cmd := exec.Command(s.bin, "talk", role, text, "--wait")
		cmd.Env = s.environ()
		start := time.Now()
		out, err := cmd.Output()
		d := time.Since(start)
		if err != nil || strings.TrimSpace(string(out)) != "ok" {
			b.Fatalf("party talk %s: %v: %q", role, err, out)
		}
		entries, err := mocklog.Read(logs[role])
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, e := range entries {
			if strings.Contains(e.Text, text) {
				n++
			}
		}
		if n != 1 {
			b.Fatalf("%q is %d times in %s's mock log, want 1", text, n, role)
		}
		return d
	}
	talk("claude@h1mux", -1) // the master connection, made once

	var local, remote, muxed, dash3, dashHere []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		local = append(local, talk("claude", i))
		remote = append(remote, talk("claude@h1", i))
		muxed = append(muxed, talk("claude@h1mux", i))
		for _, here := range []bool{false, true} {
			d, err := dashOnce(here)
			if err != nil {
				b.Fatal(err)
			}
			if here {
				dashHere = append(dashHere, d)
			} else {
				dash3 = append(dash3, d)
			}
		}
	}
	b.StopTimer()
	report(b, "talk-local", local)
	report(b, "talk-remote", remote)
	report(b, "talk-remote-mux", muxed)
	report(b, "dash-3-hosts", dash3)
	report(b, "dash-local", dashHere)
	b.ReportMetric(float64(len(benchHosts)), "hosts")
	if l, r := percentile(local, 0.5), percentile(remote, 0.5); r > l+2*time.Second {
		b.Errorf("talk --wait to another host: p50 %s, %s more than here (%s); want within 2s", r, r-l, l)
	}
	if d := percentile(dash3, 0.5); d > 5*time.Second {
		b.Errorf("party dash --once over %d hosts: p50 %s, want under 5s", len(benchHosts), d)
	}
}
