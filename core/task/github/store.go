package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/task"
)

// Config says where a team's tasks live on GitHub.
type Config struct {
	Dir  string // the team's dir under the state root (id-map.json lives there)
	Team task.Team
	Repo string   // owner/name
	Gh   string   // the gh binary ("gh" when empty; else an absolute path)
	Env  []string // gh's environment (nil: this process's)
	Now  func() time.Time
	// Clock paces the wait for the team's lock (nil: the real one).
	Clock clock.Clock
	// Warn reports what a command leaves out (an issue gone from GitHub).
	Warn func(string)
	// Runner runs gh (nil: the gh binary Gh names, with Env, found on
	// PATH's absolute directories); tests give fakegithub.Gh.
	Runner Runner
}

// store is the GitHub store.
type store struct {
	c      Config
	gh     Runner
	locker state.Locker

	mu sync.Mutex
	// labels are the repository's labels once listed (lower-cased name
	// -> true).
	labels map[string]bool
	// login is the GitHub user gh is authenticated as, once asked.
	login string
}

// user is the login of the GitHub user gh is authenticated as (GET /user,
// once per store): the author of party's comments.
func (g *store) user(ctx context.Context) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.login != "" {
		return g.login, nil
	}
	var u struct {
		Login string `json:"login"`
	}
	if err := g.api(ctx, "GET", "user", nil, &u); err != nil {
		return "", fmt.Errorf("github store: who gh is logged in as: %w", err)
	}
	if u.Login == "" {
		return "", fmt.Errorf("github store: GET /user named no login: %w", task.ErrUnavailable)
	}
	g.login = u.Login
	return g.login, nil
}

// New opens the team's store on GitHub. It fails at once, with
// ErrUnavailable, when gh is missing, GitHub refuses its credentials or
// cannot be reached; with ErrNotFound when the repository does not exist.
func New(ctx context.Context, c Config) (task.Store, error) {
	if err := CheckRepo(c.Repo); err != nil {
		return nil, err
	}
	if c.Runner == nil {
		if c.Gh == "" {
			c.Gh = "gh"
		}
		bin, err := LookGh(c.Gh, c.Env)
		if err != nil {
			return nil, fmt.Errorf("github store: %s not found in PATH's absolute directories (install the GitHub CLI, https://cli.github.com): %w", c.Gh, task.ErrUnavailable)
		}
		c.Runner = execRunner{bin: bin, env: c.Env}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if err := state.MkdirPrivate(c.Dir); err != nil {
		return nil, err
	}
	g := &store{c: c, gh: c.Runner,
		locker: state.Locker{Dir: filepath.Join(c.Dir, "locks")}}
	if err := g.api(ctx, "GET", g.repoPath(""), nil, nil); err != nil {
		if errors.Is(err, task.ErrNotFound) {
			return nil, fmt.Errorf("github store: repository %s not found (or gh's token cannot see it): %w", c.Repo, err)
		}
		return nil, fmt.Errorf("github store %s: %w", c.Repo, err)
	}
	return g, nil
}

func (g *store) repoPath(rest string) string {
	if rest == "" {
		return "repos/" + g.c.Repo
	}
	return "repos/" + g.c.Repo + "/" + rest
}

// api runs gh api METHOD PATH with body as JSON on stdin and decodes the
// answer into out (either may be nil).
func (g *store) api(ctx context.Context, method, path string, body, out any) error {
	args := []string{"api", "-X", method, path}
	var stdin []byte
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		stdin = b
		args = append(args, "--input", "-")
	}
	stdout, err := run(ctx, g.gh, args, stdin)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		return fmt.Errorf("gh %s: the answer is not the JSON expected: %w", strings.Join(args, " "), err)
	}
	return nil
}

// list runs gh api --paginate on a list and decodes every item into a
// new T. gh prints the pages as one array or as arrays one after the
// other, depending on its version: both are read.
func list[T any](ctx context.Context, g *store, path string) ([]T, error) {
	args := []string{"api", "--paginate", path}
	stdout, err := run(ctx, g.gh, args, nil)
	if err != nil {
		return nil, err
	}
	var out []T
	dec := json.NewDecoder(bytes.NewReader(stdout))
	for dec.More() {
		var page []T
		if err := dec.Decode(&page); err != nil {
			return nil, fmt.Errorf("gh %s: the answer is not the JSON list expected: %w", strings.Join(args, " "), err)
		}
		out = append(out, page...)
	}
	return out, nil
}

func (g *store) idMapPath() string        { return filepath.Join(g.c.Dir, "id-map.json") }
func (g *store) milestoneMapPath() string { return filepath.Join(g.c.Dir, "milestone-map.json") }
func (g *store) eventsPath() string       { return filepath.Join(g.c.Dir, "events.jsonl") }

// readMap reads a JSON map file; a missing file is an empty map, a file
// that does not parse is ErrCorrupt with its path.
func readMap[T any](path string) (map[string]T, error) {
	m := map[string]T{}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %v: %w", path, err, task.ErrCorrupt)
	}
	return m, nil
}

func writeMap[T any](path string, m map[string]T) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return state.WriteFile(path, append(b, '\n'), 0o600)
}

// lock serializes the writers of the team's maps across processes.
func (g *store) lock(ctx context.Context) (func(), error) {
	return g.locker.Lock(ctx, "github-store")
}

func (g *store) event(e task.Event) error {
	if e.TS.IsZero() {
		e.TS = g.now()
	}
	// A torn last line is moved aside, never glued onto (AppendEvents).
	if _, err := task.AppendEvents(g.eventsPath(), []task.Event{e}); err != nil {
		return fmt.Errorf("github store: %w", err)
	}
	return nil
}

// now is the time of a change, to the second (GitHub's precision, and
// what the comments show).
func (g *store) now() time.Time { return g.c.Now().UTC().Truncate(time.Second) }

func (g *store) Team(context.Context) (task.Team, error) { return g.c.Team, nil }
