package party

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/task"
	"github.com/partyhq/party/core/task/github"
)

// PMOptions are what every party pm operation takes besides its own
// arguments: who acts, and the GitHub repository of a github store.
type PMOptions struct {
	Actor string // "": $PARTY_ROLE, else human
	Repo  string // owner/name; "": pm.repo
}

// PMActor is who makes a change: actor, else the pane's role
// ($PARTY_ROLE), else human; it must be a role as panes are named, so it
// cannot forge a line of the audit trail.
func PMActor(env *Env, actor string) (string, error) {
	for _, a := range []string{actor, env.Getenv("PARTY_ROLE")} {
		if a = strings.TrimSpace(a); a != "" {
			return a, task.CheckRole("actor", a)
		}
	}
	return task.HumanActor, nil
}

// PM is the team linked to the working directory: its task store, and
// who makes the changes made through it.
type PM struct {
	Store task.Store
	Actor string
	env   *Env
}

// OpenPM checks the actor and opens the store of the team linked to the
// working directory or a parent of it. The configuration that picks the
// store is the linked directory's (its ./.party/ beside team.json), also
// when run from a subdirectory; fallbacks are warnings on stderr.
func OpenPM(ctx context.Context, env *Env, opts PMOptions) (*PM, error) {
	actor, err := PMActor(env, opts.Actor)
	if err != nil {
		return nil, err
	}
	cwd, err := env.Getwd()
	if err != nil {
		return nil, err
	}
	dir := cwd
	if link, err := task.FindLink(cwd); err == nil {
		dir = link.Dir
	}
	cfg, err := env.ConfigIn(dir)
	if err != nil {
		return nil, err
	}
	st, err := taskStore(ctx, env, cwd, cfg, opts.Repo, func(msg string) { env.Warnf("warning: %s", msg) })
	if err != nil {
		return nil, err
	}
	return &PM{Store: st, Actor: actor, env: env}, nil
}

// taskStore opens the store of the team linked from cwd (github.Open) as
// cfg, the configuration of the team's directory, and repo (--repo) say;
// warn gets its fallbacks.
func taskStore(ctx context.Context, env *Env, cwd string, cfg config.Config, repo string, warn func(string)) (task.Store, error) {
	root, err := env.StateRoot()
	if err != nil {
		return nil, err
	}
	return github.Open(ctx, github.OpenOptions{Root: root, Cwd: cwd, Storage: cfg.PM.Storage, StorageSet: cfg.Sources["pm.storage"] != "default",
		Repo: repo, ConfigRepo: cfg.PM.Repo, Env: env.Environ, Clock: env.Clock, Warn: warn})
}

// TaskUpdate is a change of task ID as party pm task update takes it
// (task.Update).
type TaskUpdate = task.Update

// Update applies u. A change forced over one made on GitHub since party
// last wrote the issue is a warning on stderr that lists what it
// overwrote, also when the update then fails.
func (p *PM) Update(ctx context.Context, u TaskUpdate) (task.Task, error) {
	c, err := u.Change()
	if err != nil {
		return task.Task{}, err
	}
	t, err := p.Store.Update(ctx, p.Actor, u.ID, c)
	if len(t.Forced) > 0 {
		p.env.Warnf("warning: task %s had changed on GitHub since party last wrote it (%s); --force applied this update over it", t.ID, task.Diffs(t.Forced))
	}
	return t, err
}

// EditDoc opens task id's document in the user's editor on term
// (task.EditDoc) and, when it saved it, says so on stderr. An edit that
// could not be saved over a change made meanwhile is kept in the state
// root's pm/unsaved.
func (p *PM) EditDoc(ctx context.Context, id string, term task.Terminal) error {
	saved, err := task.EditDoc(ctx, p.Store, p.Actor, id, p.env.Getenv, term, p.env.Clock, func() (string, error) {
		root, err := p.env.StateRoot()
		return filepath.Join(root, "pm", "unsaved"), err
	})
	if saved {
		p.env.Warnf("task %s: document saved", id)
	}
	return err
}

// PMInitOptions are the inputs of PMInit.
type PMInitOptions struct {
	Actor string // "": $PARTY_ROLE, else human
	Name  string // the new team's name
	Team  string // link to this existing team instead
}

// PMInit links the working directory to a new team, or to an existing one
// (Team).
func PMInit(ctx context.Context, env *Env, opts PMInitOptions) (task.InitResult, error) {
	actor, err := PMActor(env, opts.Actor)
	if err != nil {
		return task.InitResult{}, err
	}
	root, err := env.StateRoot()
	if err != nil {
		return task.InitResult{}, err
	}
	cwd, err := env.Getwd()
	if err != nil {
		return task.InitResult{}, err
	}
	return task.Init(ctx, task.InitOptions{Root: root, Dir: cwd, Name: opts.Name, Team: opts.Team, Actor: actor, Clock: env.Clock})
}

// Jump is what PMJump did (session.Jump).
type Jump = session.Jump

// PMJump switches the tmux client to the party session started in the
// team's directory (session.Linked), or to env.Session when one is
// named. Outside tmux, or when the client is another server's, it
// switches nothing (said on stderr in the second case): Attach is then
// the command to run. actor is checked as every pm command checks it.
func PMJump(ctx context.Context, env *Env, actor string) (Jump, error) {
	if _, err := PMActor(env, actor); err != nil {
		return Jump{}, err
	}
	name := env.Session
	if name == "" {
		cwd, err := env.Getwd()
		if err != nil {
			return Jump{}, err
		}
		if name, err = session.Linked(ctx, env.Tmux, cwd); err != nil {
			return Jump{}, err
		}
	}
	j, refused := session.SwitchTo(ctx, env.Tmux, name, env.Getenv("TMUX") != "")
	if refused {
		env.Warnf("this client is another tmux server's; attach to %s with the command below", name)
	}
	return j, nil
}
