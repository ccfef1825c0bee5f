package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/launch"
	"github.com/partyhq/party/core/record"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/core/usage"
)

// Errors of session.
var (
	// ErrExists is a session of that name already on the server.
	ErrExists = errors.New("session exists")
	// ErrAgentMissing is a pane program that is not found.
	ErrAgentMissing = errors.New("agent program not found")
)

// StartOptions are what a session is started with.
type StartOptions struct {
	Name    string   // the session; "" derives it from Cwd
	Panes   []string // ROLE[=COMMAND], in pane order; nil is DefaultPanes
	Cwd     string   // working directory of the panes; "" is Getwd
	Size    string   // WxH of the detached window
	Replace bool     // kill a session of the same name first
	// Config gives a role without a command its configured one, and the
	// review's iterations.
	Config config.Config
	// Review initializes the review state before the agents start, then
	// starts the coordinator (Deps.Coordinator). Dashboard adds a window
	// running party dash (daemon.DashWindow).
	Review    bool
	Dashboard bool
	// Record is a directory to record every pane into, by party record in
	// a window of the session.
	Record string
	// Layout is "panes" (one window split into a pane per role, the
	// default) or "windows" (a window per role, named for it: the target
	// of a role is <session>:<role>.0).
	Layout string
	// Fresh starts a new team where a stored one would come back (its
	// agents' sessions stay listed, Record.Earlier); Restore brings back a
	// team that party stop ended.
	Fresh, Restore bool
	// Supervise asks for the session's supervisor, which core/party
	// starts once the session is up (session itself records it).
	Supervise bool `json:"-"`
	// Notify asks for the session's notifier, which core/party starts
	// once the session is up (session itself records it).
	Notify bool `json:"-"`
	// Worktree are the roles whose panes get a git worktree of their own
	// (AllAgents: every agent pane), on a branch from Base (default: the
	// commit checked out).
	Worktree []string
	Base     string
}

// Result is a started session, as party start --json prints it.
type Result struct {
	Session  string     `json:"session"`
	StateDir string     `json:"state_dir"`
	Socket   string     `json:"socket"`
	Panes    []PaneSpec `json:"panes"`
	// Restored says the team came back (restore.go); Agents say how each
	// agent did.
	Restored bool           `json:"restored,omitempty"`
	Agents   []AgentSession `json:"agents,omitempty"`
}

// String is the result as party start prints it: the session and each
// pane's role=id.
func (r Result) String() string {
	parts := make([]string, len(r.Panes))
	for i, p := range r.Panes {
		parts[i] = p.Role + "=" + p.ID
	}
	out := fmt.Sprintf("started %s: %s", r.Session, strings.Join(parts, " "))
	if r.Restored {
		out = fmt.Sprintf("restored %s: %s", r.Session, strings.Join(parts, " "))
	}
	for _, p := range r.Panes {
		if p.Worktree != "" {
			out += fmt.Sprintf("\n  %s: worktree %s on %s", p.Role, p.Worktree, p.Branch)
		}
	}
	for _, a := range r.Agents {
		out += "\n  " + a.String()
	}
	return out
}

// PaneLaunch is how a pane was started, to respawn it the same way.
type PaneLaunch struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
}

// Start starts a session: one window, a pane per spec, tagged, with the
// agents' hooks wired. A failure once the session exists kills it again.
// A team of that name that died (its record kept, its tmux session gone)
// comes back instead, each agent resuming its own session (restore.go),
// unless opts.Fresh.
func Start(ctx context.Context, d Deps, opts StartOptions) (Result, error) {
	panes, err := ParsePanes(opts.Panes)
	if err != nil {
		return Result{}, err
	}
	if err := configure(panes, opts.Panes, opts.Config); err != nil {
		return Result{}, err
	}
	windows, err := parseLayout(opts.Layout)
	if err != nil {
		return Result{}, err
	}
	if opts.Fresh && opts.Restore {
		return Result{}, fmt.Errorf("%w: --fresh and --restore: choose one", usage.Err)
	}
	cwd := opts.Cwd
	if cwd == "" {
		if cwd, err = d.Getwd(); err != nil {
			return Result{}, err
		}
	}
	if cwd, err = filepath.Abs(cwd); err != nil {
		return Result{}, err
	}
	if !isDir(cwd) {
		return Result{}, fmt.Errorf("%w: --cwd %q is not a directory", usage.Err, cwd)
	}
	name := opts.Name
	if name == "" {
		name = Name(cwd)
	}
	if err := tmux.CheckSessionName(name); err != nil {
		return Result{}, fmt.Errorf("%w: %w", usage.Err, err)
	}
	root, err := state.Root(d.Getenv)
	if err != nil {
		return Result{}, err
	}

	tc := d.Tmux
	exists, err := tc.HasSession(ctx, name)
	if err != nil {
		return Result{}, err
	}
	dir := state.SessionDir(root, d.SocketPath, name)
	if exists {
		if !opts.Replace {
			return Result{}, fmt.Errorf("session %q already exists on %s (use --replace, or 'party stop %s'): %w", name, d.Server, name, ErrExists)
		}
		if err := d.kill(ctx, name); err != nil {
			return Result{}, err
		}
		if err := d.unwireGemini(ctx, dir); err != nil {
			d.warn("%v", err)
		}
	}
	old, oldErr := ReadRecord(dir)
	switch {
	case !exists && !opts.Fresh && oldErr == nil && (old.Stopped == nil || opts.Restore):
		return restore(ctx, d, opts, old, cwd)
	case opts.Restore:
		return Result{}, fmt.Errorf("%w: --restore: no team %q to bring back on %s (party sessions lists them)", usage.Err, name, d.Server)
	}
	w, h, err := ParseSize(cmp.Or(opts.Size, DefaultSize))
	if err != nil {
		return Result{}, err
	}

	if err := state.MkdirPrivate(dir); err != nil {
		return Result{}, err
	}
	for i, p := range panes {
		if len(p.Argv) == 0 {
			continue
		}
		exe, err := LookPath(p.Argv[0], d.Getenv("PATH"), cwd)
		if err != nil {
			return Result{}, fmt.Errorf("--pane %s: %w", p.Role, err)
		}
		panes[i].Argv = append([]string{exe}, p.Argv[1:]...)
	}
	trees, undoTrees, err := prepareWorktrees(ctx, d, opts, name, cwd, panes, old.Worktrees)
	if err != nil {
		return Result{}, err
	}
	started := false
	defer func() {
		if !started {
			undoTrees()
		}
	}()
	release, err := lockGemini(d, root, cwd, panes)
	if err != nil {
		return Result{}, err
	}
	defer release()
	if err := wireHooks(d, dir, cwd, panes, opts.Config.MCP); err != nil {
		return Result{}, err
	}
	if err := wireMCP(d, dir, panes, opts.Config.MCP); err != nil {
		return Result{}, err
	}
	if opts.Review {
		// Before the agents start: their first hooks (SessionStart) already
		// reach the coordinator.
		if d.PrepareReview == nil {
			return Result{}, errors.New("prepare the review: session.Deps has no PrepareReview")
		}
		if err := d.PrepareReview(d, dir, root, panes, opts.Config.Review); err != nil {
			return Result{}, err
		}
	}
	env := append(PaneEnv(d.Environ, name), "PARTY_STATE_DIR="+dir)
	spawns := make([]tmux.Spawn, len(panes))
	tokens := map[string]string{}
	for i, p := range panes {
		penv := append(append(slices.Clone(env), "PARTY_ROLE="+p.Role), p.env...)
		if len(p.launch) == 0 {
			// A shell: tmux's default shell (default-shell, default-command).
			spawns[i] = tmux.Spawn{Cwd: p.dir(cwd), Env: penv}
			continue
		}
		// Each agent proves who it is to the supervisor with a token of its
		// own, in its environment only; the record keeps its hash.
		token := state.NewToken()
		tokens[p.Role] = state.HashToken(token)
		penv = append(penv, "PARTY_RUNTIME_TOKEN="+token)
		// The program's words go through a spec file: tmux never parses them.
		if spawns[i], err = Spawn(d.Exe, dir, p.Role, launch.Spec{Argv: p.launch, Env: penv, Dir: p.dir(cwd)}); err != nil {
			return Result{}, err
		}
	}
	rec := Record{Result: Result{Session: name, StateDir: dir, Socket: d.SocketPath}, Created: d.Clock.Now().UTC(), Cwd: cwd,
		Launch: map[string]PaneLaunch{}, Tokens: tokens, Specs: opts.Panes, Worktrees: keepTrees(trees, old.Worktrees),
		Team: TeamOptions{Layout: opts.Layout, Size: opts.Size, Dashboard: opts.Dashboard, Review: opts.Review,
			Supervise: opts.Supervise, Notify: opts.Notify, Record: opts.Record}}
	for i, p := range panes {
		rec.Launch[p.Role] = PaneLaunch{Argv: spawns[i].Argv, Env: spawns[i].Env}
	}
	if oldErr == nil {
		// The team this one replaces: its agents' sessions stay listed.
		rec.Earlier = earlier(old, Agents(dir, old, d.Getenv))
	}
	if err := buildTeam(ctx, d, &rec, panes, spawns, windows, w, h, release, opts.Config.Review.MaxIterations); err != nil {
		return Result{}, err
	}
	started = true
	return rec.Result, nil
}

// lockGemini locks the Gemini settings of folder cwd when a pane runs
// gemini: they change under their lock, held until the session is live and
// recorded, so that a party stop in the same folder waits, then sees the
// session and keeps the hooks it needs. release may be called more than
// once.
func lockGemini(d Deps, root, cwd string, panes []PaneSpec) (release func(), err error) {
	if d.Gemini == nil || !slices.ContainsFunc(panes, func(p PaneSpec) bool { return p.Agent == agent.Gemini }) {
		return func() {}, nil
	}
	unlock, err := state.LockFile(root, d.Gemini.SettingsPath(cwd))
	if err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(unlock) }, nil
}

// buildTeam creates the session of rec on the server: its window, a pane per
// spawn (or a window per role), tagged, then writes rec with the panes'
// ids, releases the Gemini settings' lock and starts the windows the team
// asked for (dashboard, review coordinator, recorder). A failure kills the
// session again.
func buildTeam(ctx context.Context, d Deps, rec *Record, panes []PaneSpec, spawns []tmux.Spawn, windows bool, w, h int, release func(), maxIterations int) (err error) {
	tc, name, dir := d.Tmux, rec.Session, rec.StateDir
	if windows {
		spawns[0].Window = panes[0].Role
	}
	first, err := tc.NewSession(ctx, name, w, h, spawns[0],
		tmux.Option{Scope: "-w", Target: tmux.SessionTarget(name), Name: "remain-on-exit", Value: "on"})
	if err != nil {
		return err
	}
	// From here on a failure must not leave a half-built session behind.
	created := true
	defer func() {
		if created {
			_ = tc.KillSession(context.WithoutCancel(ctx), name)
			release()
			_ = d.unwireGemini(context.WithoutCancel(ctx), dir)
		}
	}()
	panes[0].ID = first
	for i := 1; i < len(panes); i++ {
		var id string
		if windows {
			id, err = tc.NewWindow(ctx, name, panes[i].Role, spawns[i])
		} else {
			id, err = tc.SplitWindow(ctx, panes[i-1].ID, spawns[i])
		}
		if err != nil {
			return err
		}
		panes[i].ID = id
	}
	opts := layoutOptions(name, dir, panes)
	if windows {
		// Each window keeps its dead pane, as the first does.
		for _, p := range panes[1:] {
			opts = append(opts, tmux.Option{Scope: "-w", Target: p.ID, Name: "remain-on-exit", Value: "on"})
		}
	}
	if err := tc.SetOptions(ctx, opts...); err != nil {
		return err
	}
	rec.Panes = panes
	if err := writeJSONFile(filepath.Join(dir, RecordFile), rec); err != nil {
		return err
	}
	release()
	if rec.Team.Dashboard {
		env := append(PaneEnv(d.Environ, name), "PARTY_STATE_DIR="+dir)
		if err := startDashboard(ctx, d, name, dir, rec.Cwd, env); err != nil {
			return err
		}
	}
	if rec.Team.Review {
		if d.Coordinator == nil {
			return errors.New("start the review coordinator: session.Deps has no Coordinator")
		}
		if err := d.Coordinator(ctx, d, name, dir, maxIterations); err != nil {
			return err
		}
	}
	created = false
	if rec.Team.Record != "" {
		if err := startRecorder(ctx, d, name, dir, rec.Team.Record); err != nil {
			return err
		}
	}
	return nil
}

// parseLayout says whether layout asks for a window per role.
func parseLayout(layout string) (windows bool, err error) {
	switch layout {
	case "", "panes":
		return false, nil
	case "windows":
		return true, nil
	}
	return false, fmt.Errorf("%w: --layout %q: panes (one window, a pane per role) or windows (a window per role)", usage.Err, layout)
}

// layoutOptions are the options of a new session's window and panes: the
// state dir, the pane borders and each pane's role, agent and hooks.
func layoutOptions(name, dir string, panes []PaneSpec) []tmux.Option {
	target := tmux.SessionTarget(name)
	opt := []tmux.Option{
		{Target: target, Name: "@party_state_dir", Value: dir},
		{Scope: "-w", Target: target, Name: "pane-border-status", Value: "top"},
		{Scope: "-w", Target: target, Name: "pane-border-format", Value: " #{?@party_role,#{@party_role} (#{@party_agent}),#{pane_title}} "},
	}
	for _, p := range panes {
		opt = append(opt,
			tmux.Option{Scope: "-p", Target: p.ID, Name: "@party_role", Value: p.Role},
			tmux.Option{Scope: "-p", Target: p.ID, Name: "@party_agent", Value: string(p.Agent)})
		if p.Hooks != "" {
			opt = append(opt, tmux.Option{Scope: "-p", Target: p.ID, Name: "@party_hooks", Value: p.Hooks})
		}
	}
	return opt
}

// Stop kills the session name and takes party's Gemini hooks out of its
// folder again. It returns once every process its panes ran, and every
// descendant of those, has exited: tmux only hangs up on a pane's process,
// and an agent's children (Gemini relaunches itself as a child node) may
// outlive it. What the hang-up leaves gets SIGTERM after StopGrace, then
// SIGKILL. Its state dir is kept, but for what only its agents and
// waiters needed: the messages spilled to files for its agents, the
// records of talks that were killed, and the wake sockets left by
// processes that died.
func Stop(ctx context.Context, d Deps, name string) error {
	info, infoErr := d.Tmux.SessionInfo(ctx, name)
	var roots []int
	if panes, err := d.Tmux.ListPanes(ctx, name); err == nil {
		for _, p := range panes {
			if !p.Dead {
				roots = append(roots, p.PID)
			}
		}
	}
	procs := procTree(roots)
	if err := d.kill(ctx, name); err != nil {
		return err
	}
	if left := endProcs(ctx, d.Clock, procs, StopGrace); len(left) > 0 {
		pids := make([]string, len(left))
		for i, p := range left {
			pids[i] = strconv.Itoa(p.pid)
		}
		d.warn("processes of %s still run after SIGKILL: %s", name, strings.Join(pids, " "))
	}
	if infoErr == nil && info.StateDir != "" {
		// Ended on purpose: the next party start starts a new team (its
		// agents' sessions listed), where one that died comes back.
		if rec, err := ReadRecord(info.StateDir); err == nil {
			now := d.Clock.Now().UTC()
			rec.Stopped = &now
			if err := WriteRecord(info.StateDir, rec); err != nil {
				d.warn("%v", err)
			}
		}
		if err := d.unwireGemini(ctx, info.StateDir); err != nil {
			d.warn("%v", err)
		}
		if err := os.RemoveAll(filepath.Join(info.StateDir, deliver.SpillDir)); err != nil {
			d.warn("%v", err)
		}
		state.SweepUnheld(filepath.Join(info.StateDir, "requests"), ".json")
		state.SweepSession(d.Getenv, info.StateDir)
		hook.SweepUnheard(d.Getenv, info.StateDir)
	}
	return nil
}

// startRecorder runs party record in a new window of the session, so it
// lives and ends with the session, and returns once it records (within 5
// s), so that what is sent after party start is in the recording.
func startRecorder(ctx context.Context, d Deps, session, stateDir, out string) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	spawn, err := Spawn(d.Exe, stateDir, daemon.RecorderWindow, launch.Spec{Argv: []string{d.Exe, "--session", session, "record", "--out", abs}})
	if err != nil {
		return err
	}
	if _, err := d.Tmux.NewWindow(ctx, session, daemon.RecorderWindow, spawn); err != nil {
		return err
	}
	for i := 0; i < 250; i++ {
		if _, held := state.Holder(filepath.Join(stateDir, record.LockFile)); held {
			return nil
		}
		if err := d.Clock.Sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
	d.warn("the recorder of %s has not started after 5s; see its window %s", session, daemon.RecorderWindow)
	return nil
}

// startDashboard runs party dash for the session in a window of its own,
// in the background (the agents' window stays current).
func startDashboard(ctx context.Context, d Deps, session, stateDir, cwd string, env []string) error {
	spawn, err := Spawn(d.Exe, stateDir, daemon.DashWindow, launch.Spec{Argv: []string{d.Exe, "--session", session, "dash"}, Env: env, Dir: cwd})
	if err != nil {
		return err
	}
	_, err = d.Tmux.NewWindow(ctx, session, daemon.DashWindow, spawn)
	return err
}

// Spawn writes the spec of a program to run in a pane of the session whose
// state dir is stateDir, as launch/NAME.json, and returns the Spawn that
// runs it: tmux gets only "EXE exec-spec FILE" and the directory.
func Spawn(exe, stateDir, name string, s launch.Spec) (tmux.Spawn, error) {
	path := filepath.Join(stateDir, "launch", name+".json")
	if err := launch.Write(path, s); err != nil {
		return tmux.Spawn{}, err
	}
	return tmux.Spawn{Cwd: s.Dir, Argv: launch.Command(exe, path)}, nil
}

// PaneEnv is the environment given to every pane: the session, the state
// of the party, PATH (a running server may have another), and every
// PARTY_* variable of the caller.
func PaneEnv(environ []string, session string) []string {
	env := []string{"PARTY_SESSION=" + session}
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "PARTY_SESSION" || k == "PARTY_ROLE":
		case k == "PATH" || strings.HasPrefix(k, "PARTY_"):
			env = append(env, kv)
		}
	}
	return env
}
