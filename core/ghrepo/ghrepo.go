package ghrepo

import (
	"fmt"
	"regexp"
	"strings"
)

var (
	// owner: alphanumerics and single hyphens, neither first nor last.
	owner = regexp.MustCompile(`^[A-Za-z0-9]+(-[A-Za-z0-9]+)*$`)
	// name: letters, digits, '_', '.', '-'.
	name = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
)

// Limits GitHub sets on the two halves.
const (
	MaxOwner = 39
	MaxName  = 100
)

// Check says why repo is not owner/name as GitHub allows it: the owner
// alphanumerics and single hyphens, not starting or ending with one, at most
// 39 characters; the name letters, digits, '_', '.' and '-', at most 100,
// and not "." or "..". It returns nil for a valid one.
func Check(repo string) error {
	o, n, ok := strings.Cut(repo, "/")
	switch {
	case !ok:
		return fmt.Errorf("want owner/name")
	case len(o) > MaxOwner || !owner.MatchString(o):
		return fmt.Errorf("owner %q: letters, digits and single hyphens, not first or last, at most %d", o, MaxOwner)
	case len(n) > MaxName || !name.MatchString(n) || n == "." || n == "..":
		return fmt.Errorf("name %q: letters, digits, '_', '.' or '-' (not . or ..), at most %d", n, MaxName)
	}
	return nil
}
