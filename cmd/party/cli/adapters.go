package cli

import (
	"fmt"

	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/core/wait"
)

// deliverer is the delivery protocol for a session of the server tc talks
// to (session.Deliverer).
func deliverer(f *Factory, tc *tmux.Client, root string, info tmux.SessionInfo, roles map[string]string) *deliver.Deliverer {
	return session.Deliverer(tc, f.Clock, f.Getenv, deliver.LockDir(root, info.SocketPath), info.StateDir, roles)
}

// watchConfig is what wait.Watch needs from the CLI: the warning that
// waits fall back to polling goes to stderr.
func watchConfig(f *Factory, tc *tmux.Client, session, stateDir string, output bool) wait.WatchConfig {
	return wait.WatchConfig{Tmux: tc, Session: session, StateDir: stateDir, Getenv: f.Getenv, Output: output,
		Warn: func(err error) { fmt.Fprintf(f.IO.ErrOut, "party: no control-mode client (%v); polling\n", err) }}
}
