package session

import (
	"context"
	"strconv"

	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/launch"
)

// StartHidden runs argv in a new window of the session named window, with
// the panes' environment, so that it lives and dies with the session.
func StartHidden(ctx context.Context, d Deps, session, stateDir, window string, argv []string) error {
	spawn, err := Spawn(d.Exe, stateDir, window, launch.Spec{
		Env:  append(PaneEnv(d.Environ, session), "PARTY_STATE_DIR="+stateDir),
		Argv: argv})
	if err != nil {
		return err
	}
	_, err = d.Tmux.NewWindow(ctx, session, window, spawn)
	return err
}

// StartSwitchboard runs "party route" with hopLimit in a new window of the
// session (daemon.SwitchboardWindow) and returns the window's pane.
func StartSwitchboard(ctx context.Context, d Deps, session, stateDir string, hopLimit int) (string, error) {
	spawn, err := Spawn(d.Exe, stateDir, daemon.SwitchboardWindow, launch.Spec{
		Argv: []string{d.Exe, "--session", session, "route", "--hop-limit", strconv.Itoa(hopLimit)}})
	if err != nil {
		return "", err
	}
	return d.Tmux.NewWindow(ctx, session, daemon.SwitchboardWindow, spawn)
}
