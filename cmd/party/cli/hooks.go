package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
)

// HooksInstallOptions are the inputs of party hooks install.
type HooksInstallOptions struct {
	User    bool // ~/.claude/settings.json
	Project bool // ./.claude/settings.json, the default
	DryRun  bool
}

// hooksInstallResult is what party hooks install --json prints.
type hooksInstallResult struct {
	Path    string `json:"path"`
	Backup  string `json:"backup"` // "" when no backup was written
	Changed bool   `json:"changed"`
	DryRun  bool   `json:"dry_run"`
	// Settings is the merged document, with --dry-run only.
	Settings json.RawMessage `json:"settings,omitempty"`
}

// backupTime is the format of the timestamp in a backup's name.
const backupTime = "20060102T150405Z"

func newHooksCmd(f *Factory, runF func(context.Context, *HooksInstallOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Install party's hooks in Claude Code's settings",
		Args:  argsBetween(0, 0),
	}
	opts := &HooksInstallOptions{}
	install := &cobra.Command{
		Use:   "install [--user|--project] [--dry-run]",
		Short: "Add party's hooks to a Claude Code settings.json",
		Long: `Merge party's hooks into Claude Code's settings.json: PreToolUse (matcher
Bash), PostToolUse (matcher *) and SessionStart, each running
"PARTY hook claude", where PARTY is this party binary. Every other setting
and every hook of yours is kept; party's own hooks are updated in place, so
running it again changes nothing.

--project (the default) writes ./.claude/settings.json, --user writes
~/.claude/settings.json. An existing file is first copied to
settings.json.bak-TIMESTAMP. A file that is not valid JSON is left alone.`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			if opts.User && opts.Project {
				return fmt.Errorf("%w: --user and --project cannot be used together", errUsage)
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return hooksInstallRun(f, opts)
		},
	}
	fl := install.Flags()
	fl.BoolVar(&opts.User, "user", false, "write ~/.claude/settings.json")
	fl.BoolVar(&opts.Project, "project", false, "write ./.claude/settings.json (default)")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "print the merged settings and write nothing")
	cmd.AddCommand(install)
	return cmd
}

// claudeSettingsPath is the settings file party hooks install writes.
func claudeSettingsPath(f *Factory, user bool) (string, error) {
	if user {
		home := f.Getenv("HOME")
		if home == "" {
			return "", fmt.Errorf("%w: --user: HOME is not set", errUsage)
		}
		return filepath.Join(home, ".claude", "settings.json"), nil
	}
	cwd, err := f.Getwd()
	if err != nil {
		return "", err
	}
	return filepath.Join(cwd, ".claude", "settings.json"), nil
}

func hooksInstallRun(f *Factory, opts *HooksInstallOptions) error {
	path, err := claudeSettingsPath(f, opts.User)
	if err != nil {
		return err
	}
	exe, err := exeForPanes()
	if err != nil {
		return err
	}
	old, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	merged, changed, err := hook.MergeClaudeSettings(old, hook.ShellQuote(exe)+" hook claude")
	if err != nil {
		return fmt.Errorf("%s: %w: %w", path, err, config.ErrInvalid)
	}
	res := hooksInstallResult{Path: path, Changed: changed, DryRun: opts.DryRun}
	switch {
	case opts.DryRun:
		res.Settings = merged
		if !f.JSON {
			_, _ = f.IO.Out.Write(merged)
			fmt.Fprintf(f.IO.ErrOut, "party: dry run: %s not written\n", path)
		}
	case !changed:
		fmt.Fprintf(f.IO.ErrOut, "party: hooks already installed in %s; nothing changed\n", path)
	default:
		if err := hook.CheckSettingsFile(path); err != nil {
			return err
		}
		if res.Backup, err = writeClaudeSettings(f, path, old, exists, merged); err != nil {
			return err
		}
		if !f.JSON {
			if res.Backup != "" {
				fmt.Fprintf(f.IO.Out, "installed party hooks in %s (backup: %s)\n", path, res.Backup)
			} else {
				fmt.Fprintf(f.IO.Out, "installed party hooks in %s\n", path)
			}
		}
	}
	if f.JSON {
		writeJSON(f.IO.Out, res)
	}
	return nil
}

// writeClaudeSettings backs up the old content of path (when it exists) and
// replaces it with merged, atomically, keeping its mode. A symlink is
// followed, so a settings file kept elsewhere stays where it is. It returns
// the backup's path.
func writeClaudeSettings(f *Factory, path string, old []byte, exists bool, merged []byte) (string, error) {
	if !exists {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		return "", state.WriteFile(path, merged, 0o644)
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(target)
	if err != nil {
		return "", err
	}
	stamp := path + ".bak-" + f.Clock.Now().UTC().Format(backupTime)
	backup := stamp
	// Never overwrite an older backup made in the same second.
	for i := 1; ; i++ {
		if _, err := os.Lstat(backup); errors.Is(err, fs.ErrNotExist) {
			break
		}
		backup = stamp + "." + strconv.Itoa(i)
	}
	if err := state.WriteFile(backup, old, 0o600); err != nil {
		return "", err
	}
	return backup, state.WriteFile(target, merged, fi.Mode().Perm())
}

// geminiHooksRecord is what party start wrote into a folder's Gemini
// settings, kept in the session's state dir (geminiHooksFile) so that
// party stop can take it out again.
type geminiHooksRecord struct {
	Path    string `json:"path"`    // the settings file
	Command string `json:"command"` // the hook command party wrote
	Created bool   `json:"created"` // the file did not exist before
	DirMade bool   `json:"dir_made"`
}

// geminiHooksFile is the record's name in a session's state dir.
const geminiHooksFile = "gemini-hooks.json"

// geminiSettingsPath is the project settings file of Gemini in dir.
func geminiSettingsPath(dir string) string { return filepath.Join(dir, ".gemini", "settings.json") }

// wireGemini puts party's Gemini hooks (BeforeAgent, AfterAgent,
// Notification running "party hook gemini") in cwd's .gemini/settings.json,
// merged with what is there, and records it in the state dir. It returns
// why the pane must fall back to the marker instead: Gemini does not trust
// the folder (it then runs no hooks), or the settings cannot be merged.
func wireGemini(f *Factory, stateDir, cwd string, argv []string) (fallback string, err error) {
	if !slices.Contains(argv, "--skip-trust") {
		if ok, why := hook.GeminiTrust(cwd, f.Getenv); !ok {
			return fmt.Sprintf("Gemini runs no hooks in a folder it does not trust, and it does not trust %s: %s", cwd, why), nil
		}
	}
	exe, err := exeForPanes()
	if err != nil {
		return "", err
	}
	command := hook.ShellQuote(exe) + " hook gemini"
	path := geminiSettingsPath(cwd)
	old, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("cannot read %s: %v", path, err), nil
	}
	merged, changed, err := hook.MergeGeminiSettings(old, command)
	if err != nil {
		return fmt.Sprintf("cannot add party's hooks to %s: %v", path, err), nil
	}
	rec := geminiHooksRecord{Path: path, Command: command, Created: !exists}
	if prev, err := readGeminiHooksRecord(stateDir); err == nil && prev.Path == path {
		rec.Created, rec.DirMade = prev.Created, prev.DirMade // a --replace keeps what the first start made
	}
	if changed {
		if err := hook.CheckSettingsFile(path); err != nil {
			return fmt.Sprintf("cannot add party's hooks: %v", err), nil
		}
		if _, err := os.Stat(filepath.Dir(path)); errors.Is(err, fs.ErrNotExist) {
			rec.DirMade = true
		}
		if err := writeSettingsInPlace(path, merged, exists); err != nil {
			return fmt.Sprintf("cannot write %s: %v", path, err), nil
		}
	}
	return "", writeJSONFile(filepath.Join(stateDir, geminiHooksFile), rec)
}

func readGeminiHooksRecord(stateDir string) (geminiHooksRecord, error) {
	var rec geminiHooksRecord
	b, err := os.ReadFile(filepath.Join(stateDir, geminiHooksFile))
	if err != nil {
		return rec, err
	}
	return rec, json.Unmarshal(b, &rec)
}

// unwireGemini takes party's Gemini hooks out of the settings file the
// session in stateDir wrote them to, unless another live party session
// wrote the same file: its Gemini still needs them when it restarts. A
// file party created and that holds nothing else is removed, with the
// .gemini directory party made. It reports what it did on stderr.
func unwireGemini(ctx context.Context, f *Factory, stateDir string) error {
	rec, err := readGeminiHooksRecord(stateDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if other := geminiHooksUser(ctx, f, stateDir, rec.Path); other != "" {
		fmt.Fprintf(f.IO.ErrOut, "party: kept party's Gemini hooks in %s: session %s uses them\n", rec.Path, other)
		return os.Remove(filepath.Join(stateDir, geminiHooksFile))
	}
	old, err := os.ReadFile(rec.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return os.Remove(filepath.Join(stateDir, geminiHooksFile))
	case err != nil:
		return err
	}
	out, changed, empty, err := hook.RemoveGeminiSettings(old, rec.Command)
	if err != nil {
		return fmt.Errorf("remove party's Gemini hooks from %s: %w", rec.Path, err)
	}
	switch {
	case rec.Created && empty:
		if err := os.Remove(rec.Path); err != nil {
			return err
		}
		if rec.DirMade {
			_ = os.Remove(filepath.Dir(rec.Path)) // only when empty
		}
	case changed:
		if err := writeSettingsInPlace(rec.Path, out, true); err != nil {
			return err
		}
	}
	return os.Remove(filepath.Join(stateDir, geminiHooksFile))
}

// geminiHooksUser names another party session that is still running and
// recorded Gemini hooks in path, or returns "".
func geminiHooksUser(ctx context.Context, f *Factory, stateDir, path string) string {
	recs, _ := filepath.Glob(filepath.Join(filepath.Dir(stateDir), "*", geminiHooksFile))
	for _, r := range recs {
		dir := filepath.Dir(r)
		if dir == stateDir {
			continue
		}
		if rec, err := readGeminiHooksRecord(dir); err != nil || rec.Path != path {
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
		c := f.Tmux()
		c.Socket = tmux.Socket{Path: s.Socket}
		if ok, err := c.HasSession(ctx, s.Session); err == nil && ok {
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
