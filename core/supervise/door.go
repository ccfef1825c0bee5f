package supervise

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/state"
)

// Door is the API of the supervisor of a session as its clients reach
// it: a Client on the socket the supervisor serves on now (APISocket),
// called as Token's runtime ("" is the operator). It waits for a
// supervisor its keeper is restarting and asks again (Call), reads what
// the last one recorded while none runs (CallOr), and long-polls across
// restarts (LongPoll). Every command that reads or changes the
// supervisor's store goes through it; only the supervisor opens the
// store.
type Door struct {
	*Client
	StateDir string
	Clock    clock.Clock
	Getenv   func(string) string
	// Token is the caller's runtime token ($PARTY_RUNTIME_TOKEN inside
	// an agent's pane); "" calls as the operator, named Operator when set
	// (a named operator of party mcp token).
	Token, Operator string
}

// APISocket is the socket of the API of the supervisor of stateDir: the
// one the serving supervisor recorded, else where getenv puts it
// (SocketPath).
func APISocket(getenv func(string) string, stateDir string) (string, error) {
	if d, ok := ReadProc(Dir(stateDir)); ok && d.State == ProcServing && d.Socket != "" {
		return d.Socket, nil
	}
	return SocketPath(getenv, stateDir)
}

// OperatorClient is a client of the supervisor of the session whose state
// dir is stateDir, as the operator (the dashboard, the notifier), on the
// socket it serves on (APISocket).
func OperatorClient(getenv func(string) string, stateDir string) (*Client, error) {
	sock, err := APISocket(getenv, stateDir)
	if err != nil {
		return nil, err
	}
	return NewUnixClient(sock), nil
}

// connect makes the door's client for the socket the supervisor serves
// on now.
func (d *Door) connect() error {
	c, err := OperatorClient(d.Getenv, d.StateDir)
	if err != nil {
		return err
	}
	if d.Client != nil {
		d.HTTP.CloseIdleConnections()
	}
	c.RuntimeToken, c.Operator = d.Token, d.Operator
	d.Client = c
	return nil
}

// Call runs f through the door's supervisor API. A call that finds no
// supervisor while its keeper is restarting it waits until it serves (at
// most startWait) and is made once more: nothing of it reached a
// supervisor (ErrNotRunning is a dial that failed), so nothing doubles.
func Call[T any](ctx context.Context, d *Door, f func(*Door) (T, error)) (T, error) {
	return CallOr(ctx, d, f, nil)
}

// CallOr is Call for a command that only reads: while no supervisor runs
// at all (its tmux server died with it, or it was stopped), records reads
// what the last one left in its store, read-only, as the door's caller.
func CallOr[T any](ctx context.Context, d *Door, f func(*Door) (T, error), records func(*Ops, Caller) (T, error)) (T, error) {
	if err := d.connect(); err != nil {
		var zero T
		return zero, err
	}
	defer func() { d.HTTP.CloseIdleConnections() }()
	v, err := f(d)
	if !errors.Is(err, ErrNotRunning) {
		return v, err
	}
	if err = d.AwaitSupervisor(ctx); err == nil {
		if v, err = f(d); !errors.Is(err, ErrNotRunning) {
			return v, err
		}
	}
	// None serves. A reader reads the records once none runs at all: one
	// that went while it was waited for (its tmux server killed) is gone
	// as much as one never started.
	if records == nil || (!errors.Is(err, ErrNotRunning) && daemon.Running(Dir(d.StateDir)).Up()) {
		return v, err
	}
	return fromRecords(ctx, d, records)
}

// fromRecords runs f over the store a supervisor left, opened read-only,
// as the door's caller.
func fromRecords[T any](ctx context.Context, d *Door, f func(*Ops, Caller) (T, error)) (T, error) {
	var zero T
	st, err := OpenRecords(filepath.Join(Dir(d.StateDir), StoreFile))
	if errors.Is(err, ErrNotFound) {
		return zero, fmt.Errorf("%w, and none ever ran in this session: %s", ErrNotRunning, howToStart)
	}
	if err != nil {
		return zero, err
	}
	defer st.Close()
	o := &Ops{Store: st, Clock: d.Clock}
	c, err := o.Caller(ctx, d.RuntimeToken)
	if err != nil {
		return zero, err
	}
	return f(o, c)
}

// howToStart says how to start a supervisor that does not run.
const howToStart = "start it with party supervise start (or party start --supervise)"

// AwaitSupervisor waits until the supervisor serves, when its keeper
// runs, and connects to it; ErrNotRunning, with how to start it, when
// nothing runs it.
func (d *Door) AwaitSupervisor(ctx context.Context) error {
	dir := Dir(d.StateDir)
	if !daemon.Running(dir).Up() {
		return fmt.Errorf("%w: %s", ErrNotRunning, howToStart)
	}
	if err := AwaitServing(ctx, d.Clock, dir); err != nil {
		return err
	}
	return d.connect()
}

// LongPoll calls f, which waits up to the time it is given for something
// to happen, until it says done or timeout has passed. A supervisor that
// went away meanwhile (killed, restarted by its keeper) is waited for
// and asked again: what f waits for is kept in the store.
func (d *Door) LongPoll(ctx context.Context, timeout time.Duration, f func(wait time.Duration) (done bool, err error)) error {
	deadline := d.Clock.Now().Add(timeout)
	for {
		left := deadline.Sub(d.Clock.Now())
		done, err := f(max(0, min(left, MaxWait)))
		var api *APIError
		switch {
		case done, ctx.Err() != nil:
			return err
		case err != nil && (errors.As(err, &api) || left <= 0):
			return err
		case err != nil:
			// The connection failed or broke: a supervisor restarting.
			if werr := d.AwaitSupervisor(ctx); werr != nil {
				return fmt.Errorf("%w (waiting, the supervisor went away: %v)", werr, err)
			}
		case left <= 0:
			return nil
		}
	}
}

// SubmitOnce records the trigger req. A submission the supervisor died
// on is asked again once it serves, when req has an id: whether it was
// recorded is unknown, and the id makes asking again safe (the next one
// finds it, or records it, once). Without an id it is not: that would be
// a second trigger.
func (d *Door) SubmitOnce(ctx context.Context, req TriggerRequest) (Trigger, bool, error) {
	return askOnce(ctx, d, req.ID, func() (Trigger, bool, error) { return d.Submit(ctx, req) })
}

// OutsendOnce records the message req for another host in the outbox,
// as SubmitOnce does a trigger.
func (d *Door) OutsendOnce(ctx context.Context, req OutboundRequest) (Outbound, bool, error) {
	return askOnce(ctx, d, req.ID, func() (Outbound, bool, error) { return d.Outsend(ctx, req) })
}

// askOnce makes the call f, which records something under id, and makes
// it once more when the supervisor died on it (ErrNoAnswer) and serves
// again: only with an id, which makes asking again safe.
func askOnce[T any](ctx context.Context, d *Door, id string, f func() (T, bool, error)) (T, bool, error) {
	v, created, err := f()
	if errors.Is(err, ErrNoAnswer) && id != "" {
		if werr := d.AwaitSupervisor(ctx); werr != nil {
			var zero T
			return zero, false, err
		}
		v, created, err = f()
	}
	return v, created, err
}

// ErrTimeout is a wait for a trigger that ran out of time while the
// trigger was still open.
var ErrTimeout = errors.New("trigger still open")

// AwaitEnd waits until trigger t is over, told by the supervisor's API
// the moment it is (a long poll, not a poll of the store): the trigger,
// with a *FailedError when it failed or its turn ended without an
// answer, ErrTimeout when it is still open after timeout.
func (d *Door) AwaitEnd(ctx context.Context, t Trigger, timeout time.Duration) (Trigger, error) {
	err := d.LongPoll(ctx, timeout, func(wait time.Duration) (bool, error) {
		got, err := d.AwaitTrigger(ctx, t.ID, wait)
		if err == nil {
			t = got
		}
		return err == nil && !t.Status.Open(), err
	})
	if err != nil {
		return t, err
	}
	return Ended(t, timeout)
}

// Ended is trigger t as a wait of timeout for its end gives it: with a
// *FailedError when it failed or its turn ended without an answer,
// ErrTimeout when it is still open.
func Ended(t Trigger, timeout time.Duration) (Trigger, error) {
	switch {
	case t.Status == TFailed:
		return t, &FailedError{ID: t.ID, Class: t.Class, Msg: t.Error}
	case t.Status == Completed && t.Answer == nil && t.Error != "":
		// Acked, but its turn ended without an answer (TURN_FAILED,
		// ANSWER_CUT, PERMISSION_PROMPT): a wait has none to give.
		return t, &FailedError{ID: t.ID, Class: t.Class, Msg: t.Error}
	case t.Status.Open():
		return t, fmt.Errorf("trigger %s is %s after %s: %w", t.ID, t.Status, timeout, ErrTimeout)
	}
	return t, nil
}

// TriggerPage is a page of the trigger list: the newest triggers that a
// filter selects, oldest first, and whether earlier ones were left out.
type TriggerPage struct {
	Triggers []Trigger
	More     bool
}

// ListTriggers is the page of the newest limit (0: all) triggers f
// selects, through the door, or from the records of a supervisor that
// no longer runs (CallOr).
func ListTriggers(ctx context.Context, d *Door, f TriggerFilter, limit int) (TriggerPage, error) {
	if limit > 0 {
		f.Limit = limit + 1 // one more says whether there are more
	}
	ts, err := CallOr(ctx, d, func(d *Door) ([]Trigger, error) { return d.Triggers(ctx, f) },
		func(o *Ops, c Caller) ([]Trigger, error) { return o.Triggers(ctx, c, f) })
	if err != nil {
		return TriggerPage{}, err
	}
	if limit > 0 && len(ts) > limit {
		return TriggerPage{Triggers: ts[1:], More: true}, nil
	}
	return TriggerPage{Triggers: ts}, nil
}

// eventsPage is how many audit events a call asks for at once.
const eventsPage = 1000

// AuditTrail gives the door's audit trail to emit: once, or with follow
// until ctx ends, told of each new event by the API the moment it is
// recorded. Once, while no supervisor runs, it gives what the last one
// recorded.
func AuditTrail(ctx context.Context, d *Door, follow bool, emit func(AuditEvent)) error {
	var after int64 // kept across a call made again
	page := func(evs []AuditEvent) bool {
		for _, e := range evs {
			emit(e)
			after = e.Seq
		}
		return len(evs) < eventsPage
	}
	var records func(*Ops, Caller) (struct{}, error)
	if !follow {
		records = func(o *Ops, c Caller) (struct{}, error) {
			for {
				evs, err := o.Events(ctx, c, after, eventsPage)
				if err != nil || page(evs) {
					return struct{}{}, err
				}
			}
		}
	}
	_, err := CallOr(ctx, d, func(d *Door) (struct{}, error) {
		for {
			if !follow {
				evs, err := d.Events(ctx, after, eventsPage, 0)
				if err != nil || page(evs) {
					return struct{}{}, err
				}
				continue
			}
			var evs []AuditEvent
			err := d.LongPoll(ctx, MaxWait, func(wait time.Duration) (bool, error) {
				var err error
				evs, err = d.Events(ctx, after, eventsPage, wait)
				return err == nil && len(evs) > 0, err
			})
			if ctx.Err() != nil {
				return struct{}{}, nil
			}
			if err != nil {
				return struct{}{}, err
			}
			page(evs)
		}
	}, records)
	return err
}

// RecordedSession is the state dir and name of a session of the tmux
// server socket, under party's state root, that has a supervisor's store:
// the one named (name), else the one such session that is not live. Its
// records (triggers, runtimes, events) are read from the store while tmux
// cannot say where the session is.
func RecordedSession(root, socket, name string, live func(name string) bool) (stateDir, session string, ok bool) {
	hasStore := func(dir string) bool {
		_, err := os.Stat(filepath.Join(Dir(dir), StoreFile))
		return err == nil
	}
	if name != "" {
		dir := state.SessionDir(root, socket, name)
		return dir, name, hasStore(dir)
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "sessions", "*-*"))
	var found []string
	for _, d := range dirs {
		base := filepath.Base(d)
		n := base[:strings.LastIndex(base, "-")]
		if state.SessionDir(root, socket, n) == d && hasStore(d) {
			found, name = append(found, d), n
		}
	}
	if len(found) != 1 || live(name) {
		return "", "", false // a live session of its own picks it, not its store
	}
	return found[0], name, true
}
