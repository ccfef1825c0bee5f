package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type env struct {
	dir, cwd string
	vars     map[string]string
}

func newEnv(t *testing.T) *env {
	dir := t.TempDir()
	e := &env{dir: dir, cwd: filepath.Join(dir, "work"), vars: map[string]string{"XDG_CONFIG_HOME": filepath.Join(dir, "xdg"),
		"XDG_STATE_HOME": filepath.Join(dir, "state"), "HOME": dir}}
	require.NoError(t, os.MkdirAll(e.cwd, 0o755))
	return e
}

func (e *env) getenv(k string) string { return e.vars[k] }

func (e *env) write(t *testing.T, local bool, content string) string {
	g, l := Paths(e.getenv, e.cwd)
	path := g
	if local {
		path = l
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

// trust trusts the local file as it is now.
func (e *env) trust(t *testing.T) {
	_, l := Paths(e.getenv, e.cwd)
	_, err := TrustStoreFor(e.getenv).Trust(l, time.Now())
	require.NoError(t, err)
}

func TestLayering(t *testing.T) {
	e := newEnv(t)
	c, warns, err := Load(e.getenv, e.cwd)
	require.NoError(t, err)
	assert.Empty(t, warns)
	assert.Equal(t, 60*time.Second, c.Timeout, "default")

	g := e.write(t, false, `{"defaults":{"timeout":"2m","captureLines":50},"agents":{"claude":{"preamble":"be brief","settleMs":200}}}`)
	l := e.write(t, true, `{"defaults":{"timeout":1500},"preambleMode":"always","agents":{"claude":{"marker":true}}}`)
	e.trust(t)
	c, _, err = Load(e.getenv, e.cwd)
	require.NoError(t, err)
	assert.Equal(t, 1500*time.Millisecond, c.Timeout, "local wins; bare numbers are milliseconds")
	assert.Equal(t, 50, c.CaptureLines, "global where local is silent")
	assert.Equal(t, "always", c.PreambleMode)
	assert.Equal(t, Agent{Preamble: "be brief", SettleMs: 200, Marker: true}, c.Agents["claude"], "agent keys merge across layers")
	assert.Equal(t, l, c.Sources["defaults.timeout"])
	assert.Equal(t, g, c.Sources["defaults.captureLines"])
	assert.Equal(t, "default", c.Sources["defaults.pollInterval"])
	assert.Equal(t, Agent{Preamble: "be brief", SettleMs: 200, Marker: true}, c.AgentFor("reviewer", "claude"), "role falls back to its agent kind")
}

func TestBadConfig(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"syntax error", "{\n  \"defaults\": {\n    \"timeout\": \"1s\",\n  }\n}", ":4:3: invalid character '}'"},
		{"wrong type", "{\n  \"defaults\": {\"captureLines\": \"many\"}\n}", ":2:37: defaults.captureLines must be int, not string"},
		{"out of bounds", "{\"review\": {\"maxIterations\": 0}}", ":1:30: review.maxIterations must be from 1 to 100, got 0"},
		{"not an object", `{"agents":{"claude":"x"}}`, "agents.claude must be an object"},
		{"settle too long", `{"agents":{"claude":{"settleMs":10001}}}`, "agents.claude.settleMs must be from 0 to 10000"},
		{"zero duration", `{"defaults":{"pollInterval":0}}`, "defaults.pollInterval must be from 10ms"},
		{"bad duration", `{"defaults":{"timeout":"soon"}}`, `bad duration "soon"`},
		{"bad preamble mode", `{"preambleMode":"sometimes"}`, `preambleMode must be always or disabled`},
		{"agent of the wrong type", `{"agents":{"claude":{"settleMs":"x"}}}`, `agents.claude`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			path := e.write(t, true, tt.content)
			_, _, err := Load(e.getenv, e.cwd)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalid)
			assert.Contains(t, err.Error(), path)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestUnknownKeysWarn(t *testing.T) {
	e := newEnv(t)
	path := e.write(t, true, `{"defaults":{"timeout":"1s","colour":"red"},"agents":{"claude":{"model":"x"}},"extra":1}`)
	c, warns, err := Load(e.getenv, e.cwd)
	require.NoError(t, err)
	assert.Equal(t, time.Second, c.Timeout)
	assert.Equal(t, []Warning{{File: path, Key: "agents.claude.model"}, {File: path, Key: "defaults.colour"}, {File: path, Key: "extra"}}, warns)
}

func TestSetGet(t *testing.T) {
	e := newEnv(t)
	_, local := Paths(e.getenv, e.cwd)
	e.write(t, true, `{"custom":{"keep":"me"},"defaults":{"captureLines":10}}`)
	require.NoError(t, Set(local, "defaults.timeout", "5s"))
	require.NoError(t, Set(local, "agents.codex.marker", "true"))
	require.NoError(t, Set(local, "relay.planner", "architect"))
	e.trust(t)
	c, _, err := Load(e.getenv, e.cwd)
	require.NoError(t, err)
	v, err := c.Get("defaults.timeout")
	require.NoError(t, err)
	assert.Equal(t, "5s", v)
	v, _ = c.Get("defaults.captureLines")
	assert.Equal(t, "10", v, "other keys kept")
	assert.True(t, c.Agents["codex"].Marker)
	assert.Equal(t, "architect", c.Planner)
	assert.Equal(t, "executor", c.Executor, "default")
	b, _ := os.ReadFile(local)
	assert.Contains(t, string(b), `"keep": "me"`, "unknown keys kept too")

	for _, bad := range [][2]string{{"defaults.timeout", "soon"}, {"preambleMode", "x"}, {"agents.a.settleMs", "-1"}, {"agents.a.marker", "yes please"}} {
		assert.ErrorIs(t, Set(local, bad[0], bad[1]), ErrInvalid, bad[0])
	}
	assert.ErrorIs(t, Set(local, "nope", "1"), ErrUnknownKey)
	_, err = c.Get("nope")
	assert.ErrorIs(t, err, ErrUnknownKey)

	g, _ := Paths(e.getenv, e.cwd)
	require.NoError(t, Set(g, "preambleMode", "always"), "creates the global file and its directory")
	c, _, err = Load(e.getenv, e.cwd)
	require.NoError(t, err)
	assert.Equal(t, "always", c.PreambleMode)
}

func TestUntrustedLocalFileIsInert(t *testing.T) {
	e := newEnv(t)
	e.write(t, false, `{"agents":{"claude":{"preamble":"mine"}}}`)
	l := e.write(t, true, `{"defaults":{"timeout":"5s"},"preambleMode":"always","relay":{"planner":"shell"},
		"agents":{"claude":{"command":"sh -c 'touch /tmp/p'","preamble":"theirs","settleMs":300,"marker":true}},
		"review":{"markerDir":"/etc","reviewer":"shell","maxIterations":5}}`)
	c, _, err := Load(e.getenv, e.cwd)
	require.NoError(t, err)
	assert.Equal(t, l, c.Local)
	assert.False(t, c.LocalTrusted)
	assert.Equal(t, []string{"agents.claude.command", "agents.claude.marker", "agents.claude.preamble",
		"preambleMode", "relay.planner", "review.markerDir", "review.reviewer"}, c.Ignored)
	assert.Equal(t, 5*time.Second, c.Timeout, "harmless keys apply")
	assert.Equal(t, 5, c.Review.MaxIterations)
	assert.Equal(t, Agent{Preamble: "mine", SettleMs: 300}, c.Agents["claude"])
	assert.Equal(t, "disabled", c.PreambleMode)
	assert.Equal(t, "planner", c.Planner)
	assert.Equal(t, "codex", c.Review.Reviewer)
	assert.Empty(t, c.Review.MarkerDir)

	e.trust(t)
	c, _, err = Load(e.getenv, e.cwd)
	require.NoError(t, err)
	assert.True(t, c.LocalTrusted)
	assert.Empty(t, c.Ignored)
	assert.Equal(t, "sh -c 'touch /tmp/p'", c.Agents["claude"].Command)

	// Any change needs trust again.
	e.write(t, true, `{"agents":{"claude":{"command":"other"}}}`)
	c, _, err = Load(e.getenv, e.cwd)
	require.NoError(t, err)
	assert.False(t, c.LocalTrusted)
	assert.Empty(t, c.Agents["claude"].Command)

	// The trust file is the user's alone.
	fi, err := os.Stat(TrustStoreFor(e.getenv).Path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	require.NoError(t, TrustStoreFor(e.getenv).Revoke(l))
}

// TestSetWritesOnlyWhatLoadTakes: every key, with good and bad values:
// Set refuses exactly what Load would refuse, and what it writes reads back.
func TestSetWritesOnlyWhatLoadTakes(t *testing.T) {
	values := []string{"", "0", "1", "-1", "5", "100", "101", "10000", "10001", "0s", "5ms", "500ms", "2s", "25h", "true",
		"x", "always", "-main", "/abs", "rel", "'unclosed", "a b"}
	for _, k := range Keys() {
		key := strings.Replace(k.Name, "*", "claude", 1)
		for _, v := range values {
			t.Run(key+"="+v, func(t *testing.T) {
				e := newEnv(t)
				global, path := Paths(e.getenv, e.cwd)
				if k.UserOnly {
					path = global // a repository's file is ignored
				}
				setErr := Set(path, key, v)
				if setErr != nil {
					assert.ErrorIs(t, setErr, ErrInvalid)
					return
				}
				if !k.UserOnly {
					e.trust(t)
				}
				c, _, err := Load(e.getenv, e.cwd)
				require.NoError(t, err, "Set wrote %s=%q, which Load refuses", key, v)
				assert.Equal(t, path, c.Sources[key])
			})
		}
	}
	e := newEnv(t)
	_, local := Paths(e.getenv, e.cwd)
	assert.ErrorIs(t, Set(local, "review.maxIterations", "0"), ErrInvalid)
	assert.ErrorIs(t, Set(local, "agents.claude.settleMs", "10001"), ErrInvalid)
	assert.ErrorIs(t, CheckFlag("--timeout", "defaults.timeout", 0), ErrInvalid)
	assert.NoError(t, CheckFlag("--timeout", "defaults.timeout", time.Second))
}

func TestPMKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, Set(path, "pm.storage", "github"))
	require.NoError(t, Set(path, "pm.repo", "partyhq/party"))
	assert.ErrorIs(t, Set(path, "pm.storage", "s3"), ErrInvalid)
	for _, bad := range []string{"party", "a/b/c", "-x/y", "o/..", "o/r;x", "https://github.com/o/r", "x-/y", "a--b/y"} {
		assert.ErrorIs(t, Set(path, "pm.repo", bad), ErrInvalid, bad)
	}
	c := Defaults()
	_, err := c.apply(path, mustRead(t, path), true)
	require.NoError(t, err)
	assert.Equal(t, PM{Storage: "github", Repo: "partyhq/party"}, c.PM)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func TestSettingsAsShown(t *testing.T) {
	c := Config{Sources: map[string]string{"defaults.timeout": "default"}}
	settings := c.Settings()
	require.NotEmpty(t, settings)
	keys := c.Keys()
	for i, s := range settings {
		assert.Equal(t, keys[i], s.Key, "in Keys order")
	}
	assert.Equal(t, []string{"k", "v", "-"}, Setting{Key: "k", Value: "v"}.Row(), "no source: -")
	assert.Equal(t, []string{"k", "v", "default"}, Setting{Key: "k", Value: "v", Source: "default"}.Row())
}

// A path that cannot be a config file is a config error (exit 2), found
// before anything of it is read: a FIFO would block the read, a huge file
// fill the memory.
func TestConfigFileThatCannotBeOne(t *testing.T) {
	tests := []struct {
		name  string
		make  func(t *testing.T, path string)
		want  string
		local bool
	}{
		{"over 1 MiB, though valid JSON", func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, []byte(`{"defaults":{"timeout":"5s"}}`+strings.Repeat(" ", MaxFileSize)), 0o644))
		}, "over the 1048576", true},
		{"a directory", func(t *testing.T, path string) { require.NoError(t, os.Mkdir(path, 0o755)) }, "a directory", true},
		{"a symlink loop", func(t *testing.T, path string) {
			require.NoError(t, os.Symlink(path+".b", path))
			require.NoError(t, os.Symlink(path, path+".b"))
		}, "too many levels of symbolic links", false},
		{"a FIFO", func(t *testing.T, path string) { require.NoError(t, syscall.Mkfifo(path, 0o644)) }, "not a regular file", false},
		{"under a file, not a directory", func(t *testing.T, path string) {
			dir := filepath.Dir(path)
			require.NoError(t, os.Remove(dir))
			require.NoError(t, os.WriteFile(dir, nil, 0o644))
		}, "not a directory", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			g, l := Paths(e.getenv, e.cwd)
			path := g
			if tt.local {
				path = l
			}
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			tt.make(t, path)
			done := make(chan error, 1)
			go func() { _, _, err := Load(e.getenv, e.cwd); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Load blocked reading the file")
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalid)
			assert.Contains(t, err.Error(), path)
			assert.Contains(t, err.Error(), tt.want)

			err = Set(path, "defaults.timeout", "5s")
			assert.ErrorIs(t, err, ErrInvalid, "config set refuses it too")
		})
	}
}

func TestUnreadableConfigFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads a file of mode 0")
	}
	e := newEnv(t)
	path := e.write(t, true, `{}`)
	require.NoError(t, os.Chmod(path, 0))
	_, _, err := Load(e.getenv, e.cwd)
	assert.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "permission denied")
}

// TestConcurrentSetsKeepEveryKey: sets of one file from many processes at
// once (here goroutines, each with its own lock file descriptor) are read,
// changed and written one at a time: none is lost.
func TestConcurrentSetsKeepEveryKey(t *testing.T) {
	e := newEnv(t)
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := SetIn(e.getenv, e.cwd, true, fmt.Sprintf("agents.r%d.preamble", i), "be brief", time.Now())
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	g, _ := Paths(e.getenv, e.cwd)
	b, err := os.ReadFile(g)
	require.NoError(t, err)
	for i := range 24 {
		assert.Contains(t, string(b), fmt.Sprintf(`"r%d"`, i))
	}
}

func TestPricesByModelNamesWithDots(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	require.NoError(t, Set(path, "price.gemini-3.8-flash.input", "0.3"))
	require.NoError(t, Set(path, "price.gemini-3.8-flash.output", "2.5"))
	require.NoError(t, Set(path, "price.claude-opus-4-8.cacheRead", "1.5"))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.JSONEq(t, `{"price":{"gemini-3.8-flash":{"input":0.3,"output":2.5},"claude-opus-4-8":{"cacheRead":1.5}}}`, string(b))

	c := Defaults()
	_, err = c.apply(path, b, true)
	require.NoError(t, err)
	assert.Equal(t, map[string]Price{"gemini-3.8-flash": {Input: 0.3, Output: 2.5, Set: PriceInput | PriceOutput},
		"claude-opus-4-8": {CacheRead: 1.5, Set: PriceCacheRead}}, c.Prices)
	assert.Equal(t, "", c.Flat()["price.gemini-3.8-flash.cacheRead"], "a kind without a price is none, not 0")
	assert.ErrorIs(t, Set(path, "price..input", "1"), ErrUnknownKey, "a name of nothing")
	assert.ErrorIs(t, Set(path, "agents..command", "x"), ErrUnknownKey)
	v, err := c.Get("price.gemini-3.8-flash.output")
	require.NoError(t, err)
	assert.Equal(t, "2.5", v)
	assert.Equal(t, "0.3", c.Flat()["price.gemini-3.8-flash.input"])

	for _, bad := range []string{"-1", "cheap", "NaN", "100001"} {
		assert.ErrorIs(t, Set(path, "price.m.input", bad), ErrInvalid, bad)
	}
	_, err = c.apply(path, []byte(`{"price":{"m":{"output":"2"}}}`), true)
	assert.ErrorContains(t, err, "must be number, not string")
	assert.ErrorIs(t, err, ErrInvalid)
}
