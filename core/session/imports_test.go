package session

import (
	"go/build"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSessionImportsNoLoop: core/session starts and stops sessions; what
// the review loop and the supervisor do when one starts comes through
// Deps (PrepareReview, Coordinator), and the runtime tokens are its own.
func TestSessionImportsNoLoop(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	require.NoError(t, err)
	require.NotEmpty(t, pkg.Imports)
	for _, bad := range []string{"core/review", "core/supervise", "core/party"} {
		assert.NotContains(t, pkg.Imports, "github.com/partyhq/party/"+bad)
	}
}
