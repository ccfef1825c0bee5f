package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/state"
)

// GeminiMCPInstall is party's MCP server in a user's own Gemini settings
// (party mcp install gemini, for a Gemini started by hand): the same
// entries MergeGeminiMCP gives a folder at party start — mcpServers.party
// and the names Gemini's redaction must let through — merged into Path,
// and what was added recorded in Record, so that Uninstall takes out
// exactly that. Gemini's own gemini mcp add cannot write the allowed
// names, so party merges the file itself, under the settings' lock.
type GeminiMCPInstall struct {
	Path   string // the settings file: ~/.gemini/settings.json
	Record string // the record of what Install added, in party's state
	Root   string // party's state root, for the settings' lock
}

// geminiMCPInstallRecord is what GeminiMCPInstall.Install added to Path.
type geminiMCPInstallRecord struct {
	Path    string         `json:"path"`
	Created bool           `json:"created,omitempty"`  // party made the file
	DirMade bool           `json:"dir_made,omitempty"` // and its directory
	Added   GeminiMCPAdded `json:"added"`
	// Before is the file as it was: Uninstall puts these bytes back when
	// what is left is the same document (party rewrites it indented).
	Before string `json:"before,omitempty"`
}

// GeminiMCPChange is what Install or Uninstall did, or with a dry run
// would do.
type GeminiMCPChange struct {
	// Content is the settings document after the change.
	Content []byte
	Changed bool
	// Taken is the command of a server named party that is not party's
	// (not this command, and not recorded as party's): nothing was done.
	Taken string
	// Replaced is the command of such a server that force replaced (or
	// removed).
	Replaced string
}

// Install merges s into the settings file (MergeGeminiMCP). A server
// named party of another command is left alone and reported in Taken,
// unless force, which makes it party's. A dry run writes nothing.
func (g GeminiMCPInstall) Install(s GeminiMCP, force, dryRun bool) (GeminiMCPChange, error) {
	unlock, err := state.LockFile(g.Root, g.Path)
	if err != nil {
		return GeminiMCPChange{}, err
	}
	defer unlock()
	old, exists, err := readOptional(g.Path)
	if err != nil {
		return GeminiMCPChange{}, err
	}
	rec := g.record()
	merged, added, changed, err := MergeGeminiMCP(old, s, rec.Added)
	if err != nil {
		return GeminiMCPChange{}, fmt.Errorf("%s: %w: %w", g.Path, err, config.ErrInvalid)
	}
	var res GeminiMCPChange
	if added.Conflict != "" {
		if !force {
			return GeminiMCPChange{Content: old, Taken: added.Conflict}, nil
		}
		// Forced: the server there is taken as party's own.
		res.Replaced = added.Conflict
		prev := rec.Added
		prev.Server, prev.Command = true, added.Conflict
		if merged, added, changed, err = MergeGeminiMCP(old, s, prev); err != nil {
			return GeminiMCPChange{}, fmt.Errorf("%s: %w: %w", g.Path, err, config.ErrInvalid)
		}
	}
	res.Content, res.Changed = merged, changed
	if dryRun || !changed {
		return res, nil
	}
	switch {
	case !exists:
		rec = geminiMCPInstallRecord{Created: true}
		if _, err := os.Stat(filepath.Dir(g.Path)); errors.Is(err, fs.ErrNotExist) {
			rec.DirMade = true
		}
	case rec.Path == "":
		rec.Before = string(old)
	}
	rec.Path, rec.Added = g.Path, added
	if err := writeSettingsInPlace(g.Path, merged, exists); err != nil {
		return res, err
	}
	return res, g.writeRecord(rec)
}

// Uninstall takes out of the settings file what Install added: the
// server named party while it runs command (or the recorded command), the
// allowed names Install added, the objects it made, and the file and its
// directory when Install made them and nothing else is left. A server
// named party of another command is left alone and reported in Taken,
// unless force, which removes it too. Without a record (the server was
// added by hand as party's command) only the server goes.
func (g GeminiMCPInstall) Uninstall(command string, force, dryRun bool) (GeminiMCPChange, error) {
	unlock, err := state.LockFile(g.Root, g.Path)
	if err != nil {
		return GeminiMCPChange{}, err
	}
	defer unlock()
	old, exists, err := readOptional(g.Path)
	if err != nil || !exists {
		return GeminiMCPChange{}, err
	}
	rec := g.record()
	doc, err := settingsToEdit(old)
	if err != nil {
		return GeminiMCPChange{}, fmt.Errorf("%s: %w: %w", g.Path, err, config.ErrInvalid)
	}
	servers, _, err := child(doc, keyServers, keyServers)
	if err != nil {
		return GeminiMCPChange{}, fmt.Errorf("%s: %w: %w", g.Path, err, config.ErrInvalid)
	}
	var res GeminiMCPChange
	added := rec.Added
	if raw, ok := servers.get(GeminiMCPServerName); ok && !isNull(raw) {
		cur, err := parseObject(raw)
		if err != nil {
			return GeminiMCPChange{}, fmt.Errorf("%s: %s.%s: %w: %w", g.Path, keyServers, GeminiMCPServerName, err, config.ErrInvalid)
		}
		args, _ := cur.get("args")
		theirs := cur.str("command")
		switch {
		case added.Server && theirs == added.Command: // party's
		case theirs == command && jsonEqual(args, stringsJSON([]string{"mcp"})):
			// party mcp: Install's unless its record says the user had
			// it before.
			added.Server, added.Command = rec.Path == "", theirs
		case !force:
			return GeminiMCPChange{Content: old, Taken: theirs}, nil
		default:
			res.Replaced = theirs
			added.Server, added.Command = true, theirs
		}
	} else {
		added.Server = false
	}
	out, changed, empty, err := RemoveGeminiMCP(old, added)
	if err != nil {
		return GeminiMCPChange{}, fmt.Errorf("%s: %w: %w", g.Path, err, config.ErrInvalid)
	}
	res.Content, res.Changed = out, changed
	if dryRun {
		return res, nil
	}
	switch {
	case rec.Created && empty:
		if err := os.Remove(g.Path); err != nil {
			return res, err
		}
		if rec.DirMade {
			_ = os.Remove(filepath.Dir(g.Path)) // only when empty
		}
		res.Content = nil
	case changed:
		if rec.Before != "" && jsonEqual(out, json.RawMessage(rec.Before)) {
			out = []byte(rec.Before) // the user's bytes, as they were
			res.Content = out
		}
		if err := writeSettingsInPlace(g.Path, out, true); err != nil {
			return res, err
		}
	}
	if err := os.Remove(g.Record); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, err
	}
	return res, nil
}

// record is what Install recorded for this settings file: none when it
// recorded nothing, or for another file (HOME moved).
func (g GeminiMCPInstall) record() geminiMCPInstallRecord {
	var rec geminiMCPInstallRecord
	b, err := os.ReadFile(g.Record)
	if err != nil || json.Unmarshal(b, &rec) != nil || rec.Path != g.Path {
		return geminiMCPInstallRecord{}
	}
	rec.Added.Made = slices.Clone(rec.Added.Made)
	return rec
}

func (g GeminiMCPInstall) writeRecord(rec geminiMCPInstallRecord) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := state.MkdirPrivate(filepath.Dir(g.Record)); err != nil {
		return err
	}
	return state.WriteFile(g.Record, append(b, '\n'), 0o600)
}

// readOptional is the content of path, and whether it exists.
func readOptional(path string) ([]byte, bool, error) {
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return b, true, nil
}
