package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/launch"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/shellwords"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
)

// StartOptions are the inputs of party start.
type StartOptions struct {
	Session  string
	Panes    []string // ROLE[=COMMAND], in pane order
	Cwd      string
	Size     string // WxH of a detached session
	Replace  bool
	NoAttach bool
	Record   string // record every pane into this directory
	// Review runs the review coordinator; Dashboard adds a pane showing
	// its status.
	Review, Dashboard bool
}

// defaultPanes is the layout when no --pane is given.
var defaultPanes = []string{"codex", "claude", "shell"}

func newStartCmd(f *Factory, runF func(context.Context, *StartOptions) error) *cobra.Command {
	opts := &StartOptions{}
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start a session with one pane per role",
		Long: `Start a tmux session with one window and a pane per --pane ROLE[=COMMAND],
in order. Without COMMAND a role named claude, codex or gemini runs that
agent and any other role gets a shell. The default layout is codex, claude
and a shell. Each pane is tagged with @party_role and @party_agent.`,
		Example: `  party start --pane planner=claude --pane executor=codex
  party start --session review --pane claude --pane codex --no-attach`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			opts.Session = f.Session
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return startRun(c.Context(), f, opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Panes, "pane", nil, "a pane as ROLE[=COMMAND]; repeat in pane order")
	cmd.Flags().StringVar(&opts.Cwd, "cwd", "", "working directory of the panes (default: current)")
	cmd.Flags().StringVar(&opts.Size, "size", "200x50", "window size WxH while detached")
	cmd.Flags().BoolVar(&opts.Replace, "replace", false, "replace a session of the same name")
	cmd.Flags().BoolVar(&opts.NoAttach, "no-attach", false, "do not attach, even on a terminal")
	cmd.Flags().StringVar(&opts.Record, "record", "", "record every pane into this directory (party record, in a window of the session)")
	cmd.Flags().BoolVar(&opts.Review, "review", false, "run the review coordinator (party coordinator) in a hidden window")
	cmd.Flags().BoolVar(&opts.Dashboard, "dashboard", false, "with --review: a small bottom pane showing party status --watch")
	return cmd
}

// paneSpec is one parsed --pane.
type paneSpec struct {
	Role  string     `json:"role"`
	Agent agent.Kind `json:"agent"`
	Argv  []string   `json:"argv"`
	ID    string     `json:"pane"`
	Hooks string     `json:"hooks,omitempty"` // how completion hooks are wired: claude-settings, codex-notify, gemini-settings
	// launch is Argv plus the arguments that wire the hooks.
	launch []string
}

var roleName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

func parsePanes(specs []string) ([]paneSpec, error) {
	if len(specs) == 0 {
		specs = defaultPanes
	}
	seen := map[string]bool{}
	var out []paneSpec
	for _, s := range specs {
		role, command, hasCmd := strings.Cut(s, "=")
		if !roleName.MatchString(role) {
			return nil, fmt.Errorf("%w: --pane %q: role must be letters, digits, '_', '.' or '-'", errUsage, s)
		}
		if seen[role] {
			return nil, fmt.Errorf("%w: --pane %q: role %q given twice", errUsage, s, role)
		}
		seen[role] = true
		var argv []string
		switch {
		case hasCmd:
			var err error
			if argv, err = shellwords.SplitCommand(command); err != nil {
				return nil, fmt.Errorf("%w: --pane %q: %w", errUsage, s, err)
			}
		case agent.Infer([]string{role}) != agent.Generic && agent.Infer([]string{role}) != agent.Shell:
			argv = []string{role}
		}
		out = append(out, paneSpec{Role: role, Agent: agent.Infer(argv), Argv: argv})
	}
	return out, nil
}

var unsafeSession = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// sessionName derives a tmux-safe session name from a directory.
func sessionName(dir string) string {
	n := strings.Trim(unsafeSession.ReplaceAllString(filepath.Base(dir), "-"), "-")
	if n == "" {
		return "party"
	}
	return n
}

func parseSize(s string) (int, int, error) {
	w, h, ok := strings.Cut(s, "x")
	wi, err1 := strconv.Atoi(w)
	hi, err2 := strconv.Atoi(h)
	if !ok || err1 != nil || err2 != nil || wi < 20 || hi < 5 || wi > 1000 || hi > 1000 {
		return 0, 0, fmt.Errorf("%w: --size %q: want WxH, e.g. 200x50", errUsage, s)
	}
	return wi, hi, nil
}

// startResult is what start prints with --json.
type startResult struct {
	Session  string     `json:"session"`
	StateDir string     `json:"state_dir"`
	Socket   string     `json:"socket"`
	Panes    []paneSpec `json:"panes"`
}

func startRun(ctx context.Context, f *Factory, opts *StartOptions) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	if opts.Dashboard && !opts.Review {
		return fmt.Errorf("%w: --dashboard shows the review coordinator: give --review too", errUsage)
	}
	panes, err := parsePanes(opts.Panes)
	if err != nil {
		return err
	}
	for i, p := range panes {
		// A role given without a command runs its configured command.
		if strings.Contains(paneSpecOf(opts.Panes, i), "=") {
			continue
		}
		if c := cfg.AgentFor(p.Role, string(p.Agent)).Command; c != "" {
			argv, err := shellwords.SplitCommand(c)
			if err != nil || len(argv) == 0 {
				return fmt.Errorf("agents.%s.command %q: %w", p.Role, c, config.ErrInvalid)
			}
			panes[i].Argv, panes[i].Agent = argv, agent.Infer(argv)
		}
	}
	w, h, err := parseSize(opts.Size)
	if err != nil {
		return err
	}
	cwd := opts.Cwd
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return err
		}
	}
	if cwd, err = filepath.Abs(cwd); err != nil {
		return err
	}
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		return fmt.Errorf("%w: --cwd %q is not a directory", errUsage, cwd)
	}
	name := opts.Session
	if name == "" {
		name = sessionName(cwd)
	}
	if err := tmux.CheckSessionName(name); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	root, err := f.StateRoot()
	if err != nil {
		return err
	}

	tc := f.Tmux()
	exists, err := tc.HasSession(ctx, name)
	if err != nil {
		return err
	}
	if exists {
		if !opts.Replace {
			return fmt.Errorf("session %q already exists on %s (use --replace, or 'party stop %s'): %w", name, tc.Socket, name, errSessionExists)
		}
		if err := tc.KillSession(ctx, name); err != nil {
			return err
		}
		if err := unwireGemini(ctx, f, state.SessionDir(root, tc.Socket.Resolve(f.Getenv), name)); err != nil {
			fmt.Fprintf(f.IO.ErrOut, "party: %v\n", err)
		}
	}

	socketPath := tc.Socket.Resolve(f.Getenv)
	dir := state.SessionDir(root, socketPath, name)
	if err := state.MkdirPrivate(dir); err != nil {
		return err
	}
	for i, p := range panes {
		if len(p.Argv) == 0 {
			continue
		}
		exe, err := lookPath(p.Argv[0], f.Getenv("PATH"), cwd)
		if err != nil {
			return fmt.Errorf("--pane %s: %w", p.Role, err)
		}
		panes[i].Argv = append([]string{exe}, p.Argv[1:]...)
	}
	if err := wireHooks(f, dir, cwd, panes); err != nil {
		return err
	}
	if opts.Review {
		// Before the agents start: their first hooks (SessionStart) already
		// reach the coordinator.
		if err := review.Init(review.Dir(dir), f.Clock.Now().UTC(), cfg.Review.MaxIterations); err != nil {
			return err
		}
	}
	env := append(paneEnv(f.Environ(), name), "PARTY_STATE_DIR="+dir)
	spawns := make([]tmux.Spawn, len(panes))
	for i, p := range panes {
		penv := append(slices.Clone(env), "PARTY_ROLE="+p.Role)
		if len(p.launch) == 0 {
			// A shell: tmux's default shell (default-shell, default-command).
			spawns[i] = tmux.Spawn{Cwd: cwd, Env: penv}
			continue
		}
		// The program's words go through a spec file: tmux never parses them.
		if spawns[i], err = launchSpawn(dir, p.Role, launch.Spec{Argv: p.launch, Env: penv, Dir: cwd}); err != nil {
			return err
		}
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
			_ = unwireGemini(context.WithoutCancel(ctx), f, dir)
		}
	}()
	panes[0].ID = first
	for i := 1; i < len(panes); i++ {
		id, err := tc.SplitWindow(ctx, panes[i-1].ID, spawns[i])
		if err != nil {
			return err
		}
		panes[i].ID = id
	}
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
	if err := tc.SetOptions(ctx, opt...); err != nil {
		return err
	}
	res := startResult{Session: name, StateDir: dir, Socket: socketPath, Panes: panes}
	launches := map[string]paneLaunch{}
	for i, p := range panes {
		launches[p.Role] = paneLaunch{Argv: spawns[i].Argv, Env: spawns[i].Env}
	}
	rec := struct {
		startResult
		Created time.Time             `json:"created"`
		Cwd     string                `json:"cwd"`
		Launch  map[string]paneLaunch `json:"launch"`
	}{res, f.Clock.Now().UTC(), cwd, launches}
	if err := writeJSONFile(filepath.Join(dir, "session.json"), rec); err != nil {
		return err
	}
	if opts.Dashboard {
		if err := startDashboard(ctx, tc, name, dir, cwd, env); err != nil {
			return err
		}
	}
	if opts.Review {
		if err := startCoordinator(ctx, f, tc, name, dir); err != nil {
			return err
		}
	}
	created = false
	if opts.Record != "" {
		if err := startRecorder(ctx, f, tc, name, dir, opts.Record); err != nil {
			return err
		}
	}

	if f.JSON {
		writeJSON(f.IO.Out, res)
	} else {
		parts := make([]string, len(panes))
		for i, p := range panes {
			parts[i] = p.Role + "=" + p.ID
		}
		fmt.Fprintf(f.IO.Out, "started %s: %s\n", name, strings.Join(parts, " "))
	}
	if opts.NoAttach || !f.IO.InTTY || !f.IO.OutTTY {
		return nil
	}
	return attach(ctx, f, tc, name)
}

// wireHooks adds to the launch command of each claude and codex pane the
// arguments that make the agent report its turns to "party hook": a
// settings file for claude (--settings), a notify program for codex.
// Gemini has no such flag: its hooks go into the folder's
// .gemini/settings.json (wireGemini), and a gemini pane whose folder
// Gemini does not trust keeps the marker, with a warning.
func wireHooks(f *Factory, dir, cwd string, panes []paneSpec) error {
	exe, err := exeForPanes()
	if err != nil {
		return fmt.Errorf("wire hooks: %w", err)
	}
	geminiWired, fallback := false, ""
	for i, p := range panes {
		panes[i].launch = p.Argv
		switch p.Agent {
		case agent.Claude:
			settings := filepath.Join(dir, "claude-settings.json")
			if err := state.WriteFile(settings, hook.ClaudeSettings(hook.ShellQuote(exe)+" hook claude"), 0o600); err != nil {
				return err
			}
			panes[i].launch = append(slices.Clone(p.Argv), "--settings", settings)
			panes[i].Hooks = "claude-settings"
		case agent.Codex:
			panes[i].launch = append(slices.Clone(p.Argv), "-c", hook.CodexNotify([]string{exe, "hook", "codex-notify"}))
			panes[i].Hooks = "codex-notify"
		case agent.Gemini:
			if !geminiWired {
				if fallback, err = wireGemini(f, dir, cwd, p.Argv); err != nil {
					return err
				}
				geminiWired = true
			}
			if fallback != "" {
				fmt.Fprintf(f.IO.ErrOut, "party: warning: %s pane: %s; talk --wait reads party's marker from its screen instead\n", p.Role, fallback)
				continue
			}
			panes[i].Hooks = "gemini-settings"
		}
	}
	return nil
}

// paneSpecOf is the i-th --pane as given, or the default layout's.
func paneSpecOf(specs []string, i int) string {
	if len(specs) == 0 {
		return defaultPanes[i]
	}
	return specs[i]
}

// paneEnv is the environment given to every pane: the session, the state
// of the party, PATH (a running server may have another), and every
// PARTY_* variable of the caller.
func paneEnv(environ []string, session string) []string {
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

// attach switches the current client to the session inside tmux, or runs
// tmux attach on this terminal otherwise.
func attach(ctx context.Context, f *Factory, tc *tmux.Client, name string) error {
	if f.Getenv("TMUX") != "" {
		if _, err := tc.Run(ctx, "switch-client", "-t", tmux.SessionTarget(name)); err == nil {
			return nil
		}
		fmt.Fprintf(f.IO.ErrOut, "party: session %s runs on another server; attach with: tmux %s attach -t %s\n", name, tc.SocketArgs(), name)
		return nil
	}
	argv := tc.Argv("attach-session", "-t", tmux.SessionTarget(name))
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("tmux attach: exit %d", ee.ExitCode())
		}
		return fmt.Errorf("tmux attach: %w", err)
	}
	return nil
}

func writeJSONFile(path string, v any) error {
	var b strings.Builder
	writeJSON(&b, v)
	return state.WriteFile(path, []byte(b.String()), 0o600)
}

// exeForPanes is the party binary that panes and hooks run.
func exeForPanes() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the party binary: %w", err)
	}
	return exe, nil
}

// lookPath finds prog on path (a PATH value) the way a shell would, so the
// pane runs what the caller's PATH names even when the tmux server was
// started with another PATH.
func lookPath(prog, path, cwd string) (string, error) {
	if strings.Contains(prog, "/") {
		if !filepath.IsAbs(prog) {
			prog = filepath.Join(cwd, prog)
		}
		if isExecutable(prog) {
			return prog, nil
		}
		return "", fmt.Errorf("%s is not an executable file: %w", prog, errAgentMissing)
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		if p := filepath.Join(dir, prog); isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found on PATH (install it, or give --pane ROLE=/path/to/%s): %w", prog, prog, errAgentMissing)
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// startRecorder runs party record in a new window of the session, so it
// lives and ends with the session, and returns once it records (within 5
// s), so that what is sent after party start is in the recording.
func startRecorder(ctx context.Context, f *Factory, tc *tmux.Client, session, stateDir, out string) error {
	exe, err := exeForPanes()
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	spawn, err := launchSpawn(stateDir, "party-record", launch.Spec{Argv: []string{exe, "--session", session, "record", "--out", abs}})
	if err != nil {
		return err
	}
	if _, err := tc.NewWindow(ctx, session, "party-record", spawn); err != nil {
		return err
	}
	for i := 0; i < 250; i++ {
		if _, held := state.Holder(filepath.Join(stateDir, recorderLock)); held {
			return nil
		}
		if err := f.Clock.Sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
	fmt.Fprintf(f.IO.ErrOut, "party: the recorder of %s has not started after 5s; see its window party-record\n", session)
	return nil
}

// startDashboard adds a short full-width pane at the bottom of the
// session's window running party status --watch.
func startDashboard(ctx context.Context, tc *tmux.Client, session, stateDir, cwd string, env []string) error {
	exe, err := exeForPanes()
	if err != nil {
		return err
	}
	spawn, err := launchSpawn(stateDir, "party-dashboard", launch.Spec{Argv: []string{exe, "--session", session, "status", "--watch"}, Env: env, Dir: cwd})
	if err != nil {
		return err
	}
	_, err = tc.SplitBottom(ctx, session, 5, spawn)
	return err
}
