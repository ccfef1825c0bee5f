package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/state"
)

// Installed is what InstallClaude did, as party hooks install --json
// prints it.
type Installed struct {
	Path    string `json:"path"`
	Backup  string `json:"backup"` // "" when no backup was written
	Changed bool   `json:"changed"`
	DryRun  bool   `json:"dry_run"`
	// Settings is the merged document, with a dry run only.
	Settings json.RawMessage `json:"settings,omitempty"`
}

// backupTime is the format of the timestamp in a backup's name.
const backupTime = "20060102T150405Z"

// InstallClaude merges party's hooks, running command, into the Claude
// Code settings file at path (MergeClaudeSettings). An existing file is
// first copied to settings.json.bak-TIMESTAMP (now); a dry run writes
// nothing and returns the merged settings. A file that is not valid JSON
// is config.ErrInvalid and left alone.
func InstallClaude(path, command string, dryRun bool, now time.Time) (Installed, error) {
	old, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Installed{}, err
	}
	merged, changed, err := MergeClaudeSettings(old, command)
	if err != nil {
		return Installed{}, fmt.Errorf("%s: %w: %w", path, err, config.ErrInvalid)
	}
	res := Installed{Path: path, Changed: changed, DryRun: dryRun}
	switch {
	case dryRun:
		res.Settings = merged
	case changed:
		if err := CheckSettingsFile(path); err != nil {
			return res, err
		}
		res.Backup, err = writeSettings(path, old, exists, merged, now)
	}
	return res, err
}

// writeSettings backs up the old content of path (when it exists) and
// replaces it with merged, atomically, keeping its mode. A symlink is
// followed, so a settings file kept elsewhere stays where it is. It returns
// the backup's path.
func writeSettings(path string, old []byte, exists bool, merged []byte, now time.Time) (string, error) {
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
	stamp := path + ".bak-" + now.UTC().Format(backupTime)
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

// AllowClaude adds rules to the permissions.allow of the Claude Code
// settings file at path (one party wrote for a session's claude panes,
// --settings: the user's settings are untouched), each once.
func AllowClaude(path string, rules ...string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	perms, _ := cfg["permissions"].(map[string]any)
	if perms == nil {
		perms = map[string]any{}
	}
	allow, _ := perms["allow"].([]any)
	for _, rule := range rules {
		if !slices.Contains(allow, any(rule)) {
			allow = append(allow, rule)
		}
	}
	perms["allow"], cfg["permissions"] = allow, perms
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return state.WriteFile(path, append(out, '\n'), 0o600)
}
