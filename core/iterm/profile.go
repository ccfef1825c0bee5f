package iterm

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/partyhq/party/core/state"
)

// ProfileGUID is the Guid of the Party profile: fixed, so that installing
// again replaces the profile instead of adding another.
const ProfileGUID = "5C7E2A61-9D4B-4F0E-A7A3-3B1D9C6E2F10"

// ProfileName is the name of the profile in iTerm2's menus.
const ProfileName = "Party"

// Profile is one iTerm2 dynamic profile: the keys iTerm2 reads from a
// file in DynamicProfiles (the rest are taken from the default profile).
type Profile struct {
	Name    string   `json:"Name"`
	GUID    string   `json:"Guid"`
	Tags    []string `json:"Tags"`
	Custom  string   `json:"Custom Command"` // "Yes": run Command instead of a login shell
	Command string   `json:"Command"`
	// Dir "Recycle" starts the new tab in the working directory of the
	// tab it was opened from.
	Dir string `json:"Custom Directory"`
	// Close "Close Sessions On End": the tab closes when party returns
	// (detached or stopped).
	Close bool `json:"Close Sessions On End"`
}

// Profiles is the file iTerm2 reads: {"Profiles": [...]}.
type Profiles struct {
	Profiles []Profile `json:"Profiles"`
}

// NewProfiles is the dynamic profile file that runs exe start in the
// current tab's directory.
func NewProfiles(exe string) Profiles {
	return Profiles{Profiles: []Profile{{
		Name: ProfileName, GUID: ProfileGUID, Tags: []string{"party"},
		Custom: "Yes", Command: shellWord(exe) + " start", Dir: "Recycle", Close: true,
	}}}
}

// shellWord quotes s for the command line iTerm2 splits like a shell,
// when it needs it.
func shellWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ProfilePath is where iTerm2 looks for the profile under home.
func ProfilePath(home string) string {
	return filepath.Join(home, "Library", "Application Support", "iTerm2", "DynamicProfiles", "party.json")
}

// Marshal is the file's content, indented, ending in a newline.
func (p Profiles) Marshal() []byte {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		panic(err) // strings and bools only
	}
	return append(b, '\n')
}

// Install writes p to path atomically (iTerm2 reloads the directory on
// every change, and must never read half a file) and reports whether the
// content changed.
func Install(path string, p Profiles) (bool, error) {
	b := p.Marshal()
	if old, err := os.ReadFile(path); err == nil && string(old) == string(b) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, fmt.Errorf("iTerm2 profile: %w", err)
	}
	if err := state.WriteFile(path, b, 0o644); err != nil {
		return false, fmt.Errorf("iTerm2 profile: %w", err)
	}
	return true, nil
}

// KeyHelp is how to bind the keys a dynamic profile cannot set, for exe.
func KeyHelp(exe string) []string {
	return []string{
		"iTerm2 > Settings > Keys > Key Bindings > +:",
		"  Cmd+Shift+P: action \"New Tab with Profile\", profile \"" + ProfileName + "\" (starts a party in the current tab's directory)",
		// A coprocess's output is typed into the tab: none may come back.
		"  Cmd+Shift+K: action \"Run Coprocess\", command: " + shellWord(exe) + " stop >/dev/null 2>&1 (stops the party session; with several, add --session NAME)",
	}
}

// ProfileResult is what party iterm profile did.
type ProfileResult struct {
	Path      string   `json:"path"`
	Installed bool     `json:"installed"`
	Changed   bool     `json:"changed"`
	Profile   Profiles `json:"profile"`
	Keys      []string `json:"keys"`
}

// ProfileFor is the dynamic profile that runs exe, where iTerm2 reads it
// under home, with the keys it binds; with install it writes it there
// (Install).
func ProfileFor(exe, home string, install bool) (ProfileResult, error) {
	res := ProfileResult{Path: ProfilePath(home), Profile: NewProfiles(exe), Keys: KeyHelp(exe)}
	if !install {
		return res, nil
	}
	res.Installed = true
	var err error
	res.Changed, err = Install(res.Path, res.Profile)
	return res, err
}
