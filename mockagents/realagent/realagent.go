// Package realagent is party's handle on the REAL agent CLIs (Claude Code,
// Codex CLI, Gemini CLI) that the real_* scenarios drive: the versions
// pinned by the lock in this directory (package.json and its
// package-lock.json, embedded), where `make agents` installs them
// (Dir, Bin, Install), the seed files and environment that let each one
// start offline against a local fake model and reach its idle prompt with
// no dialog (Seed, after docs/agents-reference.md §1), and the reaping of
// every process a test started (Reap).
//
// A missing install is an error that says to run `make agents`, never a
// reason to skip.
package realagent

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// The agent kinds; each is also the name of the agent's binary.
const (
	Claude = "claude"
	Codex  = "codex"
	Gemini = "gemini"
)

var (
	// ErrUnknownKind is returned for a kind other than claude, codex and
	// gemini.
	ErrUnknownKind = errors.New("unknown agent kind")
	// ErrNotInstalled is returned when the pinned agents are not
	// installed for the current lock.
	ErrNotInstalled = errors.New("real agents not installed")
)

//go:embed package.json
var packageJSON []byte

//go:embed package-lock.json
var packageLock []byte

// packages maps each kind to its npm package.
var packages = map[string]string{
	Claude: "@anthropic-ai/claude-code",
	Codex:  "@openai/codex",
	Gemini: "@google/gemini-cli",
}

// stampName is the file an install writes last; a directory without it is
// not installed. .ci/need-agents writes the same file.
const stampName = ".party-installed"

// Pin is one pinned agent.
type Pin struct {
	Kind    string // claude, codex or gemini
	Package string // its npm package
	Version string // the exact version in package.json
}

// Pins returns the pinned agents, ordered by kind.
func Pins() []Pin {
	var manifest struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(packageJSON, &manifest); err != nil {
		panic("realagent: embedded package.json: " + err.Error())
	}
	var pins []Pin
	for kind, pkg := range packages {
		pins = append(pins, Pin{Kind: kind, Package: pkg, Version: manifest.Dependencies[pkg]})
	}
	sort.Slice(pins, func(i, j int) bool { return pins[i].Kind < pins[j].Kind })
	return pins
}

// Version returns the pinned version of the agent kind.
func Version(kind string) (string, error) {
	for _, p := range Pins() {
		if p.Kind == kind {
			return p.Version, nil
		}
	}
	return "", fmt.Errorf("%w %q (want claude, codex or gemini)", ErrUnknownKind, kind)
}

// LockHash is the short hash of the embedded package-lock.json that names
// the install directory: a new lock installs beside the old one.
func LockHash() string {
	sum := sha256.Sum256(packageLock)
	return hex.EncodeToString(sum[:])[:12]
}

// Dir returns the install directory of the current lock:
// $XDG_CACHE_HOME/party/agents/<LockHash> (default ~/.cache).
func Dir() (string, error) {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home := os.Getenv("HOME")
		if home == "" {
			return "", errors.New("realagent: neither XDG_CACHE_HOME nor HOME is set")
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "party", "agents", LockHash()), nil
}

// BinDir returns the directory holding the pinned agents' binaries, named
// by kind, after checking they are installed.
func BinDir() (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, stampName)); err != nil {
		var pins []string
		for _, p := range Pins() {
			pins = append(pins, p.Package+"@"+p.Version)
		}
		return "", fmt.Errorf("%w: %s has no install of %s (no %s); run `make agents`",
			ErrNotInstalled, dir, strings.Join(pins, ", "), stampName)
	}
	return filepath.Join(dir, "node_modules", ".bin"), nil
}

// Bin returns the path of the pinned binary of the agent kind.
func Bin(kind string) (string, error) {
	version, err := Version(kind)
	if err != nil {
		return "", err
	}
	bin, err := BinDir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(bin, kind)
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%w: %s %s: %s is missing; run `make agents`", ErrNotInstalled, kind, version, path)
	}
	return path, nil
}

// Install installs the pinned agents into Dir, as `make agents`
// (.ci/need-agents) does: npm ci without install scripts in a temporary
// directory beside Dir, Claude Code's own install.cjs (it links the
// native binary over the placeholder), each binary's --version checked
// against its pin, the stamp, and a rename into place. It does nothing
// when Dir is installed already. It needs node (20 or newer) and npm on
// PATH.
func Install(ctx context.Context) error {
	dir, err := Dir()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, stampName)); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, ".install-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"package.json": packageJSON, "package-lock.json": packageLock} {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return err
		}
	}
	steps := [][]string{
		{"npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"},
		{"node", filepath.Join("node_modules", "@anthropic-ai", "claude-code", "install.cjs")},
	}
	for _, argv := range steps {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = tmp
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("realagent: install: %s: %w\n%s", strings.Join(argv, " "), err, out)
		}
	}
	home := filepath.Join(tmp, ".version-home")
	if err := os.Mkdir(home, 0o700); err != nil {
		return err
	}
	for _, p := range Pins() {
		cmd := exec.CommandContext(ctx, filepath.Join(tmp, "node_modules", ".bin", p.Kind), "--version")
		cmd.Env = append(os.Environ(), "HOME="+home)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("realagent: install: %s --version: %w\n%s", p.Kind, err, out)
		}
		if !hasVersion(out, p.Version) {
			return fmt.Errorf("realagent: install: %s --version printed %q, want %s", p.Kind, out, p.Version)
		}
	}
	if err := os.RemoveAll(home); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, stampName), []byte(LockHash()+"\n"), 0o644); err != nil {
		return err
	}
	// A directory left by an interrupted install has no stamp: replace it.
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, stampName)); serr == nil {
			return nil // another install won the race
		}
		return err
	}
	return nil
}

// hasVersion reports whether out holds version as a whole word of digits
// and dots ("2.1.197 (Claude Code)", "codex-cli 0.169.0").
func hasVersion(out []byte, version string) bool {
	isVer := func(c byte) bool { return c == '.' || c >= '0' && c <= '9' }
	for i := 0; ; {
		j := bytes.Index(out[i:], []byte(version))
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(version)
		if (start == 0 || !isVer(out[start-1])) && (end == len(out) || !isVer(out[end])) {
			return true
		}
		i = start + 1
	}
}
