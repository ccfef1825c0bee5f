package scenarios

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
	if neg || len(args) < 1 || len(args) > 2 || args[0] != "start" {
		ts.Fatalf("usage: fakemodel start [SCRIPTFILE]")
	}
	r := realOf(ts)
	if r.model != nil {
		ts.Fatalf("fakemodel: already started at %s", r.model.URL())
	}
	// $FAKEMODEL_DUMP, when set, keeps every request body: a scenario
	// that checks what a request carried (a resumed session's earlier
	// turns) reads them there.
	opt := fakemodel.Options{LogPath: ts.Getenv("PARTY_MOCK_LOG"), DumpDir: ts.Getenv("FAKEMODEL_DUMP")}
	if len(args) == 2 {
		opt.ScriptPath = ts.MkAbs(args[1])
	}
	srv, err := fakemodel.Start(opt)
	ts.Check(err)
	r.model = srv
	ts.Setenv("FAKEMODEL_URL", srv.URL())
}

// cmdRealAgent seeds the named real agents into the scenario's HOME for
// $WORK and $FAKEMODEL_URL, adds the environment they need, and puts the
// pinned agents' bin directory first on PATH, so `party start --pane
// claude` runs the real claude rather than the mock.
func cmdRealAgent(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: realagent claude|codex|gemini...")
	}
	url := ts.Getenv("FAKEMODEL_URL")
	if url == "" {
		ts.Fatalf("realagent: no $FAKEMODEL_URL; run fakemodel start first")
	}
	bin, err := realagent.BinDir()
	if err != nil {
		ts.Fatalf("realagent: %v", err)
	}
	for _, kind := range args {
		if _, err := realagent.Bin(kind); err != nil {
			ts.Fatalf("realagent: %v", err)
		}
		env, err := realagent.Seed(realagent.SeedOptions{
			Kind: kind, Home: ts.Getenv("HOME"), ModelURL: url, WorkDir: ts.Getenv("WORK"),
		})
		ts.Check(err)
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			ts.Setenv(k, v)
		}
	}
	path := ts.Getenv("PATH")
	if !strings.HasPrefix(path, bin+string(os.PathListSeparator)) {
		ts.Setenv("PATH", bin+string(os.PathListSeparator)+path)
	}
}
