package iterm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/partyhq/party/core/tmux"
)

// ErrViewTaken is a session already named like a view of the session that
// party did not make.
var ErrViewTaken = errors.New("view session name taken")

// Tmux is what the view needs of the tmux client (*tmux.Client).
type Tmux interface {
	Run(ctx context.Context, args ...string) ([]byte, error)
	Query(ctx context.Context, fields []string, args ...string) ([][]string, error)
}

// ViewOption tags a view session with the session it shows.
const ViewOption = "@party_view_of"

// ViewName is the name of the view session of session.
func ViewName(session string) string { return session + "-iterm" }

// placeholder runs in the window a new session must have, until the
// session's windows are linked in and it is killed.
var placeholder = []string{"sleep", "86400"}

// View returns the id ($N) of the view session of session, made when
// missing: every window of session whose name is not in background,
// linked. A view that exists gets the windows it lacks. Each linked window
// follows its latest client's size.
func View(ctx context.Context, t Tmux, session string, background []string) (string, error) {
	wins, err := t.Query(ctx, []string{"#{window_id}", "#{window_name}"}, "list-windows", "-t", tmux.SessionTarget(session))
	if err != nil {
		return "", fmt.Errorf("windows of %s: %w", session, err)
	}
	var show []string
	for _, w := range wins {
		if !slices.Contains(background, w[1]) {
			show = append(show, w[0])
		}
	}
	if len(show) == 0 {
		return "", fmt.Errorf("session %s has no window to show", session)
	}
	id, err := findView(ctx, t, session)
	if err != nil {
		return "", err
	}
	have := map[string]bool{}
	made := ""
	if id == "" {
		out, err := t.Run(ctx, append([]string{"new-session", "-d", "-P", "-F", "#{session_id}#{window_id}",
			"-s", tmux.Literal(ViewName(session)), "--"}, placeholder...)...)
		if err != nil {
			return "", fmt.Errorf("view of %s: %w", session, err)
		}
		var ok bool
		if id, made, ok = strings.Cut(strings.TrimSpace(string(out)), "@"); !ok {
			return "", fmt.Errorf("view of %s: new-session printed %q", session, out)
		}
		made = "@" + made
		if _, err := t.Run(ctx, "set-option", "-t", id, ViewOption, session); err != nil {
			return "", fmt.Errorf("view of %s: %w", session, err)
		}
		// Set once a client is attached: set now, the server would
		// destroy the view at once.
		if _, err := t.Run(ctx, "set-hook", "-t", id, "client-attached", "set-option destroy-unattached on"); err != nil {
			return "", fmt.Errorf("view of %s: %w", session, err)
		}
	} else {
		rows, err := t.Query(ctx, []string{"#{window_id}"}, "list-windows", "-t", id)
		if err != nil {
			return "", fmt.Errorf("view of %s: %w", session, err)
		}
		for _, r := range rows {
			have[r[0]] = true
		}
	}
	for _, w := range show {
		if !have[w] {
			if _, err := t.Run(ctx, "link-window", "-d", "-s", w, "-t", id+":"); err != nil {
				return "", fmt.Errorf("view of %s: link window %s: %w", session, w, err)
			}
		}
		// The window takes the size of the client that used it last: the
		// iTerm2 window, and a plain client's again when one attaches.
		for _, opt := range [][2]string{{"window-size", "latest"}, {"aggressive-resize", "off"}} {
			if _, err := t.Run(ctx, "set-option", "-w", "-t", w, opt[0], opt[1]); err != nil {
				return "", fmt.Errorf("view of %s: size of window %s: %w", session, w, err)
			}
		}
	}
	if made != "" {
		if _, err := t.Run(ctx, "kill-window", "-t", made); err != nil {
			return "", fmt.Errorf("view of %s: %w", session, err)
		}
	}
	return id, nil
}

// findView is the id of the view session of session, "" when there is
// none; a session of the view's name that is not one is ErrViewTaken.
func findView(ctx context.Context, t Tmux, session string) (string, error) {
	rows, err := t.Query(ctx, []string{"#{session_id}", "#{session_name}", "#{" + ViewOption + "}"}, "list-sessions")
	if err != nil {
		return "", fmt.Errorf("sessions: %w", err)
	}
	for _, r := range rows {
		if r[2] == session {
			return r[0], nil
		}
	}
	for _, r := range rows {
		if r[1] == ViewName(session) {
			return "", fmt.Errorf("session %s exists and is not party's view of %s: %w", r[1], session, ErrViewTaken)
		}
	}
	return "", nil
}

// DropView kills the view sessions of session, if any: the windows they
// link would otherwise outlive it there.
func DropView(ctx context.Context, t Tmux, session string) error {
	rows, err := t.Query(ctx, []string{"#{session_id}", "#{" + ViewOption + "}"}, "list-sessions")
	if err != nil {
		return nil // no server, no view
	}
	for _, r := range rows {
		if r[1] == session {
			if _, err := t.Run(ctx, "kill-session", "-t", r[0]); err != nil {
				return fmt.Errorf("view of %s: %w", session, err)
			}
		}
	}
	return nil
}
