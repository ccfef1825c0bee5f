package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/partyhq/party/core/state"
)

// geminiHooksRecord is what party start wrote into a folder's Gemini
// settings, kept in the session's state dir (geminiHooksFile, or one per
// worktree pane) so that party stop can take it out again.
type geminiHooksRecord struct {
	Path    string `json:"path"`    // the settings file
	Command string `json:"command"` // the hook command party wrote
	Created bool   `json:"created"` // the file did not exist before
	DirMade bool   `json:"dir_made"`
	// Ignore says party wrote the .gitignore beside the settings, which
	// keeps its .gemini folder in a worktree out of git (WireWorktree).
	Ignore bool `json:"ignore,omitempty"`
	// MCP is what party added for its MCP server (MergeGeminiMCP); nil:
	// nothing.
	MCP *GeminiMCPAdded `json:"mcp,omitempty"`
}

// geminiHooksFile is the record's name in a session's state dir for the
// session's folder; a worktree pane's is geminiWorktreeRecord's.
const geminiHooksFile = "gemini-hooks.json"

// geminiRecords matches every record of a state dir.
const geminiRecords = "gemini-hooks*.json"

// geminiWorktreeRecord is the record of the gemini pane of role that runs
// in a worktree of its own.
func geminiWorktreeRecord(role string) string { return "gemini-hooks." + role + ".json" }

// geminiIgnore is the .gitignore party writes into the .gemini folder it
// makes in a worktree: it ignores the folder's files, itself included.
const geminiIgnore = "# party's Gemini hooks for this worktree's agent; gone at party stop\n*\n"

// GeminiWiring wires party's hooks into a folder's Gemini settings (it
// is core/session's session.GeminiHooks): Gemini has no flag for a
// settings file, so they go into the folder's .gemini/settings.json and
// come out again when the session stops.
type GeminiWiring struct {
	// Exe is the party binary the hooks run.
	Exe    string
	Getenv func(string) string
	// Live says whether the session name of the tmux server at socket
	// runs; nil: none does.
	Live func(ctx context.Context, socket, name string) bool
	// Warn gets what Unwire kept; nil drops it.
	Warn func(string)
}

// SettingsPath is the project settings file of Gemini in dir.
func (GeminiWiring) SettingsPath(dir string) string { return geminiSettingsPath(dir) }

// geminiSettingsPath is the project settings file of Gemini in dir.
func geminiSettingsPath(dir string) string { return filepath.Join(dir, ".gemini", "settings.json") }

// Wire puts party's Gemini hooks (BeforeAgent, AfterAgent,
// Notification running "party hook gemini") in cwd's .gemini/settings.json,
// merged with what is there, and, unless mcp is nil, party's MCP server
// with the variables it needs let through (MergeGeminiMCP), and records
// both in the state dir. The caller holds the settings' lock
// (state.LockFile; Start does). It returns why the pane must fall back to
// the marker instead: Gemini does not trust the folder (it then runs no
// hooks and no stdio MCP server), or the settings cannot be merged. That
// the MCP server could not be added (a server named party of the user's
// own, keys of another shape) goes to Warn: the hooks work without it.
func (g GeminiWiring) Wire(stateDir, cwd string, argv []string, mcp *GeminiMCP) (fallback string, err error) {
	if !slices.Contains(argv, "--skip-trust") {
		if ok, why := GeminiTrust(cwd, g.Getenv); !ok {
			return fmt.Sprintf("Gemini runs no hooks in a folder it does not trust (nor party's MCP server), and it does not trust %s: %s", cwd, why), nil
		}
	}
	return g.wire(filepath.Join(stateDir, geminiHooksFile), geminiSettingsPath(cwd), false, mcp)
}

// WireWorktree wires the gemini pane of role that runs in tree, its own
// git worktree of the repository in folder repo, as Wire does a folder,
// with two differences. The worktree takes the repository's trust: when
// Gemini trusts repo but not tree (party's worktrees live outside the
// repository), env is what the pane's environment needs for Gemini to
// trust it (GEMINI_CLI_TRUST_WORKSPACE=true). And party's settings must
// not be among the agent's changes: party makes the worktree's .gemini
// folder with a .gitignore that ignores it all, so a worktree whose
// .gemini is the repository's own falls back to the marker.
func (g GeminiWiring) WireWorktree(stateDir, role, tree, repo string, argv []string, mcp *GeminiMCP) (fallback string, env []string, err error) {
	if !slices.Contains(argv, "--skip-trust") {
		if ok, _ := GeminiTrust(tree, g.Getenv); !ok {
			if ok, why := GeminiTrust(repo, g.Getenv); !ok {
				return fmt.Sprintf("Gemini runs no hooks in a folder it does not trust (nor party's MCP server); a worktree takes the trust of its repository %s, which Gemini does not trust: %s", repo, why), nil, nil
			}
			env = []string{"GEMINI_CLI_TRUST_WORKSPACE=true"}
		}
	}
	record := filepath.Join(stateDir, geminiWorktreeRecord(role))
	path := geminiSettingsPath(tree)
	prev, err := readGeminiHooksRecord(record)
	ours := err == nil && prev.Path == path && prev.Ignore // a restore: the folder is still party's
	if _, err := os.Lstat(filepath.Dir(path)); err == nil && !ours {
		return fmt.Sprintf("the worktree has a .gemini folder of the repository's own (%s): party's settings in it would be among the agent's changes", filepath.Dir(path)), nil, nil
	}
	fallback, err = g.wire(record, path, true, mcp)
	if fallback != "" || err != nil {
		env = nil
	}
	return fallback, env, err
}

// wire merges party's hooks and MCP server (unless mcp is nil) into the
// settings file path and keeps what it added in the record file record;
// ignore makes a .gitignore beside the settings that hides the folder
// from git, when party makes the folder.
func (g GeminiWiring) wire(record, path string, ignore bool, mcp *GeminiMCP) (fallback string, err error) {
	command := ShellQuote(g.Exe) + " hook gemini"
	old, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("cannot read %s: %v", path, err), nil
	}
	merged, changed, err := MergeGeminiSettings(old, command)
	if err != nil {
		return fmt.Sprintf("cannot add party's hooks to %s: %v", path, err), nil
	}
	rec := geminiHooksRecord{Path: path, Command: command, Created: !exists}
	// What party added before, this session (a --replace, a restart after
	// a crash) or another in the same folder, is still party's: the last
	// session to stop takes it out.
	before := g.claims(filepath.Dir(record), path)
	rec.Created, rec.DirMade, rec.Ignore = rec.Created || before.Created, before.DirMade, before.Ignore
	if mcp != nil {
		out, added, ch, err := MergeGeminiMCP(merged, *mcp, ptrOr(before.MCP))
		switch {
		case err != nil:
			g.warn(fmt.Sprintf("gemini gets no party MCP server: cannot add it to %s: %v", path, err))
		case added.Conflict != "":
			g.warn(fmt.Sprintf("gemini gets no party MCP server: %s has a server named %s of its own (command %s), left as it is",
				path, GeminiMCPServerName, added.Conflict))
		default:
			merged, changed, rec.MCP = out, changed || ch, &added
		}
	} else {
		rec.MCP = before.MCP // taken out at stop
	}
	if changed {
		if err := CheckSettingsFile(path); err != nil {
			return fmt.Sprintf("cannot add party's hooks: %v", err), nil
		}
		if _, err := os.Stat(filepath.Dir(path)); errors.Is(err, fs.ErrNotExist) {
			rec.DirMade = true
			if ignore {
				// First, so that git never sees the settings.
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					return "", err
				}
				if err := state.WriteFile(filepath.Join(filepath.Dir(path), ".gitignore"), []byte(geminiIgnore), 0o644); err != nil {
					return "", err
				}
				rec.Ignore = true
			}
		}
		if err := writeSettingsInPlace(path, merged, exists); err != nil {
			return fmt.Sprintf("cannot write %s: %v", path, err), nil
		}
	}
	return "", writeGeminiHooksRecord(record, rec)
}

// claims is what the records of party sessions (stateDir's own and the
// others' in the same state root) say party added to the settings file
// path: made the file or its directory, added the MCP server and the
// allowed names.
func (g GeminiWiring) claims(stateDir, path string) geminiHooksRecord {
	var all geminiHooksRecord
	recs, _ := filepath.Glob(filepath.Join(filepath.Dir(stateDir), "*", geminiRecords))
	for _, r := range recs {
		rec, err := readGeminiHooksRecord(r)
		if err != nil || rec.Path != path {
			continue
		}
		all.Created, all.DirMade, all.Ignore = all.Created || rec.Created, all.DirMade || rec.DirMade, all.Ignore || rec.Ignore
		if rec.MCP == nil {
			continue
		}
		if all.MCP == nil {
			all.MCP = &GeminiMCPAdded{}
		}
		m := all.MCP
		if rec.MCP.Server && !m.Server {
			m.Server, m.Command = true, rec.MCP.Command
		}
		m.Allowed = union(m.Allowed, rec.MCP.Allowed)
		m.Made = union(m.Made, rec.MCP.Made)
	}
	return all
}

// union is a with the strings of b it lacks appended.
func union(a, b []string) []string {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}

// ptrOr is *p, or T's zero value when p is nil.
func ptrOr[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// warn hands msg to Warn, when there is one.
func (g GeminiWiring) warn(msg string) {
	if g.Warn != nil {
		g.Warn(msg)
	}
}

func writeGeminiHooksRecord(path string, rec geminiHooksRecord) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rec); err != nil {
		return err
	}
	return state.WriteFile(path, b.Bytes(), 0o600)
}

func readGeminiHooksRecord(path string) (geminiHooksRecord, error) {
	var rec geminiHooksRecord
	b, err := os.ReadFile(path)
	if err != nil {
		return rec, err
	}
	return rec, json.Unmarshal(b, &rec)
}

// Unwire takes party's Gemini hooks, and what it added for its MCP
// server, out of the settings files the session in stateDir wrote them to
// (its folder's and its worktree panes'), unless another live party
// session wrote the same file: its Gemini still needs them when it
// restarts. A file party created and that holds nothing else is removed,
// with the .gemini directory (and its .gitignore) party made. It reports
// what it kept through Warn.
func (g GeminiWiring) Unwire(ctx context.Context, stateDir string) error {
	recs, err := filepath.Glob(filepath.Join(stateDir, geminiRecords))
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range recs {
		errs = append(errs, g.unwire(ctx, stateDir, r))
	}
	return errors.Join(errs...)
}

// unwire takes out what the record file record says the session in
// stateDir added.
func (g GeminiWiring) unwire(ctx context.Context, stateDir, record string) error {
	rec, err := readGeminiHooksRecord(record)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	// Under the settings' lock: a party start in the folder holds it
	// until its session is live (Start), so it is either seen below or
	// adds its hooks again after.
	root, err := state.Root(g.Getenv)
	if err != nil {
		return err
	}
	unlock, err := state.LockFile(root, rec.Path)
	if err != nil {
		return err
	}
	defer unlock()
	if other := g.user(ctx, stateDir, rec.Path); other != "" {
		g.warn(fmt.Sprintf("kept party's Gemini hooks in %s: session %s uses them", rec.Path, other))
		return os.Remove(record)
	}
	old, err := os.ReadFile(rec.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return os.Remove(record)
	case err != nil:
		return err
	}
	out, changed, empty, err := RemoveGeminiSettings(old, rec.Command)
	if err != nil {
		return fmt.Errorf("remove party's Gemini hooks from %s: %w", rec.Path, err)
	}
	if rec.MCP != nil {
		var ch bool
		if out, ch, empty, err = RemoveGeminiMCP(out, *rec.MCP); err != nil {
			return fmt.Errorf("remove party's MCP server from %s: %w", rec.Path, err)
		}
		changed = changed || ch
	}
	switch {
	case rec.Created && empty:
		if err := os.Remove(rec.Path); err != nil {
			return err
		}
		folder := filepath.Dir(rec.Path)
		ignore := filepath.Join(folder, ".gitignore")
		if b, err := os.ReadFile(ignore); rec.Ignore && err == nil && string(b) == geminiIgnore {
			_ = os.Remove(ignore)
		}
		if rec.DirMade {
			_ = os.Remove(folder) // only when empty
		}
	case changed:
		if err := writeSettingsInPlace(rec.Path, out, true); err != nil {
			return err
		}
	}
	return os.Remove(record)
}

// user names another party session that is still running and
// recorded Gemini hooks in path, or returns "".
func (g GeminiWiring) user(ctx context.Context, stateDir, path string) string {
	if g.Live == nil {
		return ""
	}
	recs, _ := filepath.Glob(filepath.Join(filepath.Dir(stateDir), "*", geminiRecords))
	for _, r := range recs {
		dir := filepath.Dir(r)
		if dir == stateDir {
			continue
		}
		if rec, err := readGeminiHooksRecord(r); err != nil || rec.Path != path {
			continue
		}
		var s struct {
			Session string `json:"session"`
			Socket  string `json:"socket"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "session.json"))
		if err != nil || json.Unmarshal(b, &s) != nil || s.Socket == "" {
			continue
		}
		if g.Live(ctx, s.Socket, s.Session) {
			return s.Session
		}
	}
	return ""
}

// writeSettingsInPlace replaces the settings file path with content,
// atomically, following a symlink and keeping the file's mode; a missing
// file is made (0644) with its directory.
func writeSettingsInPlace(path string, content []byte, exists bool) error {
	if !exists {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		return state.WriteFile(path, content, 0o644)
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(target)
	if err != nil {
		return err
	}
	return state.WriteFile(target, content, fi.Mode().Perm())
}
