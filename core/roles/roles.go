package roles

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/partyhq/party/core/mux"
)

// Resolution errors. Each names its code (ROLE_AMBIGUOUS, ROLE_NOT_FOUND,
// ROUTING_UNRESOLVED) in its message.
var (
	ErrAmbiguous  = errors.New("ROLE_AMBIGUOUS")
	ErrNotFound   = errors.New("ROLE_NOT_FOUND")
	ErrUnresolved = errors.New("ROUTING_UNRESOLVED")
)

var roleName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ValidRole says whether role can name a pane: letters, digits, '_', '.'
// or '-', starting with a letter or digit, at most 64.
func ValidRole(role string) bool { return roleName.MatchString(role) }

// Legacy roles of a two-pane session without role metadata, by pane order.
var legacy = []string{"claude", "codex"}

// Resolve returns the one pane of panes whose role is role. Two or more
// such panes are ErrAmbiguous and none is ErrNotFound. Only when the
// session has exactly two panes and none carries role metadata does the
// legacy rule apply (claude = first pane, codex = second); any other
// session without metadata is ErrUnresolved. It never guesses.
func Resolve(panes []mux.Pane, role string) (mux.Pane, error) {
	var hits []mux.Pane
	tagged := false
	for _, p := range panes {
		if p.Role != "" {
			tagged = true
		}
		if p.Role == role {
			hits = append(hits, p)
		}
	}
	switch {
	case len(hits) == 1:
		return hits[0], nil
	case len(hits) > 1:
		ids := make([]string, len(hits))
		for i, p := range hits {
			ids[i] = p.ID
		}
		return mux.Pane{}, fmt.Errorf("role %q is on %d panes (%s): %w", role, len(hits), strings.Join(ids, ", "), ErrAmbiguous)
	case tagged:
		return mux.Pane{}, fmt.Errorf("no pane has role %q (roles: %s): %w", role, strings.Join(Names(panes), ", "), ErrNotFound)
	case len(panes) == 2:
		for i, r := range legacy {
			if r == role {
				return panes[i], nil
			}
		}
		return mux.Pane{}, fmt.Errorf("no pane has role %q (untagged 2-pane session knows only claude and codex): %w", role, ErrNotFound)
	default:
		return mux.Pane{}, fmt.Errorf("%d panes and none has a role; tag them with party start or @party_role: %w", len(panes), ErrUnresolved)
	}
}

// Names lists the distinct roles of panes in pane order.
func Names(panes []mux.Pane) []string {
	var roles []string
	seen := map[string]bool{}
	for _, p := range panes {
		if p.Role != "" && !seen[p.Role] {
			seen[p.Role] = true
			roles = append(roles, p.Role)
		}
	}
	return roles
}

// ByPane maps each tagged pane's id to its role.
func ByPane(panes []mux.Pane) map[string]string {
	m := map[string]string{}
	for _, p := range panes {
		if p.Role != "" {
			m[p.ID] = p.Role
		}
	}
	return m
}
