package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/tmux"
)

// scope is the session a command acts on, its party info and its panes,
// read with one tmux command.
type scope struct {
	Session string
	Info    tmux.SessionInfo
	Panes   []mux.Pane
}

// openScope picks the session a command acts on: --session, then
// $PARTY_SESSION, then the session of $TMUX_PANE, then the only party
// session on the server. Anything else fails listing the candidates.
func openScope(ctx context.Context, f *Factory, tc *tmux.Client) (scope, error) {
	snap, err := tc.Snapshot(ctx)
	if err != nil {
		return scope{}, err
	}
	name, err := pickSession(f, tc, snap)
	if err != nil {
		return scope{}, err
	}
	info, ok := snap.Session(name)
	if !ok {
		return scope{}, fmt.Errorf("session %q on %s: %w", name, tc.Socket, mux.ErrNoSession)
	}
	return scope{Session: name, Info: info, Panes: snap.PanesOf(name)}, nil
}

func pickSession(f *Factory, tc *tmux.Client, snap tmux.Snapshot) (string, error) {
	if f.Session != "" {
		return f.Session, nil
	}
	if s := f.Getenv("PARTY_SESSION"); s != "" {
		return s, nil
	}
	if p := f.Getenv("TMUX_PANE"); p != "" && f.Getenv("TMUX") != "" {
		for _, pane := range snap.Panes {
			if pane.ID == p {
				return pane.Session, nil
			}
		}
	}
	var party, all []string
	for _, s := range snap.Sessions {
		all = append(all, s.Name)
		if s.StateDir != "" {
			party = append(party, s.Name)
		}
	}
	sort.Strings(party)
	sort.Strings(all)
	switch {
	case len(party) == 1:
		return party[0], nil
	case len(party) > 1:
		return "", fmt.Errorf("%d party sessions on %s (%s); pick one with --session or PARTY_SESSION: %w",
			len(party), tc.Socket, strings.Join(party, ", "), errNoSession)
	case len(all) == 0:
		return "", fmt.Errorf("no party session on %s; start one with 'party start': %w", tc.Socket, errNoSession)
	}
	return "", fmt.Errorf("no party session on %s (other sessions: %s); use --session or PARTY_SESSION: %w",
		tc.Socket, strings.Join(all, ", "), errNoSession)
}

// resolveSession returns the name of the session a command acts on.
func resolveSession(ctx context.Context, f *Factory, tc *tmux.Client) (string, error) {
	s, err := openScope(ctx, f, tc)
	return s.Session, err
}

// openPartyScope is openScope for commands that need the session's state
// dir (its event log, relay steps): sessions party did not start have none.
func openPartyScope(ctx context.Context, f *Factory, tc *tmux.Client) (scope, error) {
	sc, err := openScope(ctx, f, tc)
	if err == nil && sc.Info.StateDir == "" {
		err = fmt.Errorf("session %s was not started by party (it has no state dir): %w", sc.Session, errNoSession)
	}
	return sc, err
}

// messageText is the text of a message: TEXT as given, or stdin for "-".
func messageText(f *Factory, text string, stdin bool) (string, error) {
	if !stdin {
		return text, nil
	}
	b, err := io.ReadAll(f.IO.In)
	if err != nil {
		return "", fmt.Errorf("read stdin: %w", err)
	}
	return string(b), nil
}
