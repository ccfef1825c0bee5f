package party

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/supervise"
)

// door is the session's supervisor API, called as the command's caller:
// the runtime of $PARTY_RUNTIME_TOKEN (inside an agent's pane), else the
// operator. Every command that reads or changes the supervisor's store
// goes through it; only the supervisor opens the store.
type door struct {
	*supervise.Client
	env      *Env
	stateDir string
}

// openDoor is a client of the supervisor of the session the command acts
// on (supervisorScope).
func openDoor(ctx context.Context, env *Env) (*door, error) {
	stateDir, _, err := supervisorScope(ctx, env)
	if err != nil {
		return nil, err
	}
	d := &door{env: env, stateDir: stateDir}
	return d, d.connect()
}

// connect makes the door's client for the socket the supervisor serves
// on now.
func (d *door) connect() error {
	c, err := operatorClient(d.env, d.stateDir)
	if err != nil {
		return err
	}
	if d.Client != nil {
		d.HTTP.CloseIdleConnections()
	}
	c.RuntimeToken = d.env.Getenv("PARTY_RUNTIME_TOKEN")
	d.Client = c
	return nil
}

// viaDoor runs f through the session's supervisor API. A call that finds
// no supervisor while its keeper is restarting it waits until it
// serves (at most startWait) and is made once more: nothing of it reached
// a supervisor (ErrNotRunning is a dial that failed), so nothing doubles.
func viaDoor[T any](ctx context.Context, env *Env, f func(*door) (T, error)) (T, error) {
	return viaDoorOr(ctx, env, f, nil)
}

// viaDoorOr is viaDoor for a command that only reads: while no supervisor
// runs at all (its tmux server died with it, or it was stopped), records
// reads what the last one left in its store, read-only, as its caller.
func viaDoorOr[T any](ctx context.Context, env *Env, f func(*door) (T, error), records func(*supervise.Ops, supervise.Caller) (T, error)) (T, error) {
	d, err := openDoor(ctx, env)
	if err != nil {
		var zero T
		return zero, err
	}
	defer func() { d.HTTP.CloseIdleConnections() }()
	v, err := f(d)
	if !errors.Is(err, supervise.ErrNotRunning) {
		return v, err
	}
	if werr := d.awaitSupervisor(ctx); werr != nil {
		if records == nil || !errors.Is(werr, supervise.ErrNotRunning) {
			return v, werr
		}
		return fromRecords(ctx, d, records)
	}
	return f(d)
}

// fromRecords runs f over the store a supervisor left, opened read-only,
// as the door's caller.
func fromRecords[T any](ctx context.Context, d *door, f func(*supervise.Ops, supervise.Caller) (T, error)) (T, error) {
	var zero T
	st, err := supervise.OpenRecords(filepath.Join(supervise.Dir(d.stateDir), supervise.StoreFile))
	if errors.Is(err, supervise.ErrNotFound) {
		return zero, fmt.Errorf("%w, and none ever ran in this session: %s", supervise.ErrNotRunning, howToStart)
	}
	if err != nil {
		return zero, err
	}
	defer st.Close()
	o := &supervise.Ops{Store: st, Clock: d.env.Clock}
	c, err := o.Caller(ctx, d.RuntimeToken)
	if err != nil {
		return zero, err
	}
	return f(o, c)
}

// howToStart says how to start a supervisor that does not run.
const howToStart = "start it with party supervise start (or party start --supervise)"

// awaitSupervisor waits until the supervisor serves, when its keeper
// runs; ErrNotRunning, with how to start it, when nothing runs it.
func (d *door) awaitSupervisor(ctx context.Context) error {
	dir := supervise.Dir(d.stateDir)
	if !daemon.Running(dir).Up() {
		return fmt.Errorf("%w: %s", supervise.ErrNotRunning, howToStart)
	}
	if err := supervise.AwaitServing(ctx, d.env.Clock, dir); err != nil {
		return err
	}
	return d.connect()
}

// longPoll calls f, which waits up to the time it is given for something
// to happen, until it says done or timeout has passed. A supervisor that
// went away meanwhile (killed, restarted by its keeper) is waited for
// and asked again: what f waits for is kept in the store.
func (d *door) longPoll(ctx context.Context, timeout time.Duration, f func(wait time.Duration) (done bool, err error)) error {
	deadline := d.env.Clock.Now().Add(timeout)
	for {
		left := deadline.Sub(d.env.Clock.Now())
		done, err := f(max(0, min(left, supervise.MaxWait)))
		var api *supervise.APIError
		switch {
		case done, ctx.Err() != nil:
			return err
		case err != nil && (errors.As(err, &api) || left <= 0):
			return err
		case err != nil:
			// The connection failed or broke: a supervisor restarting.
			if werr := d.awaitSupervisor(ctx); werr != nil {
				return fmt.Errorf("%w (waiting, the supervisor went away: %v)", werr, err)
			}
		case left <= 0:
			return nil
		}
	}
}

// operatorClient is a client of the supervisor of the session whose state
// dir is stateDir, as the operator (the dashboard, the notifier), on the
// socket it serves on (apiSocket).
func operatorClient(env *Env, stateDir string) (*supervise.Client, error) {
	sock, err := apiSocket(env, stateDir)
	if err != nil {
		return nil, err
	}
	return supervise.NewUnixClient(sock), nil
}
