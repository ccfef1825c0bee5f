package party

import (
	"context"

	"github.com/partyhq/party/core/supervise"
)

// openDoor is the API of the supervisor of the session the command acts
// on (supervisorScope), called as the command's caller: the runtime of
// $PARTY_RUNTIME_TOKEN (inside an agent's pane), else the operator.
func openDoor(ctx context.Context, env *Env) (*supervise.Door, error) {
	stateDir, _, err := supervisorScope(ctx, env)
	if err != nil {
		return nil, err
	}
	return &supervise.Door{StateDir: stateDir, Clock: env.Clock, Getenv: env.Getenv, Token: env.Getenv("PARTY_RUNTIME_TOKEN"),
		Operator: env.Getenv("PARTY_OPERATOR")}, nil
}

// viaDoor runs f through the session's supervisor API (supervise.Call).
func viaDoor[T any](ctx context.Context, env *Env, f func(*supervise.Door) (T, error)) (T, error) {
	return viaDoorOr(ctx, env, f, nil)
}

// viaDoorOr is viaDoor for a command that only reads: while no
// supervisor runs, records reads what the last one left in its store
// (supervise.CallOr).
func viaDoorOr[T any](ctx context.Context, env *Env, f func(*supervise.Door) (T, error), records func(*supervise.Ops, supervise.Caller) (T, error)) (T, error) {
	d, err := openDoor(ctx, env)
	if err != nil {
		var zero T
		return zero, err
	}
	return supervise.CallOr(ctx, d, f, records)
}

// operatorClient is a client of the supervisor of the session whose state
// dir is stateDir, as the operator (the dashboard, the notifier).
func operatorClient(env *Env, stateDir string) (*supervise.Client, error) {
	return supervise.OperatorClient(env.Getenv, stateDir)
}
