package party

import (
	"context"

	"github.com/partyhq/party/core/wait"
)

// Log calls emit with each line of the session's event log whose kind
// opts.Kind selects, and with opts.Follow each new one until ctx ends
// (wait.ReadLog); Log fills the rest of opts.
func Log(ctx context.Context, env *Env, opts wait.LogOptions, emit func(line []byte)) error {
	sc, err := env.OpenParty(ctx)
	if err != nil {
		return err
	}
	opts.StateDir, opts.Getenv, opts.Clock = sc.Info.StateDir, env.Getenv, env.Clock
	return wait.ReadLog(ctx, opts, emit)
}
