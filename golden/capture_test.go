package golden

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/mockagents/fakemodel"
	"github.com/partyhq/party/mockagents/realagent"
)

// The captured screens of the real agents live in
// golden/screens/<agent>@<version>/<state>.txt (capture-pane -p -J, as party
// reads panes) and <state>.ansi (with -e). `go test ./golden -run
// TestRealScreens -update` captures them again from the pinned agents
// (make agents) driven by the fake model; without -update the test checks
// that every pinned version has every state, so moving a pin without
// capturing fails here.

// screenStates are the captures each agent must have.
var screenStates = map[string][]string{
	"claude": {"idle", "input-typed", "paste-placeholder", "busy-before-token", "busy-streaming", "queued",
		"after-interrupt", "answered", "stop-hooks", "dialog-permission", "dialog-trust", "dialog-api-key",
		"error-400", "error-retry", "panel-cost"},
	"codex": {"idle", "input-typed", "paste-placeholder", "busy-before-token", "busy-alt-frame", "busy-streaming",
		"queued", "after-interrupt", "answered", "dialog-permission", "dialog-trust", "error-400", "error-retry"},
	"gemini": {"idle", "input-typed", "paste-placeholder", "busy-before-token", "busy-streaming", "queued",
		"after-interrupt", "answered", "dialog-permission", "dialog-trust", "dialog-auth", "dialog-api-key",
		"error-400", "error-retry", "menu-slash", "menu-at"},
}

// ScreensDir is where the captures of agent at version live.
func screensDir(agent, version string) string {
	return filepath.Join(Dir(), "screens", agent+"@"+version)
}

func TestRealScreens(t *testing.T) {
	for _, pin := range realagent.Pins() {
		t.Run(pin.Kind, func(t *testing.T) {
			dir := screensDir(pin.Kind, pin.Version)
			if *Update {
				t.Parallel()
				captureAgent(t, pin.Kind, dir)
			}
			for _, st := range screenStates[pin.Kind] {
				for _, ext := range []string{".txt", ".ansi"} {
					if _, err := os.Stat(filepath.Join(dir, st+ext)); err != nil {
						t.Errorf("%s@%s has no captured %q screen (%v): capture with `make agents && go test ./golden -run TestRealScreens -update`",
							pin.Kind, pin.Version, st+ext, err)
					}
				}
			}
		})
	}
}

// captureScript drives the agents into each state.
const captureScript = `on /^slow/
  think 25s
  say slow done
on /^stream/
  say The first part of the answer streams in.\n
  think 8s
  say The second part.
on /^perm/
  permission touch perm-ok
  say ran it
on "retry this"
  fail 500
on "bad request"
  fail 400
on *
  think 300ms
  say Answer: $0
`

// capturer drives real agents on a private tmux server.
type capturer struct {
	t     *testing.T
	sock  string
	tmp   string
	token string
	env   []string
	model *fakemodel.Server
	dir   string
	n     int
}

func newCapturer(t *testing.T, dir string) *capturer {
	tmp, err := os.MkdirTemp("", "pcap")
	require.NoError(t, err)
	var b [4]byte
	_, _ = rand.Read(b[:])
	c := &capturer{t: t, sock: "pc" + hex.EncodeToString(b[:]), tmp: tmp, token: "cap-" + hex.EncodeToString(b[:]), dir: dir}
	script := filepath.Join(tmp, "script")
	require.NoError(t, os.WriteFile(script, []byte(captureScript), 0o644))
	c.model, err = fakemodel.Start(fakemodel.Options{ScriptPath: script, LogPath: filepath.Join(tmp, "model.log")})
	require.NoError(t, err)
	bin, err := realagent.BinDir()
	require.NoError(t, err)
	c.env = []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "LC_ALL=C.UTF-8", "TERM=xterm-256color", "TMUX_TMPDIR=" + tmp, "TMPDIR=" + tmp,
		"PARTY_TEST_TOKEN=" + c.token}
	t.Cleanup(func() {
		c.tmux("kill-server")
		_, _ = realagent.Reap(c.token)
		_ = c.model.Close()
		os.RemoveAll(tmp)
	})
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return c
}

func (c *capturer) tmux(args ...string) string {
	cmd := exec.Command("tmux", append([]string{"-u", "-L", c.sock, "-f", os.DevNull}, args...)...)
	cmd.Env = c.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run()
	return out.String()
}

// home makes a HOME and work directory seeded for kind; edit may change
// the seed afterwards.
func (c *capturer) home(kind string) (home, work string, env []string) {
	c.n++
	home = filepath.Join(c.tmp, fmt.Sprintf("h%d", c.n))
	work = filepath.Join(c.tmp, fmt.Sprintf("w%d", c.n))
	require.NoError(c.t, os.MkdirAll(home, 0o700))
	require.NoError(c.t, os.MkdirAll(work, 0o755))
	require.NoError(c.t, os.WriteFile(filepath.Join(work, "README.md"), []byte("# capture\n"), 0o644))
	env, err := realagent.Seed(realagent.SeedOptions{Kind: kind, Home: home, ModelURL: c.model.URL(), WorkDir: work})
	require.NoError(c.t, err)
	return home, work, append(env, "HOME="+home)
}

// start runs argv in a new session and returns its pane.
func (c *capturer) start(dir string, env []string, argv ...string) string {
	name := fmt.Sprintf("s%d", c.n)
	args := []string{"new-session", "-d", "-s", name, "-x", "120", "-y", "40", "-c", dir}
	for _, e := range append(append([]string{}, c.env...), env...) {
		args = append(args, "-e", e)
	}
	c.tmux(append(append(args, "--"), argv...)...)
	return strings.TrimSpace(c.tmux("display-message", "-p", "-t", name+":", "#{pane_id}"))
}

func (c *capturer) screen(pane string) string {
	return c.tmux("capture-pane", "-p", "-J", "-t", pane)
}

// wait polls the pane until re matches, returning the screen.
func (c *capturer) wait(pane, re string) string {
	c.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(90 * time.Second)
	var s string
	for time.Now().Before(deadline) {
		if s = c.screen(pane); rx.MatchString(s) {
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("pane %s never matched %q; last screen:\n%s", pane, re, s)
	return ""
}

// settled waits for re, lets the agent finish drawing, and saves the
// screen as state.
func (c *capturer) settled(pane, re, state string) {
	c.t.Helper()
	c.wait(pane, re)
	time.Sleep(time.Second)
	c.save(pane, state)
}

// untrusted is a new directory no agent was told to trust.
func (c *capturer) untrusted(name string) string {
	dir := filepath.Join(c.tmp, name)
	require.NoError(c.t, os.MkdirAll(dir, 0o755))
	return dir
}

// save writes the pane's screen as state, plain and with escapes.
func (c *capturer) save(pane, state string) {
	plain := c.screen(pane)
	ansi := c.tmux("capture-pane", "-p", "-J", "-e", "-t", pane)
	require.NoError(c.t, os.WriteFile(filepath.Join(c.dir, state+".txt"), []byte(plain), 0o644))
	require.NoError(c.t, os.WriteFile(filepath.Join(c.dir, state+".ansi"), []byte(ansi), 0o644))
}

func (c *capturer) paste(pane, text string) {
	cmd := exec.Command("tmux", "-u", "-L", c.sock, "load-buffer", "-b", "cap", "-")
	cmd.Env = c.env
	cmd.Stdin = strings.NewReader(text)
	require.NoError(c.t, cmd.Run())
	c.tmux("paste-buffer", "-p", "-r", "-d", "-b", "cap", "-t", pane)
}

func (c *capturer) keys(pane string, keys ...string) {
	c.tmux(append([]string{"send-keys", "-t", pane}, keys...)...)
}

// submit pastes text and presses Enter after the agent took the paste.
func (c *capturer) submit(pane, text string) {
	c.paste(pane, text)
	time.Sleep(400 * time.Millisecond)
	c.keys(pane, "Enter")
}

// The screens' landmarks, per agent.
var (
	idleRe = map[string]string{
		"claude": `(?m)^❯\x{a0}.*\n─+\n.*\? for shortcuts`,
		"codex":  `› Ask Codex to do anything`,
		"gemini": `Type your message or @path/to/file`,
	}
	busyRe = map[string]string{
		"claude": `esc to interrupt`,
		"codex":  `Working \(`,
		"gemini": `esc to cancel`,
	}
	permRe = map[string]string{
		"claude": `Do you want to proceed\?`,
		"codex":  `Would you like to run the following command\?`,
		"gemini": `Allow execution`,
	}
)

func captureAgent(t *testing.T, kind, dir string) {
	c := newCapturer(t, dir)
	_, work, env := c.home(kind)
	bin, err := realagent.Bin(kind)
	require.NoError(t, err)
	argv := []string{bin}
	if kind == "codex" {
		argv = append(argv, "-c", `notify=["true"]`) // embedded, no background daemon
	}
	p := c.start(work, env, argv...)
	c.settled(p, idleRe[kind], "idle")

	c.paste(p, "a draft the operator typed")
	c.wait(p, "a draft the operator typed")
	c.save(p, "input-typed")
	c.keys(p, "C-u")
	c.wait(p, idleRe[kind])

	var long strings.Builder
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&long, "line %02d of a long pasted text %s\n", i, strings.Repeat("x", 100))
	}
	c.paste(p, long.String())
	c.wait(p, `\[Pasted`)
	c.save(p, "paste-placeholder")
	c.keys(p, "C-u")
	c.wait(p, idleRe[kind])

	c.submit(p, "slow question")
	c.wait(p, busyRe[kind])
	time.Sleep(1500 * time.Millisecond)
	c.save(p, "busy-before-token")
	if kind == "codex" {
		c.wait(p, `◦ Working`)
		c.save(p, "busy-alt-frame")
	}
	c.paste(p, "queued while busy")
	time.Sleep(400 * time.Millisecond)
	if kind == "codex" {
		c.keys(p, "Tab") // Enter would steer the running turn
	} else {
		c.keys(p, "Enter")
	}
	c.wait(p, map[string]string{"claude": `Press up to edit queued messages`, "codex": `Queued follow-up`, "gemini": `Queued`}[kind])
	c.save(p, "queued")
	c.keys(p, "Escape")
	time.Sleep(2 * time.Second)
	c.save(p, "after-interrupt")
	c.keys(p, "C-u")
	c.wait(p, idleRe[kind])
	time.Sleep(2 * time.Second) // a queued message may run now
	c.wait(p, idleRe[kind])

	c.submit(p, "stream an answer")
	c.settled(p, `The first part of the answer`, "busy-streaming")
	c.wait(p, `The second part`)
	time.Sleep(time.Second)
	c.wait(p, idleRe[kind])
	c.save(p, "answered")

	c.submit(p, "perm to touch")
	c.settled(p, permRe[kind], "dialog-permission")
	c.keys(p, "Escape")
	c.wait(p, idleRe[kind])

	c.submit(p, "bad request")
	c.settled(p, map[string]string{"claude": `API Error`, "codex": `■`, "gemini": `API Error`}[kind], "error-400")
	c.wait(p, idleRe[kind])

	c.submit(p, "retry this")
	time.Sleep(8 * time.Second)
	c.save(p, "error-retry")
	c.keys(p, "Escape")
	time.Sleep(time.Second)
	c.keys(p, "C-u")

	switch kind {
	case "claude":
		c.wait(p, idleRe[kind])
		c.submit(p, "/cost")
		time.Sleep(2 * time.Second)
		c.save(p, "panel-cost")
		captureClaudeExtra(c)
	case "codex":
		captureCodexTrust(c)
	case "gemini":
		c.wait(p, idleRe[kind])
		c.tmux("send-keys", "-t", p, "-l", "/he")
		time.Sleep(1500 * time.Millisecond)
		c.save(p, "menu-slash")
		c.keys(p, "Escape")
		time.Sleep(300 * time.Millisecond)
		c.keys(p, "C-u")
		time.Sleep(300 * time.Millisecond)
		c.wait(p, idleRe[kind])
		c.tmux("send-keys", "-t", p, "-l", "read @READ")
		time.Sleep(1500 * time.Millisecond)
		c.save(p, "menu-at")
		c.keys(p, "Escape")
		captureGeminiDialogs(c)
	}
}

func captureClaudeExtra(c *capturer) {
	bin, _ := realagent.Bin("claude")
	// Stop hooks that take a while show their own busy line.
	_, work, env := c.home("claude")
	settings := filepath.Join(work, "hooks.json")
	hook := map[string]any{"hooks": map[string]any{"Stop": []any{map[string]any{"hooks": []any{
		map[string]any{"type": "command", "command": "sleep 6"}, map[string]any{"type": "command", "command": "sleep 6"}}}}}}
	b, _ := json.Marshal(hook)
	require.NoError(c.t, os.WriteFile(settings, b, 0o644))
	p := c.start(work, env, bin, "--settings", settings)
	c.wait(p, idleRe["claude"])
	c.submit(p, "hello")
	c.wait(p, `running stop hook`)
	c.save(p, "stop-hooks")

	// A directory never trusted opens the trust dialog.
	_, _, env = c.home("claude")
	p = c.start(c.untrusted("untrusted-claude"), env, bin)
	c.settled(p, `trust`, "dialog-trust")

	// A key Claude has not seen approved opens the API-key dialog.
	_, work, env = c.home("claude")
	p = c.start(work, append(env, "ANTHROPIC_API_KEY=sk-ant-api03-another-key-never-approved-000000"), bin)
	c.settled(p, `API key`, "dialog-api-key")
}

func captureCodexTrust(c *capturer) {
	bin, _ := realagent.Bin("codex")
	_, _, env := c.home("codex")
	repo := c.untrusted("untrusted-repo")
	require.NoError(c.t, exec.Command("git", "init", "-q", repo).Run())
	p := c.start(repo, env, bin, "-c", `notify=["true"]`)
	c.settled(p, `(?i)trust`, "dialog-trust")
}

func captureGeminiDialogs(c *capturer) {
	bin, _ := realagent.Bin("gemini")
	_, _, env := c.home("gemini")
	p := c.start(c.untrusted("untrusted-gemini"), env, bin)
	c.settled(p, `Trust folder`, "dialog-trust")

	// Without an auth method in the settings: the auth dialog, then the
	// API-key box.
	home, work, env := c.home("gemini")
	settings := filepath.Join(home, ".gemini", "settings.json")
	var cfg map[string]any
	b, err := os.ReadFile(settings)
	require.NoError(c.t, err)
	require.NoError(c.t, json.Unmarshal(b, &cfg))
	delete(cfg, "security")
	b, _ = json.Marshal(cfg)
	require.NoError(c.t, os.WriteFile(settings, b, 0o600))
	p = c.start(work, env, bin)
	c.settled(p, `Use Gemini API Key`, "dialog-auth")
	c.wait(p, `● \d\. Use Gemini API Key|Use Gemini API Key`)
	for i := 0; i < 4 && !strings.Contains(c.screen(p), "● 2. Use Gemini API Key"); i++ {
		c.keys(p, "Down")
		time.Sleep(300 * time.Millisecond)
	}
	c.keys(p, "Enter")
	c.settled(p, `(?i)Enter Gemini API Key|API Key`, "dialog-api-key")
}
