package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/tmux"
)

// resolveSession picks the session a command acts on: --session, then
// $PARTY_SESSION, then the session of $TMUX_PANE, then the only party
// session on the server. Anything else fails listing the candidates.
func resolveSession(ctx context.Context, f *Factory, tc *tmux.Client) (string, error) {
	if f.Session != "" {
		return f.Session, nil
	}
	if s := f.Getenv("PARTY_SESSION"); s != "" {
		return s, nil
	}
	if p := f.Getenv("TMUX_PANE"); p != "" && f.Getenv("TMUX") != "" {
		s, err := tc.PaneSession(ctx, p)
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, mux.ErrNoPane) && !errors.Is(err, mux.ErrNoServer) {
			return "", err
		}
	}
	sessions, err := tc.ListSessions(ctx)
	if err != nil {
		return "", err
	}
	var party, all []string
	for _, s := range sessions {
		all = append(all, s.Name)
		if s.StateDir != "" {
			party = append(party, s.Name)
		}
	}
	if len(party) == 1 {
		return party[0], nil
	}
	if len(party) > 1 {
		sort.Strings(party)
		return "", fmt.Errorf("%d party sessions on %s (%s); pick one with --session or PARTY_SESSION: %w",
			len(party), tc.Socket, strings.Join(party, ", "), errNoSession)
	}
	if len(all) == 0 {
		return "", fmt.Errorf("no party session on %s; start one with 'party start': %w", tc.Socket, errNoSession)
	}
	sort.Strings(all)
	return "", fmt.Errorf("no party session on %s (other sessions: %s); use --session or PARTY_SESSION: %w",
		tc.Socket, strings.Join(all, ", "), errNoSession)
}
