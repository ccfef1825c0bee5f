package scenarios

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/partyhq/party/mockagents/fakemodel"
	"github.com/partyhq/party/mockagents/realagent"
)

// realKey is the key of a scenario's *realState in testscript's Values.
type realKey struct{}

// realState is what a scenario's fakemodel and realagent commands
// started, torn down by setup's Defer once the tmux server is gone.
type realState struct {
	// token marks every process a real_* scenario starts
	// (realagent.TokenVar); empty for the other scenarios.
	token string
	// model is the fake model server, once fakemodel start ran.
	model *fakemodel.Server
}

// isRealScenario reports whether the scenario in workDir is a real_* one:
// the pinned real agents run there, so its processes are marked with a
// token and reaped at the end.
func isRealScenario(workDir string) bool {
	return strings.HasPrefix(filepath.Base(workDir), "script-real_")
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// teardown runs after the scenario's tmux server was killed: it kills
// every process still carrying the scenario's token (an agent that ignored
// the hang-up, Codex's app-server daemon), then stops the fake model.
func (r *realState) teardown(t testscript.T) {
	if r.token != "" {
		if pids, err := realagent.Reap(r.token); err != nil {
			t.Log("reap: ", err)
		} else if len(pids) > 0 {
			t.Log(fmt.Sprintf("reaped %d processes the scenario left running: %v", len(pids), pids))
		}
	}
	if r.model != nil {
		if err := r.model.Close(); err != nil {
			t.Log("fakemodel close: ", err)
		}
	}
}

func realOf(ts *testscript.TestScript) *realState {
	return ts.Value(realKey{}).(*realState)
}

// cmdFakeModel starts the fake model server in the test process, scripted
// by SCRIPTFILE (read again when it changes) and logging to
// $PARTY_MOCK_LOG, and sets $FAKEMODEL_URL.
func cmdFakeModel(ts *testscript.TestScript, neg bool, args []string) {
	if !neg && len(args) == 2 && args[0] == "usage" {
		fakeModelUsage(ts, args[1])
		return
	}
	if neg || len(args) < 1 || len(args) > 2 || args[0] != "start" {
		ts.Fatalf("usage: fakemodel start [SCRIPTFILE] | fakemodel usage AGENT")
	}
	r := realOf(ts)
	if r.model != nil {
		ts.Fatalf("fakemodel: already started at %s", r.model.URL())
	}
	// $FAKEMODEL_DUMP, when set, keeps every request body: a scenario
	// that checks what a request carried (a resumed session's earlier
	// turns) reads them there.
	opt := fakemodel.Options{LogPath: ts.Getenv("PARTY_MOCK_LOG"), DumpDir: ts.Getenv("FAKEMODEL_DUMP"),
		UsageLogPath: ts.Getenv("PARTY_MOCK_LOG") + ".usage"}
	if len(args) == 2 {
		opt.ScriptPath = ts.MkAbs(args[1])
	}
	srv, err := fakemodel.Start(opt)
	ts.Check(err)
	r.model = srv
	ts.Setenv("FAKEMODEL_URL", srv.URL())
}

// fakeModelUsage prints the usage the fake model returned to agent's
// conversation requests (side requests left out), summed, as its API
// counted it: "input=N output=N cache_read=N cache_write=N reasoning=N
// responses=N".
func fakeModelUsage(ts *testscript.TestScript, agent string) {
	entries, err := fakemodel.ReadUsage(ts.Getenv("PARTY_MOCK_LOG") + ".usage")
	ts.Check(err)
	n := 0
	for _, e := range entries {
		if e.Agent == agent && e.Mode != "side" {
			n++
		}
	}
	u := fakemodel.ConversationUsage(entries, agent)
	fmt.Fprintf(ts.Stdout(), "input=%d output=%d cache_read=%d cache_write=%d reasoning=%d responses=%d\n",
		u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Reasoning, n)
}

// cmdRealAgent seeds the named real agents into the scenario's HOME for
// $WORK (and each -trust DIR, which must exist) and $FAKEMODEL_URL, adds the environment they need, and puts the
// pinned agents' bin directory first on PATH, so `party start --pane
// claude` runs the real claude rather than the mock. With -remote it
// seeds them for the second host of `sshd start` instead (its HOME and
// work dir under $WORK/remote, made if need be; run it before sshd
// start, which hands the remote the PATH of that moment) and writes the
// environment they need, one VAR=VALUE a line, to $WORK/remote/agents.env
// for the remote party's command (`set -a && . FILE && party start …`).
func cmdRealAgent(ts *testscript.TestScript, neg bool, args []string) {
	var trust []string
	remote := false
	for len(args) > 0 && (args[0] == "-remote" || (len(args) >= 2 && args[0] == "-trust")) {
		if args[0] == "-remote" {
			remote, args = true, args[1:]
			continue
		}
		trust, args = append(trust, ts.MkAbs(args[1])), args[2:]
	}
	if neg || len(args) == 0 {
		ts.Fatalf("usage: realagent [-trust DIR]... [-remote] claude|codex|gemini...")
	}
	url := ts.Getenv("FAKEMODEL_URL")
	if url == "" {
		ts.Fatalf("realagent: no $FAKEMODEL_URL; run fakemodel start first")
	}
	bin, err := realagent.BinDir()
	if err != nil {
		ts.Fatalf("realagent: %v", err)
	}
	home, work := ts.Getenv("HOME"), ts.Getenv("WORK")
	if remote {
		root := filepath.Join(work, "remote")
		home, work = filepath.Join(root, "home"), filepath.Join(root, "work")
		for _, d := range []string{home, work} {
			ts.Check(os.MkdirAll(d, 0o700))
		}
	}
	var remoteEnv []string
	for _, kind := range args {
		if _, err := realagent.Bin(kind); err != nil {
			ts.Fatalf("realagent: %v", err)
		}
		env, err := realagent.Seed(realagent.SeedOptions{
			Kind: kind, Home: home, ModelURL: url, WorkDir: work, Trust: trust,
		})
		ts.Check(err)
		if remote {
			remoteEnv = append(remoteEnv, env...)
			continue
		}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			ts.Setenv(k, v)
		}
	}
	if remote {
		f, err := os.OpenFile(filepath.Join(ts.Getenv("WORK"), "remote", "agents.env"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		ts.Check(err)
		for _, kv := range remoteEnv {
			if strings.ContainsAny(kv, "'\"\\$`\n ") {
				ts.Fatalf("realagent -remote: %q cannot go into a sourced file as it is", kv)
			}
			_, err = fmt.Fprintln(f, kv)
			ts.Check(err)
		}
		ts.Check(f.Close())
	}
	path := ts.Getenv("PATH")
	if !strings.HasPrefix(path, bin+string(os.PathListSeparator)) {
		ts.Setenv("PATH", bin+string(os.PathListSeparator)+path)
	}
}

// cmdAgentProcs checks how many processes of the scenario run besides tmux
// and the test: "agentprocs N" waits up to a second for exactly N (a
// process killed a moment ago may not be reaped yet) and lists them when
// there are not; "! agentprocs N": not N now.
func cmdAgentProcs(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: agentprocs N")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	r := realOf(ts)
	if r.token == "" {
		ts.Fatalf("agentprocs: only in a real_* scenario")
	}
	list := func() []string {
		pids, err := realagent.Marked(r.token)
		ts.Check(err)
		var out []string
		for _, pid := range pids {
			cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if err != nil || len(cmd) == 0 {
				continue // gone, or a zombie
			}
			argv := strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
			if filepath.Base(argv[0]) == "tmux" || strings.HasPrefix(argv[0], "tmux:") {
				continue
			}
			out = append(out, fmt.Sprintf("%d %s", pid, strings.Join(argv, " ")))
		}
		return out
	}
	got := list()
	if neg {
		if len(got) == want {
			ts.Fatalf("%d processes of the scenario run besides tmux:\n%s", len(got), strings.Join(got, "\n"))
		}
		return
	}
	for deadline := time.Now().Add(time.Second); len(got) != want && time.Now().Before(deadline); got = list() {
		time.Sleep(50 * time.Millisecond)
	}
	if len(got) != want {
		ts.Fatalf("%d processes of the scenario run besides tmux, want %d:\n%s", len(got), want, strings.Join(got, "\n"))
	}
}
