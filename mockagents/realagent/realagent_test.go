package realagent

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPins(t *testing.T) {
	for _, tc := range []struct{ kind, pkg, version string }{
		{Claude, "@anthropic-ai/claude-code", "2.1.197"},
		{Codex, "@openai/codex", "0.169.0"},
		{Gemini, "@google/gemini-cli", "0.61.0"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			v, err := Version(tc.kind)
			require.NoError(t, err)
			assert.Equal(t, tc.version, v)
			assert.Contains(t, Pins(), Pin{Kind: tc.kind, Package: tc.pkg, Version: tc.version})
		})
	}
	_, err := Version("aider")
	assert.ErrorIs(t, err, ErrUnknownKind)
	assert.Len(t, Pins(), 3)
}

// TestLockMatchesManifest: the lock pins what package.json asks for, so
// npm ci installs exactly the pins.
func TestLockMatchesManifest(t *testing.T) {
	var lock struct {
		Packages map[string]struct {
			Version      string            `json:"version"`
			Dependencies map[string]string `json:"dependencies"`
		} `json:"packages"`
	}
	require.NoError(t, json.Unmarshal(packageLock, &lock))
	for _, p := range Pins() {
		assert.Equal(t, p.Version, lock.Packages[""].Dependencies[p.Package], "root dependency %s", p.Package)
		assert.Equal(t, p.Version, lock.Packages["node_modules/"+p.Package].Version, "locked %s", p.Package)
	}
}

func TestDirAndBin(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	dir, err := Dir()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(cache, "party", "agents", LockHash()), dir)
	assert.Len(t, LockHash(), 12)

	_, err = Bin(Claude)
	require.ErrorIs(t, err, ErrNotInstalled)
	assert.Contains(t, err.Error(), "make agents")
	assert.Contains(t, err.Error(), "@anthropic-ai/claude-code@2.1.197")
	_, err = Bin("aider")
	assert.ErrorIs(t, err, ErrUnknownKind)

	bin := filepath.Join(dir, "node_modules", ".bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, stampName), nil, 0o644))
	_, err = Bin(Codex)
	require.ErrorIs(t, err, ErrNotInstalled, "stamp but no binary")
	assert.Contains(t, err.Error(), filepath.Join(bin, "codex"))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "codex"), nil, 0o755))
	got, err := Bin(Codex)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(bin, "codex"), got)

	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/home/someone")
	dir, err = Dir()
	require.NoError(t, err)
	assert.Equal(t, "/home/someone/.cache/party/agents/"+LockHash(), dir)
}

func TestHasVersion(t *testing.T) {
	for _, tc := range []struct {
		out, version string
		want         bool
	}{
		{"2.1.197 (Claude Code)\n", "2.1.197", true},
		{"codex-cli 0.169.0\n", "0.169.0", true},
		{"0.61.0\n", "0.61.0", true},
		{"0.61.01\n", "0.61.0", false},
		{"10.61.0\n", "0.61.0", false},
		{"v10.61.0 and 0.61.0", "0.61.0", true},
		{"", "0.61.0", false},
	} {
		assert.Equal(t, tc.want, hasVersion([]byte(tc.out), tc.version), "%q", tc.out)
	}
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), "%s", b)
	return m
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func TestSeedClaude(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(work, link))
	env, err := Seed(SeedOptions{Kind: Claude, Home: home, ModelURL: "http://127.0.0.1:4000/", WorkDir: link})
	require.NoError(t, err)
	e := envMap(env)
	assert.Equal(t, map[string]string{
		"ANTHROPIC_BASE_URL":                       "http://127.0.0.1:4000",
		"ANTHROPIC_API_KEY":                        claudeKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"DISABLE_AUTOUPDATER":                      "1",
		"DISABLE_TELEMETRY":                        "1",
		"DISABLE_ERROR_REPORTING":                  "1",
	}, e)
	cfg := readJSON(t, filepath.Join(home, ".claude.json"))
	assert.Equal(t, true, cfg["hasCompletedOnboarding"])
	key := e["ANTHROPIC_API_KEY"]
	assert.Equal(t, map[string]any{"approved": []any{key[len(key)-20:]}, "rejected": []any{}}, cfg["customApiKeyResponses"])
	projects := cfg["projects"].(map[string]any)
	real, err := filepath.EvalSymlinks(work)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"hasTrustDialogAccepted": true}, projects[real], "the real path is trusted")
}

func TestSeedCodex(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	env, err := Seed(SeedOptions{Kind: Codex, Home: home, ModelURL: "http://127.0.0.1:4000", WorkDir: work})
	require.NoError(t, err)
	codexHome := filepath.Join(home, ".codex")
	assert.Equal(t, map[string]string{"CODEX_HOME": codexHome, CodexKeyVar: codexKey}, envMap(env))
	b, err := os.ReadFile(filepath.Join(codexHome, "config.toml"))
	require.NoError(t, err)
	want := `# Written by party's realagent.Seed: Codex offline against a fake model.
model = "x"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:4000/v1"
wire_api = "responses"
env_key = "FAKEMODEL_API_KEY"

[analytics]
enabled = false

[feedback]
enabled = false

[projects."` + work + `"]
trust_level = "trusted"
`
	assert.Equal(t, want, string(b))
}

func TestSeedGemini(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	// A hook party installed before is kept.
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".gemini"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(`{"hooks":{"AfterAgent":[]},"general":{"vimMode":true}}`), 0o600))
	env, err := Seed(SeedOptions{Kind: Gemini, Home: home, ModelURL: "http://127.0.0.1:4000", WorkDir: work})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"GEMINI_API_KEY":           geminiKey,
		"GOOGLE_GEMINI_BASE_URL":   "http://127.0.0.1:4000",
		"GEMINI_TELEMETRY_ENABLED": "false",
		"NO_BROWSER":               "true",
	}, envMap(env))
	assert.Equal(t, map[string]any{
		"hooks":     map[string]any{"AfterAgent": []any{}},
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"general":   map[string]any{"vimMode": true, "enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"ide":       map[string]any{"enabled": false},
	}, readJSON(t, filepath.Join(home, ".gemini", "settings.json")))
	assert.Equal(t, map[string]any{work: "TRUST_FOLDER"}, readJSON(t, filepath.Join(home, ".gemini", "trustedFolders.json")))
}

// TestSeedAllInOneHome: one scenario holds all three agents in one HOME.
func TestSeedAllInOneHome(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	var all []string
	for _, kind := range []string{Claude, Codex, Gemini} {
		env, err := Seed(SeedOptions{Kind: kind, Home: home, ModelURL: "http://127.0.0.1:4000", WorkDir: work})
		require.NoError(t, err, kind)
		all = append(all, env...)
	}
	assert.Len(t, envMap(all), len(all), "no variable set twice")
	for _, f := range []string{".claude.json", ".codex/config.toml", ".gemini/settings.json", ".gemini/trustedFolders.json"} {
		assert.FileExists(t, filepath.Join(home, f))
	}
	// Seeding claude again keeps what it had and adds the new project.
	other := t.TempDir()
	_, err := Seed(SeedOptions{Kind: Claude, Home: home, ModelURL: "http://127.0.0.1:4000", WorkDir: other})
	require.NoError(t, err)
	projects := readJSON(t, filepath.Join(home, ".claude.json"))["projects"].(map[string]any)
	assert.Len(t, projects, 2)
}

func TestSeedErrors(t *testing.T) {
	_, err := Seed(SeedOptions{Kind: "aider", Home: t.TempDir(), ModelURL: "http://x", WorkDir: t.TempDir()})
	assert.ErrorIs(t, err, ErrUnknownKind)
	_, err = Seed(SeedOptions{Kind: Claude, ModelURL: "http://x", WorkDir: t.TempDir()})
	assert.Error(t, err, "no home")
	_, err = Seed(SeedOptions{Kind: Claude, Home: t.TempDir(), ModelURL: "http://x", WorkDir: filepath.Join(t.TempDir(), "missing")})
	assert.Error(t, err, "missing work dir")
}

func TestTomlString(t *testing.T) {
	assert.Equal(t, `"/a b/\"q\"\\x"`, tomlString(`/a b/"q"\x`))
	assert.Equal(t, `"<&>\n\u0001"`, tomlString("<&>\n\x01"))
}

func newToken(t *testing.T) string {
	var b [16]byte
	_, err := rand.Read(b[:])
	require.NoError(t, err)
	return hex.EncodeToString(b[:])
}

// startSleep starts `sleep 60` with env added, and returns it with a
// channel closed when it has exited.
func startSleep(t *testing.T, env ...string) (*exec.Cmd, chan struct{}) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.Env = append(os.Environ(), env...)
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	return cmd, done
}

func TestReap(t *testing.T) {
	token := newToken(t)
	marked, markedDone := startSleep(t, TokenVar+"="+token)
	// A longer token with the same prefix, and another token, are not ours.
	prefixed, prefixedDone := startSleep(t, TokenVar+"="+token+"0")
	other, otherDone := startSleep(t, TokenVar+"="+newToken(t))
	plain, plainDone := startSleep(t)

	killed, err := Reap(token)
	require.NoError(t, err)
	assert.Equal(t, []int{marked.Process.Pid}, killed)
	select {
	case <-markedDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the marked sleep is still running after Reap")
	}
	assert.Equal(t, syscall.SIGKILL, marked.ProcessState.Sys().(syscall.WaitStatus).Signal())
	for name, done := range map[string]chan struct{}{"prefixed token": prefixedDone, "other token": otherDone, "no token": plainDone} {
		select {
		case <-done:
			t.Errorf("Reap killed the sleep with %s", name)
		default:
		}
	}
	for _, c := range []*exec.Cmd{prefixed, other, plain} {
		assert.NoError(t, c.Process.Signal(syscall.Signal(0)), "pid %d alive", c.Process.Pid)
	}

	killed, err = Reap(token)
	require.NoError(t, err)
	assert.Empty(t, killed, "nothing left to reap")
	_, err = Reap("")
	assert.Error(t, err)
}

// TestReapGrandchild: a process that left its parent's process group (a
// daemon) still carries the token and is reaped.
func TestReapGrandchild(t *testing.T) {
	token := newToken(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	cmd := exec.Command("sh", "-c", `setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $! >"$1"; wait`, "sh", pidFile)
	cmd.Env = append(os.Environ(), TokenVar+"="+token)
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil || len(b) == 0 || b[len(b)-1] != '\n' {
			return false
		}
		_, err = fmt.Sscan(string(b), &pid)
		return err == nil
	}, 5*time.Second, 10*time.Millisecond)

	killed, err := Reap(token)
	require.NoError(t, err)
	assert.ElementsMatch(t, []int{cmd.Process.Pid, pid}, killed)
	assert.Error(t, <-done, "Wait reports the kill")
	// The setsid'd sleep was the shell's child; once the shell is gone
	// init reaps it.
	require.Eventually(t, func() bool {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return true
		}
		b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		return strings.Contains(string(b), ") Z ")
	}, 5*time.Second, 10*time.Millisecond)
}
