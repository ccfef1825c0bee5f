package party

import (
	"context"
	"fmt"
	"github.com/partyhq/party/core/hosts"
	"io"
	"os"
	"strings"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/iterm"
	"github.com/partyhq/party/core/registry"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/termsafe"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/core/wait"
)

// Env is what an operation takes from the process. Build one per command:
// Config loads the configuration once and keeps it (as does ConfigIn,
// which loads another directory's over it).
type Env struct {
	Tmux    *tmux.Client
	Clock   clock.Clock
	Getenv  func(string) string
	Environ []string // the process's environment, KEY=VALUE
	Getwd   func() (string, error)
	// Session is the session the user named (--session); "" picks one
	// (session.Pick).
	Session string
	// Stderr gets warnings and progress; StderrTTY says it is a terminal
	// (a spinner rather than a line every few seconds).
	Stderr    io.Writer
	StderrTTY bool
	// Exe is the party binary panes and hooks run; "" is this process's.
	Exe string
	// SSH runs ssh for the commands that reach other hosts; nil is
	// os/exec (hosts.ExecRunner).
	SSH hosts.Runner

	cfg *config.Config
	// registryNoted: the untrusted agents.json was mentioned on stderr.
	registryNoted bool
}

// NewTmux is a client of the tmux server of socket, else of the
// environment (tmux.SocketFromEnv), that runs tmux with runner (nil: with
// environ, since tmux gives a new pane the PATH of the client that made
// it), and with $PARTY_TMUX_CONFIG as its config file.
func NewTmux(socket tmux.Socket, getenv func(string) string, environ []string, runner tmux.Runner) *tmux.Client {
	if runner == nil {
		runner = tmux.ExecRunner{Env: environ}
	}
	c := tmux.New(tmux.SocketFromEnv(socket, getenv), runner)
	c.Config = getenv("PARTY_TMUX_CONFIG")
	return c
}

// Warnf writes a line "party: …" to stderr, terminal-safe
// (termsafe.Text).
func (e *Env) Warnf(format string, a ...any) {
	fmt.Fprintln(e.Stderr, "party: "+termsafe.Text(fmt.Sprintf(format, a...)))
}

// Config is the configuration of the working directory, loaded once;
// warnings about unknown keys and ignored untrusted ones go to stderr.
func (e *Env) Config() (config.Config, error) {
	if e.cfg != nil {
		return *e.cfg, nil
	}
	cwd, err := e.Getwd()
	if err != nil {
		return config.Config{}, err
	}
	return e.ConfigIn(cwd)
}

// ConfigIn loads the configuration with dir's local file and keeps it for
// the command.
func (e *Env) ConfigIn(dir string) (config.Config, error) {
	c, warns, err := config.Load(e.Getenv, dir)
	for _, w := range warns {
		e.Warnf("warning: %s", w)
	}
	if err != nil {
		return c, err
	}
	if len(c.Ignored) > 0 {
		e.Warnf("%s is not trusted: ignoring %s (read it, then run 'party config trust')", c.Local, strings.Join(c.Ignored, ", "))
	}
	e.cfg = &c
	return c, nil
}

// StateRoot is party's state root directory.
func (e *Env) StateRoot() (string, error) { return state.Root(e.Getenv) }

// Executable is the party binary that panes and hooks run.
func (e *Env) Executable() (string, error) {
	if e.Exe != "" {
		return e.Exe, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the party binary: %w", err)
	}
	return exe, nil
}

// Pick is how an operation chooses its session: Session, then the
// environment (session.Pick).
func (e *Env) Pick() session.Pick {
	return session.Pick{Name: e.Session, Getenv: e.Getenv, Server: e.Tmux.Socket.String()}
}

// Open reads the session the operation acts on.
func (e *Env) Open(ctx context.Context) (session.Scope, error) {
	return session.Open(ctx, e.Tmux, e.Pick())
}

// OpenParty is Open for a session party started (with a state dir).
func (e *Env) OpenParty(ctx context.Context) (session.Scope, error) {
	return session.OpenParty(ctx, e.Tmux, e.Pick())
}

// Resolver resolves roles through the registry of the working directory,
// noting once on stderr that an untrusted one is ignored.
func (e *Env) Resolver() registry.Resolver {
	rv := registry.Resolver{Tmux: e.Tmux, Pick: e.Pick(), Trust: config.TrustStoreFor(e.Getenv),
		Untrusted: func(path string) {
			if !e.registryNoted {
				e.registryNoted = true
				e.Warnf("%s is not trusted: ignoring its names (read it, then run 'party config trust')", path)
			}
		}}
	if wd, err := e.Getwd(); err == nil {
		rv.Path = registry.Path(wd)
	}
	return rv
}

// Resolve finds the pane of role: a registered agent, else the one pane
// of the session tagged with it.
func (e *Env) Resolve(ctx context.Context, role string) (session.Target, error) {
	return e.Resolver().Resolve(ctx, role)
}

// Deliverer is the delivery protocol for the session info of the server
// (NewDeliverer); roles names the panes it types into.
func (e *Env) Deliverer(root string, info tmux.SessionInfo, roles map[string]string) *deliver.Deliverer {
	return NewDeliverer(e.Tmux, e.Clock, e.Getenv, deliver.LockDir(root, info.SocketPath), info.StateDir, roles)
}

// Watch starts the wake-up watcher of session name (wait.Watch), pausing
// a pane's output after each wake-up when pause is set; that waits fall
// back to polling is a warning on stderr.
func (e *Env) Watch(ctx context.Context, name, stateDir string, output, pause bool) (*wait.Watcher, error) {
	return wait.Watch(ctx, wait.WatchConfig{Tmux: e.Tmux, Session: name, StateDir: stateDir, Getenv: e.Getenv, Output: output, Pause: pause,
		Warn: func(err error) { e.Warnf("no control-mode client (%v); polling", err) }})
}

// SessionDeps are the dependencies of core/session.
func (e *Env) SessionDeps() (session.Deps, error) {
	exe, err := e.Executable()
	if err != nil {
		return session.Deps{}, err
	}
	warn := func(msg string) { e.Warnf("%s", msg) }
	live := func(ctx context.Context, socket, name string) bool {
		c := *e.Tmux
		c.Socket = tmux.Socket{Path: socket}
		ok, err := c.HasSession(ctx, name)
		return err == nil && ok
	}
	return session.Deps{
		Tmux: e.Tmux, Server: e.Tmux.Socket.String(), SocketPath: e.Tmux.Socket.Resolve(e.Getenv),
		Getenv: e.Getenv, Environ: e.Environ, Getwd: e.Getwd, Clock: e.Clock, Exe: exe,
		Warn: warn, Live: live,
		Unlink:        func(ctx context.Context, name string) error { return iterm.DropView(ctx, e.Tmux, name) },
		PrepareReview: prepareReview,
		Coordinator:   startCoordinator,
		Gemini:        hook.GeminiWiring{Exe: exe, Getenv: e.Getenv, Live: live, Warn: warn},
	}, nil
}
