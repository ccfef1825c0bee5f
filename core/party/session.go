package party

import (
	"context"

	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/remote"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/supervise"
)

// Start starts a session with the configuration of the working directory
// (session.Start).
func Start(ctx context.Context, env *Env, opts session.StartOptions) (session.Result, error) {
	cfg, err := env.Config()
	if err != nil {
		return session.Result{}, err
	}
	d, err := env.SessionDeps()
	if err != nil {
		return session.Result{}, err
	}
	opts.Config = cfg
	res, err := session.Start(ctx, d, opts)
	if err != nil {
		return res, err
	}
	if res.Restored {
		// The team comes back with the daemons it had.
		if rec, err := session.ReadRecord(res.StateDir); err == nil {
			opts.Supervise = opts.Supervise || rec.Team.Supervise
			opts.Notify = opts.Notify || rec.Team.Notify
		}
	}
	if opts.Notify || cfg.Notify.Enabled {
		if err := startNotifierIn(ctx, d, res.Session, res.StateDir); err != nil {
			return res, err
		}
	}
	if !opts.Supervise {
		return res, nil
	}
	return res, startSupervisorIn(ctx, d, res.Session, res.StateDir, RunOptions{})
}

// PaneHeader is the header of the table of Panes (party panes).
func PaneHeader(rows []session.PaneRow) []string { return session.PaneHeader(rows) }

// Panes are the panes of the session the Env picks, as party panes lists
// them: with the worktree and branch of those that run in one.
func Panes(ctx context.Context, env *Env) ([]session.PaneRow, error) {
	sc, err := env.Open(ctx)
	if err != nil {
		return nil, err
	}
	rows := sc.Rows()
	if sc.Info.StateDir != "" {
		if rec, err := session.ReadRecord(sc.Info.StateDir); err == nil {
			rows = session.WithWorktrees(rows, rec)
		}
	}
	return rows, nil
}

// CheckOptions are the inputs of Check.
type CheckOptions struct {
	Role  string
	Lines int // how many of the last lines
}

// Screen is the end of a pane's screen.
type Screen struct {
	Host  string // the host the role is on (ROLE@HOST); none: this one
	Pane  string
	Lines []string
}

// Check reads the last opts.Lines lines of the pane of opts.Role.
func Check(ctx context.Context, env *Env, opts CheckOptions) (Screen, error) {
	role, host, err := remote.RoleAt(opts.Role)
	if err != nil {
		return Screen{}, err
	}
	if host != "" {
		return hostCheck(ctx, env, role, host, opts)
	}
	t, err := env.Resolve(ctx, opts.Role)
	if err != nil {
		host, err := roleElsewhere(ctx, env, opts.Role, err)
		if host == "" {
			return Screen{}, err
		}
		return hostCheck(ctx, env, opts.Role, host, opts)
	}
	screen, err := env.Tmux.Capture(ctx, t.Pane.ID, opts.Lines)
	if err != nil {
		return Screen{}, err
	}
	return Screen{Pane: t.Pane.ID, Lines: session.LastLines(screen, opts.Lines)}, nil
}

// Stop stops the session name, "" the one the Env picks, with every agent
// in it, and returns the name of the session it stopped.
func Stop(ctx context.Context, env *Env, name string) (string, error) {
	if name == "" {
		sc, err := env.Open(ctx)
		if err != nil {
			return "", err
		}
		name = sc.Session
	}
	d, err := env.SessionDeps()
	if err != nil {
		return "", err
	}
	// The supervisor first: it stops between two steps, its records kept,
	// and takes its socket with it.
	if info, err := env.Tmux.SessionInfo(ctx, name); err == nil && info.StateDir != "" {
		if err := daemon.Stop(ctx, env.Clock, supervise.Dir(info.StateDir)); err != nil {
			env.Warnf("the supervisor of %s: %v", name, err)
		}
	}
	return name, session.Stop(ctx, d, name)
}

// Teams are the teams party keeps records of on the Env's server: those
// started in the working directory, or every one with all
// (session.Teams).
func Teams(ctx context.Context, env *Env, all bool) ([]session.Stored, error) {
	d, err := env.SessionDeps()
	if err != nil {
		return nil, err
	}
	cwd := ""
	if !all {
		if cwd, err = env.Getwd(); err != nil {
			return nil, err
		}
	}
	return session.Teams(ctx, d, cwd)
}

// ForgetTeam drops the stored team name (session.Forget) and returns the
// state dir it removed.
func ForgetTeam(ctx context.Context, env *Env, name string) (string, error) {
	d, err := env.SessionDeps()
	if err != nil {
		return "", err
	}
	return session.Forget(ctx, d, name)
}

// Restored is a team RestoreTeams brought back, or why it could not.
type Restored = session.Restored

// RestoreTeams brings back every team of the working directory (every
// folder's with all) whose server died, each with the configuration of
// its folder (session.RestoreAll).
func RestoreTeams(ctx context.Context, env *Env, all bool) ([]Restored, error) {
	teams, err := Teams(ctx, env, all)
	if err != nil {
		return nil, err
	}
	return session.RestoreAll(teams, func(t session.Stored) (session.Result, error) {
		e := *env
		e.cfg, e.Session = nil, t.Name
		e.Getwd = func() (string, error) { return t.Cwd, nil }
		return Start(ctx, &e, session.StartOptions{Name: t.Name, Cwd: t.Cwd})
	})
}

// RestoreUnit is the user service of kind (systemd or launchd) that runs
// party sessions restore --all at login, with the caller's PATH (the
// agents' programs), its party variables and the XDG and tmux folders
// party finds its state and server by (session.Unit).
func RestoreUnit(env *Env, kind string) (string, error) {
	exe, err := env.Executable()
	if err != nil {
		return "", err
	}
	return session.Unit(kind, exe, session.UnitEnv(env.Environ))
}
