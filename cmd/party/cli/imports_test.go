package cli

import (
	"go/build"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allowedImports are the packages of this module the CLI may import: the
// operations (core/party), the one error table that turns their errors
// into codes and exit statuses (core/exitcode), and what prints their
// results. Everything else of core is reached through core/party, the one
// place that wires.
var allowedImports = map[string]bool{
	"github.com/partyhq/party/core/party":    true,
	"github.com/partyhq/party/core/exitcode": true, // Main's one errors.As chain
	"github.com/partyhq/party/core/termsafe": true, // printing what agents wrote
}

// allowedThirdParty are the modules outside the standard library the CLI
// may import: the command line and the terminal.
var allowedThirdParty = map[string]bool{
	"github.com/spf13/cobra": true,
	"github.com/spf13/pflag": true,
	"golang.org/x/term":      true,
}

// TestCLIImportsCorePartyOnly holds the CLI thin: its (non-test) files
// import core/party and printing helpers, never a lower package.
func TestCLIImportsCorePartyOnly(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	require.NoError(t, err)
	require.NotEmpty(t, pkg.Imports)
	for _, imp := range pkg.Imports {
		switch {
		case strings.HasPrefix(imp, "github.com/partyhq/party/"):
			assert.True(t, allowedImports[imp], "cmd/party/cli imports %s: reach it through core/party (or, for a printing helper, add it to allowedImports)", imp)
		case strings.Contains(strings.Split(imp, "/")[0], "."):
			assert.True(t, allowedThirdParty[imp], "cmd/party/cli imports %s, which is not among allowedThirdParty", imp)
		}
	}
}
