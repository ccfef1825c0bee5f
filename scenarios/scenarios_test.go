package scenarios

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/partyhq/party/cmd/party/cli"
	"github.com/partyhq/party/golden"
	"github.com/partyhq/party/mockagents"
	"github.com/partyhq/party/mockagents/mocklog"
	"github.com/partyhq/party/mockagents/realagent"
)

// update rewrites golden files and the expected files of failing cmp
// commands; it is golden's -update flag.
var update = golden.Update

func TestMain(m *testing.M) {
	mock := func() { os.Exit(mockagents.Main()) }
	commands := map[string]func(){
		"party":     func() { os.Exit(cli.Main()) },
		"claude":    mock,
		"codex":     mock,
		"gemini":    mock,
		"mockagent": mock,
		"mcpcall":   func() { os.Exit(mcpcallMain()) },
		"ssh":       func() { os.Exit(sshMain()) },
	}
	testscript.Main(m, commands)
}

// waitLimit bounds every wait of a scenario; it is a hang guard, not a
// timing assertion.
const waitLimit = 60 * time.Second

func TestScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the scenarios need tmux and, for real_*, the pinned agents; make test runs them")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is required by the scenarios and was not found on PATH (apt-get install -y tmux, brew install tmux): %v", err)
	}
	testscript.Run(t, params("testdata", t.TempDir()))
}

// params are the scenarios' testscript parameters over the scripts in
// dir, their work dirs under root.
func params(dir, root string) testscript.Params {
	return testscript.Params{
		Dir: dir,
		// The scenarios' work dirs live in the test's own temporary
		// directory, removed (and checked removed) once every scenario
		// and its teardown is done: testscript's own root was left
		// behind, empty, now and then.
		WorkdirRoot:         root,
		UpdateScripts:       *update,
		RequireExplicitExec: false,
		Setup:               setup,
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"tmux":       cmdTmux,
			"screen":     cmdScreen,
			"waitscreen": cmdWaitScreen,
			"mocklog":    cmdMockLog,
			"accept":     cmdAccept,
			"gen":        cmdGen,
			"waitfor":    cmdWaitFor,
			"golden":     cmdGolden,
			"fakemodel":  cmdFakeModel,
			"realagent":  cmdRealAgent,
			"agentprocs": cmdAgentProcs,
			"fakegithub": cmdFakeGitHub,
			"http":       cmdHTTP,
			"waitidle":   cmdWaitIdle,
			"ptyclient":  cmdPtyClient,
			"webhook":    cmdWebhook,
			"sqlite":     cmdSQLite,
			"sshd":       cmdSSHD,
		},
	}
}

// setup gives each scenario a private tmux server, state and home, and
// registers the server's teardown; a real_* scenario also gets a token
// ($PARTY_TEST_TOKEN) that marks its processes, which are reaped once the
// server is gone.
func setup(env *testscript.Env) error {
	var b [4]byte
	_, _ = rand.Read(b[:])
	sock := "pt" + hex.EncodeToString(b[:])
	// Socket paths over ~100 bytes fail; $WORK is long, so keep the tmux
	// dir short.
	tmpdir, err := os.MkdirTemp("", "pt")
	if err != nil {
		return err
	}
	work := env.WorkDir
	home := filepath.Join(work, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	for k, v := range map[string]string{
		"HOME":            home,
		"XDG_STATE_HOME":  filepath.Join(work, "state"),
		"XDG_CONFIG_HOME": filepath.Join(work, "config"),
		"TMUX_TMPDIR":     tmpdir,
		// party's wake sockets too: a waiter a scenario kills leaves its
		// socket there, removed with the rest at teardown.
		"XDG_RUNTIME_DIR":   tmpdir,
		"PARTY_TMUX_SOCKET": sock,
		"PARTY_TMUX_CONFIG": os.DevNull,
		"PARTY_MOCK_LOG":    filepath.Join(work, "mock.log"),
		"LC_ALL":            "C.UTF-8",
		"TERM":              "xterm-256color",
		// A binary built with -race sleeps a second at exit for other
		// threads to report (atexit_sleep_ms); a scenario runs party
		// and the mocks hundreds of times, and that second was most of
		// its time.
		"GORACE":                 strings.TrimSpace("atexit_sleep_ms=0 " + os.Getenv("GORACE")),
		"SOCK":                   sock,
		"GOLDEN":                 golden.Dir(),
		"PARTY_SESSION":          "",
		"TMUX":                   "",
		"TMUX_PANE":              "",
		"PARTY_TMUX_SOCKET_PATH": "",
	} {
		env.Setenv(k, v)
	}
	real := &realState{}
	if isRealScenario(work) {
		real.token = newToken()
		env.Setenv(realagent.TokenVar, real.token)
	}
	env.Values[realKey{}] = real
	env.Values[sshdKey{}] = &sshdSlot{}
	if keep := os.Getenv(keepVar); keep != "" {
		// Runs after the teardown below (defers run last first).
		env.Setenv("FAKEMODEL_DUMP", filepath.Join(work, "dump"))
		env.Defer(func() { keepFailed(env.T(), work, keep) })
	}
	env.Defer(func() {
		killServer(env.Getenv, sock)
		real.teardown(env.T())
		os.RemoveAll(tmpdir)
	})
	return nil
}

// keepVar names a directory where a failed scenario's work dir is kept,
// the fake model's request bodies with it ($WORK/dump): the evidence of a
// flake a soak meets once in many runs (.ci/soak sets it).
const keepVar = "PARTY_SCENARIO_KEEP"

// keepFailed copies work into keep when t failed, once the scenario's
// server and agents are gone.
func keepFailed(t testscript.T, work, keep string) {
	ft, ok := t.(interface {
		Failed() bool
		Name() string
	})
	if !ok || !ft.Failed() {
		return
	}
	dst := filepath.Join(keep, strings.ReplaceAll(ft.Name(), "/", "_")+"-"+time.Now().Format("150405.000"))
	if err := os.MkdirAll(keep, 0o755); err != nil {
		t.Log(fmt.Sprintf("keep: %v", err))
		return
	}
	if out, err := exec.Command("cp", "-a", work, dst).CombinedOutput(); err != nil {
		t.Log(fmt.Sprintf("keep: cp: %v: %s", err, out))
		return
	}
	t.Log("kept the work dir in " + dst)
}

// tmuxArgv is the argv of a tmux command on the scenario's server.
func tmuxArgv(getenv func(string) string, args ...string) []string {
	argv := []string{"tmux", "-u", "-L", getenv("SOCK")}
	if len(args) > 0 && args[0] == "new-session" {
		argv = append(argv, "-f", getenv("PARTY_TMUX_CONFIG"))
	}
	return append(argv, args...)
}

func runTmux(getenv func(string) string, environ []string, args ...string) (string, string, error) {
	argv := tmuxArgv(getenv, args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = environ
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// killServer kills the scenario's server, waits for its process to exit and
// removes its socket, so no server outlives the scenario.
func killServer(getenv func(string) string, sock string) {
	env := []string{"TMUX_TMPDIR=" + getenv("TMUX_TMPDIR"), "LC_ALL=C.UTF-8", "PATH=" + os.Getenv("PATH")}
	out, _, err := runTmux(getenv, env, "display-message", "-p", "#{pid} #{socket_path}")
	_, _, _ = runTmux(getenv, env, "kill-server")
	if err != nil {
		return
	}
	f := strings.Fields(out)
	if len(f) != 2 {
		return
	}
	pid, _ := strconv.Atoi(f[0])
	deadline := time.Now().Add(5 * time.Second)
	for pid > 0 && syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if pid > 0 && syscall.Kill(pid, 0) == nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	os.Remove(f[1])
}

func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMUX_TMPDIR", "XDG_RUNTIME_DIR", "LC_ALL", "TERM", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "PARTY_MOCK_LOG", realagent.TokenVar} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	return env
}

func cmdTmux(ts *testscript.TestScript, neg bool, args []string) {
	out, errOut, err := runTmux(ts.Getenv, scriptEnv(ts), args...)
	_, _ = ts.Stdout().Write([]byte(out))
	_, _ = ts.Stderr().Write([]byte(errOut))
	if neg != (err != nil) {
		ts.Fatalf("tmux %s: unexpected result: %v\n%s", strings.Join(args, " "), err, errOut)
	}
}

// paneOf returns a pane id for a target given as a pane id or a role.
func paneOf(ts *testscript.TestScript, target string) string {
	if strings.HasPrefix(target, "%") {
		return target
	}
	cmd := exec.Command("party", "resolve", target)
	cmd.Env = append(scriptEnv(ts), "PARTY_TMUX_SOCKET="+ts.Getenv("SOCK"), "PARTY_SESSION="+ts.Getenv("PARTY_SESSION"))
	out, err := cmd.Output()
	if err != nil {
		ts.Fatalf("resolve %s: %v", target, err)
	}
	return strings.TrimSpace(string(out))
}

func capture(ts *testscript.TestScript, pane string) string {
	out, errOut, err := runTmux(ts.Getenv, scriptEnv(ts), "capture-pane", "-p", "-J", "-t", pane)
	if err != nil {
		ts.Fatalf("capture %s: %v: %s", pane, err, errOut)
	}
	return out
}

func cmdScreen(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: screen TARGET")
	}
	_, _ = ts.Stdout().Write([]byte(capture(ts, paneOf(ts, args[0]))))
}

func cmdWaitScreen(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: [!] waitscreen TARGET REGEXP")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	pane := paneOf(ts, args[0])
	deadline := time.Now().Add(waitLimit)
	var screen string
	for time.Now().Before(deadline) {
		screen = capture(ts, pane)
		if re.MatchString(screen) != neg {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Fatalf("pane %s: screen never %smatched %q; last screen:\n%s", pane, map[bool]string{true: "un"}[neg], args[1], screen)
}

func cmdMockLog(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: mocklog count N | is I TEXT | text I FILE [CHANGE...] | holds FILE N | field I KEY VALUE | set FILE [SEP] | each FILE [SEP] | none")
	}
	path := ts.Getenv("PARTY_MOCK_LOG")
	read := func() []mocklog.Entry {
		entries, err := mocklog.Read(path)
		if err != nil && !os.IsNotExist(err) {
			ts.Fatalf("mock log: %v", err)
		}
		return submissions(entries)
	}
	entry := func(i string, need int) mocklog.Entry {
		n, err := strconv.Atoi(i)
		ts.Check(err)
		entries := waitEntries(read, n+1)
		if len(entries) <= n {
			ts.Fatalf("mock log has %d entries, want entry %d:\n%s", len(entries), n, dump(entries))
		}
		return entries[n]
	}
	switch args[0] {
	case "none":
		if e := read(); len(e) != 0 {
			ts.Fatalf("mock log has %d entries, want none:\n%s", len(e), dump(e))
		}
	case "count":
		want, err := strconv.Atoi(args[1])
		ts.Check(err)
		entries := waitEntries(read, want)
		if len(entries) != want {
			ts.Fatalf("mock log has %d entries, want %d:\n%s", len(entries), want, dump(entries))
		}
	case "text":
		if len(args) < 3 {
			ts.Fatalf("usage: mocklog text I FILE [tabs4] [trim|trimend]")
		}
		e := entry(args[1], 0)
		b, err := os.ReadFile(ts.MkAbs(args[2]))
		ts.Check(err)
		want := string(b)
		for _, change := range args[3:] {
			want = agentChange(ts, change, want)
		}
		if e.Text != want {
			ts.Fatalf("mock log entry %s: text differs from %s %s\n got %d bytes: %s\nwant %d bytes: %s",
				args[1], args[2], strings.Join(args[3:], " "), len(e.Text), clip(strconv.Quote(e.Text)), len(want), clip(strconv.Quote(want)))
		}
	case "is":
		e := entry(args[1], 0)
		if e.Text != args[2] {
			ts.Fatalf("mock log entry %s: got %s, want %s", args[1], strconv.Quote(e.Text), strconv.Quote(args[2]))
		}
	case "set", "each":
		// set: each line of FILE is one expected text; order is free,
		// every text must arrive exactly once. each: every line of FILE
		// arrives at least once, and every text that arrives is one of
		// them. With SEP (Go escapes, e.g. '\n\n'), an entry may hold
		// several texts joined by SEP, as when an agent merges the
		// messages queued during a turn; empty pieces are dropped.
		if len(args) != 2 && len(args) != 3 {
			ts.Fatalf("usage: mocklog %s FILE [SEP]", args[0])
		}
		b, err := os.ReadFile(ts.MkAbs(args[1]))
		ts.Check(err)
		want := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		var sep string
		if len(args) == 3 {
			sep, err = strconv.Unquote(`"` + args[2] + `"`)
			ts.Check(err)
		}
		texts := func(entries []mocklog.Entry) []string {
			var got []string
			for _, e := range entries {
				if sep == "" {
					got = append(got, e.Text)
					continue
				}
				for _, t := range strings.Split(e.Text, sep) {
					if t != "" {
						got = append(got, t)
					}
				}
			}
			return got
		}
		// done says whether the wait for more texts is over.
		done := func(got []string) bool { return len(got) >= len(want) }
		if args[0] == "each" {
			done = func(got []string) bool { return len(missing(want, got)) == 0 }
		}
		entries := read()
		for deadline := time.Now().Add(waitLimit); !done(texts(entries)) && time.Now().Before(deadline); entries = read() {
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond) // to catch extra submissions
		entries = read()
		got := texts(entries)
		if args[0] == "each" {
			if m := missing(want, got); len(m) > 0 {
				ts.Fatalf("mock log lacks %q of %s:\n%s", m, args[1], dump(entries))
			}
			if m := missing(got, want); len(m) > 0 {
				ts.Fatalf("mock log has %q, not in %s:\n%s", m, args[1], dump(entries))
			}
			break
		}
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			ts.Fatalf("mock log texts differ from %s:\n%s", args[1], dump(entries))
		}
	case "holds":
		// holds FILE N: exactly N submissions hold FILE's text (its last
		// newline dropped) byte for byte, somewhere in them.
		if len(args) != 3 {
			ts.Fatalf("usage: mocklog holds FILE N")
		}
		b, err := os.ReadFile(ts.MkAbs(args[1]))
		ts.Check(err)
		want, err := strconv.Atoi(args[2])
		ts.Check(err)
		text := strings.TrimSuffix(string(b), "\n")
		holding := func(entries []mocklog.Entry) int {
			n := 0
			for _, e := range entries {
				if strings.Contains(e.Text, text) {
					n++
				}
			}
			return n
		}
		entries := read()
		for deadline := time.Now().Add(waitLimit); holding(entries) < want && time.Now().Before(deadline); entries = read() {
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond) // to catch extra submissions
		if entries = read(); holding(entries) != want {
			ts.Fatalf("mock log: %d submissions hold %s byte for byte, want %d:\n%s", holding(entries), args[1], want, dump(entries))
		}
	case "field":
		e := entry(args[1], 0)
		got := map[string]string{"agent": e.Agent, "mode": e.Mode, "pane": e.Pane}[args[2]]
		if got != args[3] {
			ts.Fatalf("mock log entry %s: %s is %q, want %q", args[1], args[2], got, args[3])
		}
	default:
		ts.Fatalf("mocklog: unknown check %q", args[0])
	}
}

// missing returns the texts of want that are not in got.
func missing(want, got []string) []string {
	var out []string
	for _, w := range want {
		if !slices.Contains(got, w) {
			out = append(out, w)
		}
	}
	return out
}

// agentChange applies to an expected text a change a real agent makes to
// what it is given (docs/agents-reference.md §3): tabs4, each tab becomes 4
// spaces (Claude); trim, leading and trailing whitespace go (Codex,
// Gemini); trimend, trailing whitespace goes (Claude, for a text short
// enough to stay in its input box rather than become a paste placeholder,
// and for a text queued while it is busy).
func agentChange(ts *testscript.TestScript, change, text string) string {
	switch change {
	case "tabs4":
		return strings.ReplaceAll(text, "\t", "    ")
	case "trim":
		return strings.TrimSpace(text)
	case "trimend":
		return strings.TrimRightFunc(text, unicode.IsSpace)
	}
	ts.Fatalf("mocklog text: unknown change %q (want tabs4, trim or trimend)", change)
	return ""
}

// submissions drops the fake model's entries that are not submissions:
// side requests (titles, routers) and tool-result continuations.
func submissions(entries []mocklog.Entry) []mocklog.Entry {
	out := entries[:0:0]
	for _, e := range entries {
		if e.Mode != "side" && e.Mode != "continue" && e.Mode != "tool_result" {
			out = append(out, e)
		}
	}
	return out
}

// waitEntries waits until the log has at least n entries, and then a little
// longer to catch extra submissions.
func waitEntries(read func() []mocklog.Entry, n int) []mocklog.Entry {
	deadline := time.Now().Add(waitLimit)
	for {
		e := read()
		if len(e) >= n || time.Now().After(deadline) {
			time.Sleep(300 * time.Millisecond)
			return read()
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func dump(entries []mocklog.Entry) string {
	var b strings.Builder
	for i, e := range entries {
		fmt.Fprintf(&b, "%d %s %s %s\n", i, e.Agent, e.Mode, clip(strconv.Quote(e.Text)))
	}
	return b.String()
}

func clip(s string) string {
	if len(s) > 400 {
		return s[:200] + "…" + s[len(s)-200:]
	}
	return s
}

// cmdWaitFor runs a command until its stdout matches REGEXP.
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: waitfor REGEXP COMMAND [ARGS...]")
	}
	re, err := regexp.Compile(args[0])
	ts.Check(err)
	deadline := time.Now().Add(waitLimit)
	var out []byte
	// Each try runs a program (under make race, a -race binary): the tries
	// back off from 20 ms to 200 ms, so that a long wait does not load
	// the machine the other scenarios run on.
	pause := 20 * time.Millisecond
	for time.Now().Before(deadline) {
		cmd := exec.Command(args[1], args[2:]...)
		cmd.Dir = ts.Getenv("WORK")
		cmd.Env = append(scriptEnv(ts), "PARTY_TMUX_SOCKET="+ts.Getenv("SOCK"), "PARTY_SESSION="+ts.Getenv("PARTY_SESSION"))
		var err error
		out, err = cmd.Output()
		if re.Match(out) {
			return
		}
		if err != nil { // say why the last try printed nothing that matched
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				out = append(out, ee.Stderr...)
			}
			out = append(out, "\n("+err.Error()+")"...)
		}
		time.Sleep(pause)
		pause = min(pause*3/2, 200*time.Millisecond)
	}
	ts.Fatalf("%s never printed a match for %q; last output:\n%s", strings.Join(args[1:], " "), args[0], out)
}

// cmdGen writes generated texts that a txtar file cannot hold well.
func cmdGen(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: gen crlf|lines100|kb100|kb600 FILE")
	}
	var text, want string
	switch args[0] {
	case "crlf":
		text = "first line\r\nsecond\tline\r\nthird\r\n"
		want = "first line\nsecond\tline\nthird\n"
	case "lines100":
		var b strings.Builder
		for i := 1; i <= 100; i++ {
			fmt.Fprintf(&b, "line %03d: $(echo %d) `id` \"q\" 'q' end;\n", i, i)
		}
		text = b.String()
	case "kb100", "kb600":
		size := 100 * 1024
		if args[0] == "kb600" {
			size = 600 * 1024 // past deliver.MaxPaste: spilled to a file
		}
		var b strings.Builder
		for i := 0; b.Len() < size; i++ {
			fmt.Fprintf(&b, "%05d the quick brown fox $HOME `x` 'y' \"z\" 🎉 日本語 \t;\n", i)
		}
		text = b.String()
	default:
		ts.Fatalf("gen: unknown text %q", args[0])
	}
	if want == "" {
		want = text
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(text), 0o644))
	ts.Check(os.WriteFile(ts.MkAbs(args[1]+".want"), []byte(want), 0o644))
}

// cmdGolden compares the last command's stdout, normalized, with a file
// under golden/ (rewritten with -update).
func cmdGolden(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: golden NAME")
	}
	got := strings.ReplaceAll(ts.ReadFile("stdout"), ts.Getenv("WORK"), "$WORK")
	if err := golden.Check(args[0], got, *update); err != nil {
		ts.Fatalf("%v", err)
	}
}
