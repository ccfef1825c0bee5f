package worktree

import (
	"os"
	"testing"

	"github.com/partyhq/party/core/testhome"
)

// TestMain runs the tests in a home of their own (testhome), with a git
// identity for the commits they make.
func TestMain(m *testing.M) {
	for k, v := range map[string]string{
		"GIT_AUTHOR_NAME": "Party Test", "GIT_AUTHOR_EMAIL": "test@party.invalid",
		"GIT_COMMITTER_NAME": "Party Test", "GIT_COMMITTER_EMAIL": "test@party.invalid",
		"GIT_CONFIG_NOSYSTEM": "1",
	} {
		if err := os.Setenv(k, v); err != nil {
			panic(err)
		}
	}
	os.Exit(testhome.Main(m))
}
