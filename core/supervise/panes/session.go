package panes

import (
	"context"
	"fmt"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/core/usage"
)

// Session is the trigger supervisor of one party session over its tmux
// panes, as supervise.Process.Run builds it (Parts); core/party fills it
// in with what the panes cannot know: how a role resolves, the delivery
// path, the error table's codes, and the team's budgets and spending.
type Session struct {
	Tmux   *tmux.Client
	Clock  clock.Clock
	Getenv func(string) string
	// Exe is the party binary a restarted agent's pane runs.
	Exe    string
	Config config.Config
	// Name and StateDir are the session's.
	Name, StateDir string
	// Resolve finds the pane of role: an error when none carries it.
	Resolve func(ctx context.Context, role string) error
	// Deliverer is the delivery path to the panes of the session info,
	// the roles by pane id.
	Deliverer func(info tmux.SessionInfo, roles map[string]string) *deliver.Deliverer
	// Classify is an error's code in the one error table.
	Classify func(error) string
	// Budget and Usage are the team's (started in cwd) budgets before a
	// delivery (Effects.Budget) and spending for /metrics (Parts.Usage);
	// nil for none.
	Budget func(cwd string, logf func(string, ...any)) func(ctx context.Context, role string) string
	Usage  func(cwd string, logf func(string, ...any)) func() []supervise.UsageSample
	// Self is this host's name in the sender of a message its outbox
	// forwards (ROLE@SELF); Forward takes those messages to their hosts
	// (nil: they wait).
	Self    string
	Forward supervise.Forwarder
}

// Parts are what the supervisor of the session runs: its store and
// operations, and its loop over the session's panes (Effects), woken by
// the session's wake-ups and tmux's news of its panes (Watch). A runtime
// is managed when its role resolves and party gave it a token.
func (s Session) Parts(ctx context.Context, logf func(string, ...any)) (parts supervise.Parts, err error) {
	cfg := s.Config
	ops, err := supervise.OpenOps(s.StateDir, s.Clock, cfg.Supervise)
	if err != nil {
		return parts, err
	}
	ops.Wake = func() { state.WakeSession(s.Getenv, s.StateDir) }
	ops.Self = s.Self
	ops.Managed = func(ctx context.Context, role string) (bool, error) {
		if err := s.Resolve(ctx, role); err != nil {
			return false, fmt.Errorf("%w: %w", supervise.ErrNotFound, err)
		}
		rec, err := session.ReadRecord(s.StateDir)
		return err == nil && rec.Tokens[role] != "", nil
	}
	var closers []func()
	parts.Close = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	closers = append(closers, func() { _ = ops.Store.Close() })
	defer func() {
		if err != nil {
			parts.Close()
		}
	}()
	info, err := s.Tmux.SessionInfo(ctx, s.Name)
	if err != nil {
		return parts, err
	}
	rec, err := session.ReadRecord(s.StateDir)
	if err != nil {
		return parts, err
	}
	if err := supervise.CheckWorkspace(cfg.Supervise.Workspaces, rec.Cwd, usage.Err); err != nil {
		return parts, err
	}
	ops.StopPane = StopPane(s.Tmux, s.Clock)
	if parts.Socket, err = supervise.SocketPath(s.Getenv, s.StateDir); err != nil {
		return parts, err
	}
	w, err := state.ListenSession(s.Getenv, s.StateDir)
	if err != nil {
		return parts, err
	}
	closers = append(closers, func() { _ = w.Close() })
	redact, err := supervise.NewRedactor(cfg.Supervise.Redact)
	if err != nil {
		return parts, err
	}
	fx := &Effects{Tmux: s.Tmux, Clock: s.Clock, Getenv: s.Getenv, Exe: s.Exe, Config: cfg, Info: info, Record: rec,
		Deliverer: func(roles map[string]string) *deliver.Deliverer { return s.Deliverer(info, roles) },
		Classify:  s.Classify}
	if s.Budget != nil {
		fx.Budget = s.Budget(rec.Cwd, logf)
	}
	if s.Usage != nil {
		parts.Usage = s.Usage(rec.Cwd, logf)
	}
	parts.Ops = ops
	parts.Loop = &supervise.Loop{Store: ops.Store, Clock: s.Clock, Policy: ops.Policy, Limits: ops.Limits,
		Effects: fx, Wake: w.C, Changed: Watch(ctx, s.Tmux, s.Name, logf), Logf: logf, Redact: redact,
		ScanEvery: cfg.Supervise.ScanEvery, StallAfter: cfg.Supervise.StallAfter, Keep: cfg.Supervise.Keep,
		Recovery: supervise.RecoveryOf(cfg.Supervise), Forward: s.Forward}
	return parts, nil
}
