package party

import (
	"context"
	"io"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/session"
)

// coordinatorPoll is how often the coordinator looks for findings and
// answers (signals wake it at once).
const coordinatorPoll = 100 * time.Millisecond

// CoordinatorProcess is the review coordinator process of a session
// (party coordinator run), its effects on the session's panes.
type CoordinatorProcess struct {
	Clock    clock.Clock
	Getenv   func(string) string
	Session  string
	StateDir string
	Config   config.Review
	// Panes lists and respawns the session's panes (*tmux.Client).
	Panes review.Panes
	// Deliver types a line into a role's pane.
	Deliver review.DeliverFunc
	// Log gets the coordinator's log lines (they also go to its log file).
	Log io.Writer
}

// Serve runs the coordinator of the session's review directory until ctx
// ends (review.Coordinator.Serve): git runs in the implementer's folder
// (its worktree, whose base is the review's default, else the session's),
// and a dead agent is respawned as Start launched it.
func (p CoordinatorProcess) Serve(ctx context.Context) error {
	dir := review.Dir(p.StateDir)
	logf := daemon.Logger(p.Clock, p.Log, dir)
	r := p.Config
	if rec, err := session.ReadRecord(p.StateDir); err == nil {
		// An implementer in a worktree: its branch against the tree's base.
		if base, ok := rec.BaseOf(r.Implementer); ok {
			r.Base = base
		}
	}
	c := &review.Coordinator{Dir: dir, Clock: p.Clock, Logf: logf,
		Config: review.Config{Implementer: r.Implementer, Reviewer: r.Reviewer, Base: r.Base,
			FindingsTimeout: r.FindingsTimeout, HealthInterval: r.HealthInterval,
			Poll: coordinatorPoll, MarkerDir: r.MarkerDir, MaxIterations: r.MaxIterations}}
	return c.Serve(ctx, p.Getenv, func() (review.Effects, error) {
		rec, err := session.ReadRecord(p.StateDir)
		if err != nil {
			return nil, err
		}
		launches := map[string]review.Launch{}
		for role, l := range rec.Launch {
			launches[role] = review.Launch(l)
		}
		return &review.PaneEffects{Session: p.Session, Cwd: rec.DirOf(r.Implementer), Launch: launches, Panes: p.Panes, Logf: logf,
			Deliver: p.Deliver}, nil
	})
}
