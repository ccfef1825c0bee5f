package launch

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/partyhq/party/core/state"
)

// Subcommand is the hidden party command that runs a spec.
const Subcommand = "exec-spec"

// Spec is how to start one program.
type Spec struct {
	// Argv is the program and its arguments, exactly as they reach it.
	// Empty means the login shell: $SHELL as tmux set it, else /bin/sh.
	Argv []string
	// Env is KEY=VALUE set over the environment tmux gave the pane.
	Env []string
	// Dir is the working directory; empty keeps tmux's.
	Dir string
}

// ErrSpec is a spec file that cannot be used.
var ErrSpec = errors.New("bad launch spec")

// Command is the argv tmux runs for the spec at path: exe (the party
// binary) exec-spec path. Three words, so tmux execs them without a shell.
func Command(exe, path string) []string { return []string{exe, Subcommand, path} }

// Write stores s at path (mode 0600, written atomically; the directory is
// made 0700).
func Write(path string, s Spec) error {
	for _, a := range append(append([]string{s.Dir}, s.Argv...), s.Env...) {
		if strings.ContainsRune(a, 0) {
			return fmt.Errorf("launch %s: an argument holds a NUL byte: %w", path, ErrSpec)
		}
	}
	for _, kv := range s.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("launch %s: environment entry %q is not KEY=VALUE: %w", path, kv, ErrSpec)
		}
	}
	b, err := json.MarshalIndent(s.wire(), "", "  ")
	if err != nil {
		return err
	}
	if err := state.MkdirPrivate(filepath.Dir(path)); err != nil {
		return err
	}
	return state.WriteFile(path, append(b, '\n'), 0o600)
}

// Read loads the spec at path. The file must be a regular file (not a
// symlink) of this user that nobody else can write: it says what runs.
func Read(path string) (Spec, error) {
	var s Spec
	fi, err := os.Lstat(path)
	if err != nil {
		return s, fmt.Errorf("launch: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return s, fmt.Errorf("launch: %s is not a regular file: %w", path, ErrSpec)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return s, fmt.Errorf("launch: %s belongs to uid %d, not %d: %w", path, st.Uid, os.Getuid(), ErrSpec)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return s, fmt.Errorf("launch: %s is writable by others (mode %v): %w", path, fi.Mode().Perm(), ErrSpec)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return s, fmt.Errorf("launch: %w", err)
	}
	var w wireSpec
	if err := json.Unmarshal(b, &w); err != nil {
		return s, fmt.Errorf("launch: %s: %v: %w", path, err, ErrSpec)
	}
	return w.spec(), nil
}

// wireSpec is a Spec as stored: every string a word, so arguments that are
// not UTF-8 survive JSON.
type wireSpec struct {
	Argv []word `json:"argv"`
	Env  []word `json:"env,omitempty"`
	Dir  word   `json:"dir,omitempty"`
}

func (s Spec) wire() wireSpec {
	words := func(ss []string) []word {
		out := make([]word, len(ss))
		for i, v := range ss {
			out[i] = word(v)
		}
		return out
	}
	return wireSpec{Argv: words(s.Argv), Env: words(s.Env), Dir: word(s.Dir)}
}

func (w wireSpec) spec() Spec {
	strs := func(ws []word) []string {
		if ws == nil {
			return nil
		}
		out := make([]string, len(ws))
		for i, v := range ws {
			out[i] = string(v)
		}
		return out
	}
	return Spec{Argv: strs(w.Argv), Env: strs(w.Env), Dir: string(w.Dir)}
}

// word is a JSON string when it is UTF-8, else {"base64": "…"} (JSON
// would replace the bytes that are not).
type word string

// MarshalJSON implements json.Marshaler.
func (w word) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(w)) {
		return json.Marshal(string(w))
	}
	return json.Marshal(map[string]string{"base64": base64.StdEncoding.EncodeToString([]byte(w))})
}

// UnmarshalJSON implements json.Unmarshaler.
func (w *word) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*w = word(s)
		return nil
	}
	var o struct {
		Base64 *string `json:"base64"`
	}
	if err := json.Unmarshal(b, &o); err != nil || o.Base64 == nil {
		return fmt.Errorf("want a string or {\"base64\": …}, got %s", b)
	}
	d, err := base64.StdEncoding.DecodeString(*o.Base64)
	if err != nil {
		return err
	}
	*w = word(d)
	return nil
}

// Resolve returns what to exec for s in a process whose environment is
// environ: the program's path, its argv and its environment (environ with
// s.Env set over it). A program name without '/' is looked up on the
// resulting PATH; the login shell gets argv[0] "-NAME", as tmux gives it.
func (s Spec) Resolve(environ []string) (prog string, argv, env []string, err error) {
	env = mergeEnv(environ, s.Env)
	get := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if key, v, _ := strings.Cut(env[i], "="); key == k {
				return v
			}
		}
		return ""
	}
	if len(s.Argv) == 0 {
		sh := get("SHELL")
		if sh == "" || !filepath.IsAbs(sh) {
			sh = "/bin/sh"
		}
		return sh, []string{"-" + filepath.Base(sh)}, env, nil
	}
	prog = s.Argv[0]
	if !strings.Contains(prog, "/") {
		if prog, err = lookPath(prog, get("PATH")); err != nil {
			return "", nil, nil, err
		}
	}
	return prog, s.Argv, env, nil
}

// mergeEnv sets each KEY=VALUE of set over base, keeping base's order.
func mergeEnv(base, set []string) []string {
	out := make([]string, 0, len(base)+len(set))
	index := map[string]int{}
	for _, kv := range append(append([]string{}, base...), set...) {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := index[k]; ok {
			out[i] = kv
			continue
		}
		index[k] = len(out)
		out = append(out, kv)
	}
	return out
}

func lookPath(prog, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // never the current directory
		}
		p := filepath.Join(dir, prog)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("launch: %s not found on PATH: %w", prog, os.ErrNotExist)
}
