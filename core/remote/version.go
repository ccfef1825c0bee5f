package remote

import (
	"runtime/debug"

	"github.com/partyhq/party/core/hosts"
)

// Version is this party's version: its module's, else the VCS revision
// it was built from ("+dirty" with uncommitted changes), else "devel".
// $PARTY_TEST_VERSION replaces it: tests only, to play a host that runs
// another party.
func Version(getenv func(string) string) string {
	if v := getenv("PARTY_TEST_VERSION"); v != "" {
		return v
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return "devel-" + rev
}

// VersionInfo is what party version prints.
type VersionInfo struct {
	Version string `json:"version"`
	Bridge  int    `json:"bridge"` // the API bridge's protocol (core/hosts)
}

// Versions is the version of the party of getenv and its bridge's
// protocol.
func Versions(getenv func(string) string) VersionInfo {
	return VersionInfo{Version: Version(getenv), Bridge: hosts.Protocol}
}
