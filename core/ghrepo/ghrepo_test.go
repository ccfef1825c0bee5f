package ghrepo

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/partyhq/party/core/testhome"
)

func TestMain(m *testing.M) { os.Exit(testhome.Main(m)) }

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		repo string
		ok   bool
	}{
		{"acme/widgets", true},
		{"partyhq/party", true},
		{"my-org/my.repo_x", true},
		{"a1-b2-c3/x", true},
		{"A/.github", true},
		{"o/..x", true},
		{strings.Repeat("a", 39) + "/r", true},
		{"o/" + strings.Repeat("r", 100), true},

		{"", false},
		{"acme", false},
		{"acme/", false},
		{"/widgets", false},
		{"a/b/c", false},
		{"-x/y", false},       // owner starts with a hyphen
		{"x-/y", false},       // ends with one
		{"a--b/y", false},     // two in a row
		{"my_org/y", false},   // owners have no underscores
		{"my.org/y", false},   // nor dots
		{"../x", false},       // nor are . or ..
		{"o/.", false},        // name .
		{"o/..", false},       // name ..
		{"o/r;x", false},      // name charset
		{"o/wid gets", false}, // a space
		{"a/b?x=1", false},    // a query
		{"a/{repo}", false},   // a placeholder
		{"https://github.com/o/r", false},
		{strings.Repeat("a", 40) + "/r", false},
		{"o/" + strings.Repeat("r", 101), false},
	} {
		err := Check(tc.repo)
		if tc.ok {
			assert.NoError(t, err, tc.repo)
		} else {
			assert.Error(t, err, tc.repo)
		}
	}
}
