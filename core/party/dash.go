package party

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/dash"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/remote"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/talk"
	"github.com/partyhq/party/core/task"
	"github.com/partyhq/party/core/tmux"
)

// DashSnapshot is the dashboard's model read once: the session --session
// names, else every party session of the server and, unless here, each
// configured host's (all at once, each within seconds:
// remote.Caller.Dash).
func DashSnapshot(ctx context.Context, env *Env, here bool) (dash.Model, error) {
	infos, err := dashSessions(ctx, env)
	if err != nil {
		return dash.Model{}, err
	}
	feed, err := dashFeed(env, here)
	if err != nil {
		return dash.Model{}, err
	}
	return feed.Snapshot(ctx, infos)
}

// Dash runs the live dashboard on the terminal in/out, fed by the
// dashboard's feed (dash.RunFed), until the user quits or ctx ends; with
// here, of this host only. What the agents' commands would print on stderr
// (warnings of a talk) is dropped while it runs: the screen is the
// dashboard's.
func Dash(ctx context.Context, env *Env, in io.Reader, out io.Writer, here bool) error {
	quiet := *env
	quiet.Stderr = io.Discard
	feed, err := dashFeed(&quiet, here)
	if err != nil {
		return err
	}
	// The first screen is this host's: the other hosts show as looked at
	// (the feed's watchers), never holding it up.
	infos, err := dashSessions(ctx, env)
	if err != nil {
		return err
	}
	local := feed
	local.Hosts = nil
	first, err := local.Snapshot(ctx, infos)
	if err != nil {
		return err
	}
	first.Hosts = dash.Looking(feed.Hosts, feed.Dests)
	return dash.RunFed(ctx, feed, dash.Options{Model: first, Now: env.Clock.Now, In: in, Out: out,
		Act: dash.Actions{
			Jump: func(ctx context.Context, r dash.Ref) error {
				if r.Host != "" {
					return fmt.Errorf("%s is on host %s: ssh -t %s party attach --session=%s", r.Role, r.Host, feed.Dests[r.Host], r.Session)
				}
				return env.Tmux.Jump(ctx, r.Pane)
			},
			Talk: func(ctx context.Context, r dash.Ref, text string) (string, error) {
				e := quiet
				e.Session = r.Session
				role := r.Role
				if r.Host != "" {
					role += "@" + r.Host
				}
				res, err := Talk(ctx, &e, TalkOptions{Role: role, Text: text})
				if err != nil {
					return "", err
				}
				var outs []string
				for _, o := range res {
					if o.Err != nil {
						return "", o.Err
					}
					outs = append(outs, string(o.Outcome))
				}
				return strings.Join(outs, ", "), nil
			},
		}})
}

// DashStream is the other end of a dashboard on another host (party dash
// --stream, which remote.Caller.DashWatch runs there): the model of this
// host's sessions streamed to out (dash.Feed.Stream: at most every
// remote.StreamEvery, at least every remote.StreamBeat), until in ends
// (the reader went), out fails or ctx ends. It looks at no other host.
// The goroutine that reads in ends with it, or with the process.
func DashStream(ctx context.Context, env *Env, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, in)
		cancel()
	}()
	quiet := *env
	quiet.Stderr = io.Discard
	feed, err := dashFeed(&quiet, true)
	if err != nil {
		return err
	}
	infos, err := dashSessions(ctx, env)
	if err != nil {
		return err
	}
	return feed.Stream(ctx, infos, out, remote.StreamEvery, remote.StreamBeat)
}

// dashFeed is the dashboard's feed over env: its tmux server, the
// working directory's configuration for the agents' profiles, the
// sessions' supervisors and the teams' task stores, and unless here (or
// --session names a session) the configured hosts.
func dashFeed(env *Env, here bool) (dash.Feed, error) {
	cfg, err := env.Config()
	if err != nil {
		return dash.Feed{}, err
	}
	// The configured hosts, by name; none for the one session --session
	// names.
	var hostNames []string
	dests := map[string]string{}
	for name, h := range cfg.Hosts {
		if !here && env.Session == "" {
			hostNames = append(hostNames, name)
		}
		dests[name] = cmp.Or(h.SSH, name)
	}
	slices.Sort(hostNames)
	return dash.Feed{
		Tmux: env.Tmux, Clock: env.Clock, Getenv: env.Getenv,
		Sessions:         func(ctx context.Context) ([]tmux.SessionInfo, error) { return dashSessions(ctx, env) },
		Profile:          func(p mux.Pane) agent.Profile { return talk.Profile(cfg, p) },
		SupervisorDir:    supervise.Dir,
		SupervisorClient: func(stateDir string) (*supervise.Client, error) { return operatorClient(env, stateDir) },
		Tasks:            func(ctx context.Context, cwd string) (task.Store, error) { return dashTasks(ctx, env, cwd) },
		Hosts:            hostNames,
		Dests:            dests,
		Host: func(ctx context.Context, name string) dash.Host {
			return remoteCaller(env).DashNamed(ctx, cfg, name)
		},
		WatchHost: func(ctx context.Context, name string, seen func(dash.Host)) {
			remoteCaller(env).DashWatchNamed(ctx, cfg, name, seen)
		},
	}, nil
}

// dashSessions are the party sessions the dashboard shows: the one
// --session names, else all of the server's (session.PartyInfos).
func dashSessions(ctx context.Context, env *Env) ([]tmux.SessionInfo, error) {
	return session.PartyInfos(ctx, env.Tmux, env.Session, env.Tmux.Socket.Resolve(env.Getenv))
}

// dashTasks opens the store of the team linked from cwd, with the
// storage that team's directory configures; its fallbacks are not
// reported (the screen is the dashboard's).
func dashTasks(ctx context.Context, env *Env, cwd string) (task.Store, error) {
	link, err := task.FindLink(cwd)
	if err != nil {
		return nil, err
	}
	cfg, _, err := config.Load(env.Getenv, link.Dir)
	if err != nil {
		return nil, err
	}
	return taskStore(ctx, env, cwd, cfg, "", func(string) {})
}
