package review

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/state"
)

// ErrRunning is a coordinator (or its keeper) that already runs.
var ErrRunning = errors.New("coordinator already running")

// Start initializes the review state of dir (if new) and, unless a
// coordinator or its keeper already runs (ErrRunning), calls spawn to
// start its keeper, then waits up to 5 s for the coordinator to run, so
// that a signal sent right after is taken at once (daemon.Start).
func Start(ctx context.Context, clk clock.Clock, dir string, maxIterations int, spawn func() error) error {
	if daemon.Running(dir).Up() {
		return ErrRunning
	}
	if err := Init(dir, clk.Now().UTC(), maxIterations); err != nil {
		return err
	}
	_, err := daemon.Start(ctx, clk, dir, spawn)
	if errors.Is(err, daemon.ErrRunning) {
		return ErrRunning
	}
	return err
}

// Serve is the coordinator process of a session: it initializes the
// review state (if new), holds the coordinator's lock (daemon.Hold; ErrRunning when
// another process holds it), builds its effects with newEffects, listens
// for the session's wake-ups and runs c until ctx is done.
func (c *Coordinator) Serve(ctx context.Context, getenv func(string) string, newEffects func() (Effects, error)) error {
	if err := Init(c.Dir, c.Clock.Now().UTC(), c.Config.MaxIterations); err != nil {
		return err
	}
	release, err := daemon.Hold(ctx, c.Clock, c.Dir)
	if errors.Is(err, daemon.ErrRunning) {
		return ErrRunning
	}
	if err != nil {
		return err
	}
	defer release()
	if c.Effects, err = newEffects(); err != nil {
		return err
	}
	w, err := state.ListenSession(getenv, filepath.Dir(c.Dir))
	if err != nil {
		return err
	}
	defer w.Close()
	c.Wake = w.C
	c.Logf("coordinator started (pid %d), state dir %s", os.Getpid(), c.Dir)
	err = c.Run(ctx)
	c.Logf("coordinator stopped")
	return err
}

// Await reads the status of dir every poll until it is in state want, and
// returns it. When ctx ends first, it returns the status it read last
// (as Load returned it, whatever the error) and ctx's error.
func Await(ctx context.Context, clk clock.Clock, dir string, want State, poll time.Duration) (Status, error) {
	for {
		s, err := Load(dir)
		if err == nil && s.State == want {
			return s, nil
		}
		if err := clk.Sleep(ctx, poll); err != nil {
			return s, err
		}
	}
}

// Team is what the coordinator of a session reads of the session's
// record for its implementer: the base of the implementer's worktree
// (HasBase when it runs in one), the folder git runs in, and how each
// pane was launched, to respawn it.
type Team struct {
	Base    string
	HasBase bool
	Cwd     string
	Launch  map[string]Launch // by role
}

// SessionProcess is the review coordinator process of a session (party
// coordinator run), its effects on the session's panes.
type SessionProcess struct {
	Clock    clock.Clock
	Getenv   func(string) string
	Session  string
	StateDir string
	// Config is the coordinator's configuration; its Base is replaced by
	// the base of the implementer's worktree.
	Config Config
	// Team reads the session's record for the implementer role.
	Team func(implementer string) (Team, error)
	// Panes lists and respawns the session's panes (*tmux.Client).
	Panes Panes
	// Deliver types a line into a role's pane; a line it refuses for a
	// pane that runs no agent (deliver.NotAgentError) is logged in the
	// session's event log as review.refused-shell or
	// review.refused-program, and retried as a pane that could not take
	// it.
	Deliver DeliverFunc
	// Log gets the coordinator's log lines (they also go to its log file).
	Log io.Writer
}

// Serve runs the coordinator of the session's review directory until ctx
// ends (Coordinator.Serve): git runs in the implementer's folder (its
// worktree, whose base is the review's default, else the session's),
// and a dead agent is respawned as it was launched.
func (p SessionProcess) Serve(ctx context.Context) error {
	dir := Dir(p.StateDir)
	logf := daemon.Logger(p.Clock, p.Log, dir)
	cfg := p.Config
	if t, err := p.Team(cfg.Implementer); err == nil && t.HasBase {
		// An implementer in a worktree: its branch against the tree's base.
		cfg.Base = t.Base
	}
	c := &Coordinator{Dir: dir, Clock: p.Clock, Logf: logf, Config: cfg}
	return c.Serve(ctx, p.Getenv, func() (Effects, error) {
		t, err := p.Team(cfg.Implementer)
		if err != nil {
			return nil, err
		}
		return &PaneEffects{Session: p.Session, Cwd: t.Cwd, Launch: t.Launch, Panes: p.Panes, Logf: logf, Deliver: p.deliver}, nil
	})
}

// deliver is Deliver, a refused line logged in the event log.
func (p SessionProcess) deliver(ctx context.Context, role, line string) (string, deliver.Result, error) {
	pane, res, err := p.Deliver(ctx, role, line)
	var refused *deliver.NotAgentError
	if errors.As(err, &refused) {
		_ = state.AppendEvent(filepath.Join(p.StateDir, state.EventLog), map[string]any{"time": p.Clock.Now().UTC(),
			"kind": "review.refused-" + refused.Why, "role": role, "pane": refused.Pane, "agent": string(refused.Kind), "text": line})
	}
	return pane, res, err
}

// Keep runs the coordinator with start until it exits cleanly,
// restarting it when it crashes (daemon.Keeper); ErrRunning when a
// keeper of dir runs already. Its log goes to stderr and dir's log file.
func Keep(ctx context.Context, clk clock.Clock, dir string, stderr io.Writer, start func() (daemon.Child, error)) error {
	k := &daemon.Keeper{Dir: dir, Name: "coordinator", Clock: clk, Logf: daemon.Logger(clk, stderr, dir), Start: start}
	err := k.Run(ctx)
	if errors.Is(err, daemon.ErrRunning) {
		return fmt.Errorf("%w: %w", ErrRunning, err)
	}
	return err
}
