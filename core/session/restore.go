package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/launch"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/core/usage"
)

// DefaultSize is the size of a detached team's window, WxH.
const DefaultSize = "200x50"

// maxEarlier bounds the earlier agents' sessions a record keeps.
const maxEarlier = 20

// restore brings back the team of rec, whose tmux session is gone: its
// panes or windows as they were, each from its launch spec (the same
// program, arguments, environment, folder and runtime token), an agent
// whose own session is kept started resuming it by its id (never the
// agent's "latest", which would take a parallel team's). An agent whose
// session is not kept starts fresh, with a warning. The --pane specs and
// layout given must be the team's, or none.
func restore(ctx context.Context, d Deps, opts StartOptions, rec Record, cwd string) (Result, error) {
	name, dir := rec.Session, rec.StateDir
	if opts.Panes != nil && !sameSpecs(opts.Panes, rec.Specs) {
		return Result{}, fmt.Errorf("%w: team %q was started with %s, not %s: give the same (or none) to bring it back, or --fresh to start a new team",
			usage.Err, name, paneFlags(rec.Specs), paneFlags(opts.Panes))
	}
	if opts.Layout != "" && opts.Layout != layoutOf(rec.Team.Layout) {
		return Result{}, fmt.Errorf("%w: team %q was started with --layout %s, not %s: give the same (or none) to bring it back, or --fresh",
			usage.Err, name, layoutOf(rec.Team.Layout), opts.Layout)
	}
	if len(opts.Worktree) > 0 && !slices.ContainsFunc(rec.Panes, func(p PaneSpec) bool { return p.Worktree != "" }) {
		return Result{}, fmt.Errorf("%w: team %q was started without worktrees and comes back as it was: --fresh starts it anew with --worktree",
			usage.Err, name)
	}
	if rec.Cwd != cwd {
		return Result{}, fmt.Errorf("%w: team %q was started in %s, not %s: start it there, name another team (--session), or --fresh",
			usage.Err, name, rec.Cwd, cwd)
	}
	windows, err := parseLayout(rec.Team.Layout)
	if err != nil {
		return Result{}, err
	}
	size := cmp.Or(opts.Size, rec.Team.Size, DefaultSize)
	w, h, err := ParseSize(size)
	if err != nil {
		return Result{}, err
	}
	root, err := state.Root(d.Getenv)
	if err != nil {
		return Result{}, err
	}
	panes := slices.Clone(rec.Panes)
	release, err := lockGemini(d, root, cwd, panes)
	if err != nil {
		return Result{}, err
	}
	defer release()
	// What the dead server left running is stale: ended before the team
	// comes back, never run beside it.
	if left := strays(dir); len(left) > 0 {
		if still := endProcs(ctx, d.Clock, left, StopGrace); len(still) > 0 {
			d.warn("warning: %d processes of the team that died still run after SIGKILL", len(still))
		}
	}
	if err := reopenWorktrees(ctx, rec, panes); err != nil {
		return Result{}, err
	}
	agents := Agents(dir, rec, d.Getenv)
	spawns, err := restoreSpawns(d, rec, cwd, panes, agents, opts.Config.MCP)
	if err != nil {
		return Result{}, err
	}
	rec.Stopped = nil
	// What this start asks for besides comes with the team from now on.
	rec.Team.Supervise = rec.Team.Supervise || opts.Supervise
	rec.Team.Notify = rec.Team.Notify || opts.Notify
	rec.Team.Dashboard = rec.Team.Dashboard || opts.Dashboard
	if err := buildTeam(ctx, d, &rec, panes, spawns, windows, w, h, release, opts.Config.Review.MaxIterations); err != nil {
		return Result{}, err
	}
	settle(ctx, d, rec, agents)
	for _, a := range agents {
		if !a.Resumed && a.Session != "" {
			d.warn("warning: %s", a)
		}
	}
	res := rec.Result
	res.Restored, res.Agents = true, agents
	return res, nil
}

// restoreSpawns are the spawns of a team's panes brought back: a shell as
// it was, an agent from its launch spec, resuming its own session where
// agents say it is kept (marked Resumed). The folder's Gemini hooks are
// wired again, with party's MCP server as mcp says.
func restoreSpawns(d Deps, rec Record, cwd string, panes []PaneSpec, agents []AgentSession, mcp config.MCP) ([]tmux.Spawn, error) {
	dir := rec.StateDir
	spawns := make([]tmux.Spawn, len(panes))
	geminiWired := false
	for i, p := range panes {
		if len(p.Argv) == 0 {
			spawns[i] = tmux.Spawn{Cwd: p.dir(cwd), Env: rec.Launch[p.Role].Env}
			continue
		}
		switch {
		case p.Agent != agent.Gemini || p.Hooks == "":
		case p.Worktree != "":
			// The hooks a team that died left in the worktree, or put back;
			// the trust it needs is in its launch spec's environment.
			fallback, _, err := d.wireGeminiTree(dir, cwd, p, mcp)
			if err != nil {
				return nil, err
			}
			warnNoHooks(d, p.Role, fallback)
		case !geminiWired:
			// The hooks a team that died left in its folder, or put back.
			fallback, err := d.wireGemini(dir, cwd, p.Argv, mcp)
			if err != nil {
				return nil, err
			}
			warnNoHooks(d, p.Role, fallback)
			geminiWired = true
		}
		path := filepath.Join(dir, "launch", p.Role+".json")
		ls, err := launch.Read(path)
		if err != nil {
			return nil, fmt.Errorf("bring back %s: %w (party start --fresh starts a new team)", p.Role, err)
		}
		spawns[i] = tmux.Spawn{Cwd: ls.Dir, Argv: launch.Command(d.Exe, path)}
		k := slices.IndexFunc(agents, func(a AgentSession) bool { return a.Role == p.Role })
		if k < 0 || !agents[k].Resumable {
			continue
		}
		argv, err := resumeCommand(d.Exe, dir, p.Role, p.Agent, ls, agents[k].Session)
		if errors.Is(err, agent.ErrNoResume) {
			agents[k].Resumable, agents[k].Why = false, err.Error()
			continue
		}
		if err != nil {
			return nil, err
		}
		spawns[i].Argv, agents[k].Resumed = argv, true
	}
	return spawns, nil
}

// ResumeSettle bounds how long a restore waits for each resumed agent to
// show its input box, or to die refusing its session (the real claude
// prints "No conversation found with session ID" and exits 1 about a
// second after it starts).
const ResumeSettle = 30 * time.Second

// settle waits until every agent a restore resumed shows its input box or
// has died, at most ResumeSettle; one that died refusing its session is
// started again fresh in its pane, and agents says why.
func settle(ctx context.Context, d Deps, rec Record, agents []AgentSession) {
	pending := map[string]int{}
	for _, p := range rec.Panes {
		if k := slices.IndexFunc(agents, func(a AgentSession) bool { return a.Role == p.Role && a.Resumed }); k >= 0 {
			pending[p.ID] = k
		}
	}
	deadline := d.Clock.Now().Add(ResumeSettle)
	for len(pending) > 0 && d.Clock.Now().Before(deadline) {
		panes, err := d.Tmux.ListPanes(ctx, rec.Session)
		if err != nil {
			return
		}
		for id := range pending {
			if !slices.ContainsFunc(panes, func(p mux.Pane) bool { return p.ID == id }) {
				delete(pending, id) // the pane is gone: nothing to wait for
			}
		}
		for _, p := range panes {
			k, ok := pending[p.ID]
			if !ok {
				continue
			}
			screen, err := d.Tmux.Capture(ctx, p.ID, 0)
			if err != nil {
				continue
			}
			if !p.Dead {
				if _, ready := agent.Lookup(agents[k].Agent).InputLine(screen); ready {
					delete(pending, p.ID)
				}
				continue
			}
			delete(pending, p.ID)
			a := &agents[k]
			a.Resumed, a.Resumable = false, false
			a.Why = "the agent refused to resume it"
			if first := firstLine(screen); first != "" {
				a.Why += ": " + first
			}
			path := filepath.Join(rec.StateDir, "launch", a.Role+".json")
			if err := d.Tmux.RespawnPane(ctx, p.ID, tmux.Spawn{Cwd: rec.Cwd, Argv: launch.Command(d.Exe, path)}); err != nil {
				a.Why += "; starting it fresh failed too: " + err.Error()
			}
		}
		if d.Clock.Sleep(ctx, 100*time.Millisecond) != nil {
			return
		}
	}
}

// firstLine is the first line of screen with text on it but tmux's own
// "Pane is dead" line: an agent that refuses a session says why first
// (claude: "No conversation found with session ID: …", then how to resume
// it).
func firstLine(screen string) string {
	for _, l := range strings.Split(screen, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "Pane is dead") {
			return l
		}
	}
	return ""
}

// earlier is what a fresh start over old keeps of it: its agents that had
// a session of their own, then what old kept, at most maxEarlier.
func earlier(old Record, agents []AgentSession) []AgentSession {
	var out []AgentSession
	for _, a := range agents {
		if a.Session != "" {
			a.Resumable, a.Why = false, ""
			out = append(out, a)
		}
	}
	out = append(out, old.Earlier...)
	if len(out) > maxEarlier {
		out = out[:maxEarlier]
	}
	return out
}

// layoutOf is a team's layout by its name, "" being panes.
func layoutOf(layout string) string {
	if layout == "" {
		return "panes"
	}
	return layout
}

// paneFlags are specs as the --pane flags that give them.
func paneFlags(specs []string) string {
	if len(specs) == 0 {
		return "the default panes (" + paneFlags(DefaultPanes()) + ")"
	}
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = "--pane " + s
	}
	return strings.Join(out, " ")
}
