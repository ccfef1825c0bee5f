package testhome

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Option changes what Main sets up.
type Option func(*setup)

type setup struct {
	keepAgentCache bool
}

// KeepAgentCache leaves XDG_CACHE_HOME at the real cache (resolving the
// default ~/.cache before HOME moves), for tests that drive the pinned real
// agents `make agents` installed there. Nothing but those installs is read
// from it.
func KeepAgentCache(s *setup) { s.keepAgentCache = true }

// leaky are the variables cleared besides every PARTY_* one: they point
// party, tmux or the agents at the developer's own servers and homes.
var leaky = []string{"TMUX", "TMUX_PANE", "CODEX_HOME", "GEMINI_CLI_HOME",
	"GEMINI_CLI_TRUSTED_FOLDERS_PATH", "GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_API_KEY"}

// Main runs the tests of m in a fresh HOME and returns m.Run's exit code,
// for `func TestMain(m *testing.M) { os.Exit(testhome.Main(m)) }`. Tests
// that need a home of their own still set it with t.Setenv.
func Main(m *testing.M, opts ...Option) int {
	var s setup
	for _, o := range opts {
		o(&s)
	}
	if os.Getenv(rootVar) != "" {
		// A helper process a test started from its own binary: it runs in
		// its parent's home, which the parent removes.
		return m.Run()
	}
	root, err := Enter(s.keepAgentCache)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testhome:", err)
		return 1
	}
	defer os.RemoveAll(root)
	return m.Run()
}

// rootVar names the temporary directory Main made, for the test binary's
// helper processes.
const rootVar = "TESTHOME_ROOT"

// Enter points this process's HOME, XDG_* and TMUX_TMPDIR at directories
// under a new temporary directory, which it returns, and clears the
// leaky variables. With keepCache, XDG_CACHE_HOME keeps naming the real
// cache.
func Enter(keepCache bool) (string, error) {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" && os.Getenv("HOME") != "" {
		cache = filepath.Join(os.Getenv("HOME"), ".cache")
	}
	root, err := os.MkdirTemp("", "party-test-home")
	if err != nil {
		return "", err
	}
	dirs := map[string]string{
		"HOME":            "home",
		"XDG_CONFIG_HOME": "config",
		"XDG_STATE_HOME":  "state",
		"XDG_DATA_HOME":   "data",
		"XDG_CACHE_HOME":  "cache",
		"XDG_RUNTIME_DIR": "run",
		"TMUX_TMPDIR":     "tmux",
	}
	for k, d := range dirs {
		p := filepath.Join(root, d)
		if err := os.Mkdir(p, 0o700); err != nil {
			os.RemoveAll(root)
			return "", err
		}
		if err := os.Setenv(k, p); err != nil {
			os.RemoveAll(root)
			return "", err
		}
	}
	if keepCache && cache != "" {
		if err := os.Setenv("XDG_CACHE_HOME", cache); err != nil {
			os.RemoveAll(root)
			return "", err
		}
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PARTY_") || slices.Contains(leaky, k) {
			if err := os.Unsetenv(k); err != nil {
				os.RemoveAll(root)
				return "", err
			}
		}
	}
	if err := os.Setenv(rootVar, root); err != nil {
		os.RemoveAll(root)
		return "", err
	}
	return root, nil
}
