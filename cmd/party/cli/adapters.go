package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/core/wait"
)

// runWith runs a command with its options: a test's runF when set, else
// the command's run func.
func runWith[O any](c *cobra.Command, f *Factory, opts *O, runF func(context.Context, *O) error, run func(context.Context, *Factory, *O) error) error {
	if runF != nil {
		return runF(c.Context(), opts)
	}
	return run(c.Context(), f, opts)
}

// printResult prints v with --json, else format with args.
func printResult(f *Factory, v any, format string, args ...any) error {
	if f.JSON {
		writeJSON(f.IO.Out, v)
	} else {
		fmt.Fprintf(f.IO.Out, format, args...)
	}
	return nil
}

// deliverer is the delivery protocol for a session of the server tc talks
// to (session.Deliverer).
func deliverer(f *Factory, tc *tmux.Client, root string, info tmux.SessionInfo, roles map[string]string) *deliver.Deliverer {
	return session.Deliverer(tc, f.Clock, f.Getenv, lockDir(root, info.SocketPath), info.StateDir, roles)
}

// watchConfig is what wait.Watch needs from the CLI: the warning that
// waits fall back to polling goes to stderr.
func watchConfig(f *Factory, tc *tmux.Client, session, stateDir string, output bool) wait.WatchConfig {
	return wait.WatchConfig{Tmux: tc, Session: session, StateDir: stateDir, Getenv: f.Getenv, Output: output,
		Warn: func(err error) { fmt.Fprintf(f.IO.ErrOut, "party: no control-mode client (%v); polling\n", err) }}
}
