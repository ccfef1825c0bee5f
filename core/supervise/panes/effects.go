package panes

import (
	"context"
	"fmt"
	"hash/maphash"
	"path/filepath"
	"strings"
	"sync"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/observe"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/talk"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/core/wait"
)

// Effects are the supervisor loop's effects (supervise.Effects) on the
// panes of a tmux session: tmux for the runtimes and their screens, the
// one delivery path, the agents' events and the turn waits of talk.
type Effects struct {
	Tmux   *tmux.Client
	Clock  clock.Clock
	Getenv func(string) string
	// Exe is the party binary a restarted agent's pane runs.
	Exe    string
	Config config.Config
	Info   tmux.SessionInfo
	Record session.Record
	// Deliverer is the delivery path to the session's panes, the roles
	// by pane id.
	Deliverer func(roles map[string]string) *deliver.Deliverer
	// Classify is the error code (supervise.Class) of a failed wait.
	Classify func(error) string
	// Budget says which spent budget bounds role ("" when none does, or
	// Budget is nil): the team's usage against its budgets as they are
	// configured now.
	Budget func(ctx context.Context, role string) string

	// mu guards what the loop's scans and the restarts of its workers
	// (Spawn) share: sessions, logRead, learnt, Record.Tokens, commands
	// and watching.
	mu sync.Mutex
	// sessions are the agents' own session ids by pane, from the event
	// log read up to logRead; learnt counts their changes.
	sessions map[string]string
	logRead  int64
	learnt   int
	// commands are the programs the last Scan found the runtimes' live
	// panes running, by pane, as it named them; watching says it watches
	// each one's process for its end (exits).
	commands map[string]string
	watching bool
	exits    exits
	markSeed maphash.Seed
	// archived is the end of the event log when the rows of Archive's
	// last lines were deleted: a line before it is of a row gone for
	// good, which no prune gives again (archive.go).
	archived int64
	// pulse is where Pulses read the event log up to, and what they last
	// found of each pane (pulse.go).
	pulse struct {
		read    int64
		started bool
		looks   map[string]look
	}
}

var _ supervise.Effects = (*Effects)(nil)

// Scan lists the agent panes party started in the session: those whose
// role has a runtime token in the session's record.
func (e *Effects) Scan(ctx context.Context) ([]supervise.Seen, error) {
	panes, err := e.Tmux.ListPanes(ctx, e.Info.Name)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.learnSessions()
	perWindow := map[string]int{}
	for _, p := range panes {
		perWindow[p.WindowID]++
	}
	var out []supervise.Seen
	var live []int
	e.commands = map[string]string{}
	for _, p := range panes {
		hash := e.Record.Tokens[p.Role]
		if !e.isRuntime(p) {
			continue
		}
		status := supervise.Ready
		runs := !p.Dead && talk.Profile(e.Config, p).Runs(p.CurrentCommand)
		if p.Dead {
			status = supervise.Offline
		} else {
			live = append(live, p.PID)
		}
		if runs {
			// Kept for PanesMark. A pane that runs something else is
			// scanned through each time: its program may be one that has
			// not yet taken the terminal (tmux names it from its command
			// line then, and so does ListPanes).
			e.commands[p.ID] = p.CurrentCommand
		}
		rt := supervise.Runtime{ID: e.Info.Name + "/" + p.Role, Role: p.Role, Workspace: e.Record.DirOf(p.Role),
			Agent: p.Agent, Session: e.Info.Name, Window: p.WindowID, Pane: p.ID,
			Target: targetOf(e.Info.Name, p, perWindow[p.WindowID] == 1), PID: p.PID, Status: status, TokenHash: hash, AgentSession: e.sessionOf(p),
			Tools: e.Record.HasMCP(p.Role)}
		out = append(out, supervise.Seen{Runtime: rt, RunsAgent: runs})
	}
	e.watching = e.exits.watch(ctx, live)
	return out, nil
}

// isRuntime says whether p is the pane of a runtime: an agent pane party
// started (its role has a token in the record). The caller holds e.mu.
func (e *Effects) isRuntime(p mux.Pane) bool {
	return p.Role != "" && e.Record.Tokens[p.Role] != "" && agent.Kind(p.Agent) != agent.Shell
}

var _ supervise.PanesMarker = (*Effects)(nil)

// PanesMark (supervise.PanesMarker) is one listing of the session's panes
// as tmux names them (no /proc read), with the count of the runtimes'
// processes that ended and of the sessions learnt from the event log:
// what Scan reads. It cannot tell (ok false) while a runtime's process is
// not watched for its end, while a runtime's pane runs something else
// than its agent as the last Scan saw it, or a program whose name tmux
// gives otherwise than its process (a path with a space: Scan reads
// /proc), or while a Codex's session is unknown (Scan looks for its
// rollout).
func (e *Effects) PanesMark(ctx context.Context) (string, bool) {
	panes, err := e.Tmux.ListPanesAsIs(ctx, e.Info.Name)
	if err != nil {
		return "", false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.learnSessions()
	if !e.watching {
		return "", false
	}
	if e.markSeed == (maphash.Seed{}) {
		e.markSeed = maphash.MakeSeed()
	}
	var h maphash.Hash // of the panes as Scan reads them: a digest that no window name can forge (a seed of its own)
	h.SetSeed(e.markSeed)
	for _, lp := range panes {
		p := lp.Pane
		if e.isRuntime(p) && !p.Dead {
			if e.commands[p.ID] != p.CurrentCommand {
				return "", false
			}
			if agent.Kind(p.Agent) == agent.Codex && e.sessions[p.ID] == "" {
				return "", false
			}
		}
		// What Scan reads of a pane (not its screen's state, nor its
		// window's activity).
		maphash.WriteComparable(&h, scanned{p.ID, p.WindowID, p.WindowIndex, p.Index, p.WindowName, p.Role, p.Agent, p.PID, p.Dead, p.CurrentCommand})
	}
	return fmt.Sprintf("%d panes %x, %d ended, %d sessions", len(panes), h.Sum64(), e.exits.count(), e.learnt), true
}

// scanned is what Scan reads of a pane.
type scanned struct {
	id, window         string
	windowIndex, index int
	windowName         string
	role, agent        string
	pid                int
	dead               bool
	command            string
}

// Restart starts rt's agent again from its launch spec with a new token,
// in its dead pane or, when the pane is gone, in a new window; with
// resume, the agent resumes its session (its history on screen).
func (e *Effects) Restart(ctx context.Context, rt supervise.Runtime, resume bool) (string, error) {
	pane := rt.Pane
	if p, err := e.Tmux.Pane(ctx, rt.Pane); err != nil || p.Role != rt.Role {
		pane = "" // gone: a window of its own
	}
	id := ""
	if resume {
		id = rt.AgentSession
	} else {
		e.mu.Lock()
		delete(e.sessions, rt.Pane) // a fresh agent has a session of its own
		e.learnt++
		e.mu.Unlock()
	}
	hash, _, err := session.Respawn(ctx, e.Tmux, e.Exe, e.Info.StateDir, rt.Role, pane, id)
	if err != nil {
		return "", err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.Record.Tokens == nil {
		e.Record.Tokens = map[string]string{}
	}
	e.Record.Tokens[rt.Role] = hash
	return hash, nil
}

// learnSessions reads the events logged since the last look for the
// agents' own session ids (Claude's and Gemini's session_id, Codex's
// thread id). The caller holds e.mu.
func (e *Effects) learnSessions() {
	if e.sessions == nil {
		e.sessions = map[string]string{}
	}
	path := filepath.Join(e.Info.StateDir, state.EventLog)
	end := state.Size(path)
	observe.Events{Path: path}.Each("", e.logRead, func(ev hook.Event) bool {
		// Codex's only about its session's start: one about prompts may
		// be another thread's (its title thread quotes the prompts with an
		// id of its own). Gemini names its session only in its turns'.
		if ev.Session != "" && ev.Pane != "" && (len(ev.Prompts) == 0 || ev.Agent != string(agent.Codex)) && e.sessions[ev.Pane] != ev.Session {
			e.sessions[ev.Pane] = ev.Session
			e.learnt++
		}
		return true
	})
	e.logRead = end
}

// sessionOf is the agent session of pane p as its events name it, or, for
// a Codex whose events name none (its notifies carry prompts, and may be
// its title thread's), the thread of the one rollout file it holds open:
// a scan learns it even when no trigger's look did. The caller holds
// e.mu.
func (e *Effects) sessionOf(p mux.Pane) string {
	if s := e.sessions[p.ID]; s != "" || p.Dead || agent.Kind(p.Agent) != agent.Codex {
		return s
	}
	files := wait.CodexRolloutFiles(p.PID, hook.CodexHome(e.Getenv), e.Clock.Now)()
	if len(files) != 1 {
		return ""
	}
	// Kept, so that later scans do not look again (Restart forgets it).
	e.sessions[p.ID] = wait.RolloutThread(files[0])
	e.learnt++
	return e.sessions[p.ID]
}

// targetOf is pane p's tmux target in session: <session>:<role>.<index>
// where it is alone in a window named for its role (--layout windows),
// else by the window's index.
func targetOf(session string, p mux.Pane, alone bool) string {
	if alone && p.WindowName == p.Role && !strings.ContainsAny(p.Role, ".:") {
		return fmt.Sprintf("%s:%s.%d", session, p.Role, p.Index)
	}
	return fmt.Sprintf("%s:%d.%d", session, p.WindowIndex, p.Index)
}

// pane is rt's pane as tmux shows it now.
func (e *Effects) pane(ctx context.Context, rt supervise.Runtime) (mux.Pane, error) {
	p, err := e.Tmux.Pane(ctx, rt.Pane)
	if err == nil && p.Role != rt.Role {
		err = fmt.Errorf("pane %s holds role %q now, not %q: %w", rt.Pane, p.Role, rt.Role, mux.ErrNoPane)
	}
	return p, err
}

var _ supervise.Budgeter = (*Effects)(nil)

// OverBudget says which spent budget bounds rt (Budget).
func (e *Effects) OverBudget(ctx context.Context, rt supervise.Runtime) string {
	if e.Budget == nil {
		return ""
	}
	return e.Budget(ctx, rt.Role)
}
