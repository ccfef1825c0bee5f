package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/state"
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
