package cli

import (
	"context"
	"fmt"

	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/core/wait"
)

// newWatcher starts the wake-up sources of session (wait.Watch). With
// output false only hook events wake.
func newWatcher(ctx context.Context, f *Factory, tc *tmux.Client, session, stateDir string, output bool) (*wait.Watcher, error) {
	return wait.Watch(ctx, watchConfig(f, tc, session, stateDir, output))
}

// watchConfig is what wait.Watch needs from the CLI: the warning that
// waits fall back to polling goes to stderr.
func watchConfig(f *Factory, tc *tmux.Client, session, stateDir string, output bool) wait.WatchConfig {
	return wait.WatchConfig{Tmux: tc, Session: session, StateDir: stateDir, Getenv: f.Getenv, Output: output,
		Warn: func(err error) { fmt.Fprintf(f.IO.ErrOut, "party: no control-mode client (%v); polling\n", err) }}
}
