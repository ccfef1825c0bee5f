package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"golang.org/x/sys/unix"

	"github.com/partyhq/party/core/state"
)

// stringType is the JSON type a duration is written as.
var stringType = reflect.TypeOf("")

// A repository's ./.party/config.json is written by whoever wrote the
// repository. Until the user trusts it, the keys that could run a program
// or change what agents are sent (Key.Trusted) are ignored. Trust is the
// file's path and the sha256 of its content, kept in the user's state
// (trust.json, mode 0600): any change to the file needs trust again, as
// with direnv or mise.

// TrustStore records which config files the user trusted.
type TrustStore struct {
	Path string // the trust file
}

// TrustStoreFor is the user's trust store: trust.json in party's state
// root. Without a state root there is none, and nothing is trusted.
func TrustStoreFor(getenv func(string) string) TrustStore {
	root, err := state.Root(getenv)
	if err != nil {
		return TrustStore{}
	}
	return TrustStore{Path: filepath.Join(root, "trust.json")}
}

// trustFile is the trust store's content.
type trustFile struct {
	Files map[string]trustEntry `json:"files"`
}

type trustEntry struct {
	SHA256  string    `json:"sha256"`
	Trusted time.Time `json:"trusted"`
}

// Hash is the sha256 of content, in hex.
func Hash(content []byte) string {
	h := sha256.Sum256(content)
	return hex.EncodeToString(h[:])
}

// Trusted reports whether the file at path, holding content, was trusted
// as it is now.
func (t TrustStore) Trusted(path string, content []byte) (bool, error) {
	if t.Path == "" {
		return false, nil
	}
	f, err := t.read()
	if err != nil {
		return false, err
	}
	e, ok := f.Files[key(path)]
	return ok && e.SHA256 == Hash(content), nil
}

// Trust records the current content of the file at path as trusted, and
// returns its hash.
func (t TrustStore) Trust(path string, now time.Time) (string, error) {
	content, err := readFile(path)
	if err != nil {
		return "", err
	}
	h := Hash(content)
	return h, t.update(func(f *trustFile) { f.Files[key(path)] = trustEntry{SHA256: h, Trusted: now.UTC()} })
}

// Revoke forgets the trust of the file at path.
func (t TrustStore) Revoke(path string) error {
	return t.update(func(f *trustFile) { delete(f.Files, key(path)) })
}

// key is the absolute path a file is trusted under.
func key(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

func (t TrustStore) read() (trustFile, error) {
	f := trustFile{Files: map[string]trustEntry{}}
	b, err := os.ReadFile(t.Path)
	if errors.Is(err, os.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("trust: %w", err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("trust: %s: %v: %w", t.Path, err, ErrInvalid)
	}
	if f.Files == nil {
		f.Files = map[string]trustEntry{}
	}
	return f, nil
}

// update changes the trust file under a lock, atomically, mode 0600 in a
// 0700 directory.
func (t TrustStore) update(change func(*trustFile)) error {
	if t.Path == "" {
		return errors.New("trust: no state directory (set XDG_STATE_HOME or HOME)")
	}
	if err := state.MkdirPrivate(filepath.Dir(t.Path)); err != nil {
		return err
	}
	lock, err := os.OpenFile(t.Path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	f, err := t.read()
	if err != nil {
		return err
	}
	change(&f)
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return state.WriteFile(t.Path, append(b, '\n'), 0o600)
}

// KeepTrust runs write, which changes the repository file at path on the
// user's behalf (party config set, party agents): a file that was trusted,
// or that write creates, holds only the user's settings, so it stays
// trusted.
func (t TrustStore) KeepTrust(path string, now time.Time, write func() error) error {
	keep := false
	old, err := readFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		keep = true
	case err != nil:
		return err
	default:
		if keep, err = t.Trusted(path, old); err != nil {
			return err
		}
	}
	if err := write(); err != nil {
		return err
	}
	if keep {
		_, err = t.Trust(path, now)
	}
	return err
}

// TrustResult is one file party config trust trusted or forgot.
type TrustResult struct {
	File    string `json:"file"`
	Trusted bool   `json:"trusted"`
	SHA256  string `json:"sha256,omitempty"`
}

// String is the result as party config trust prints it.
func (t TrustResult) String() string {
	if !t.Trusted {
		return "no longer trusted: " + t.File
	}
	return fmt.Sprintf("trusted %s (sha256 %s)", t.File, t.SHA256)
}

// ErrNothingToTrust is party config trust where none of the files exists.
var ErrNothingToTrust = errors.New("nothing to trust")

// TrustFiles trusts each of paths that exists as it is now, or with
// revoke forgets the trust of every one. Trusting when none exists is
// ErrNothingToTrust.
func (t TrustStore) TrustFiles(paths []string, revoke bool, now time.Time) ([]TrustResult, error) {
	var out []TrustResult
	for _, path := range paths {
		if revoke {
			if err := t.Revoke(path); err != nil {
				return out, err
			}
			out = append(out, TrustResult{File: path})
			continue
		}
		if _, err := os.Stat(path); err != nil {
			continue
		}
		sum, err := t.Trust(path, now)
		if err != nil {
			return out, err
		}
		out = append(out, TrustResult{File: path, Trusted: true, SHA256: sum})
	}
	if !revoke && len(out) == 0 {
		return nil, ErrNothingToTrust
	}
	return out, nil
}

// SetIn sets key = value in the local config file of cwd, or with global
// in the global one, and returns the file's path. A local file the user
// trusted stays trusted (KeepTrust).
func SetIn(getenv func(string) string, cwd string, global bool, key, value string, now time.Time) (string, error) {
	g, l := Paths(getenv, cwd)
	path := l
	if global {
		path = g
	}
	if k, _, err := lookup(key); err == nil && k.UserOnly && !global {
		return l, fmt.Errorf("%s is read from your own config file only: set it with --global: %w", key, ErrInvalid)
	}
	// Two sets at once must not lose one: the file is read, changed and
	// written under its lock.
	root, err := state.Root(getenv)
	if err != nil {
		return path, err
	}
	unlock, err := state.LockFile(root, path)
	if err != nil {
		return path, err
	}
	defer unlock()
	if global {
		return g, Set(g, key, value)
	}
	return l, TrustStoreFor(getenv).KeepTrust(l, now, func() error { return Set(l, key, value) })
}
