package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/observe"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/core/worktree"
)

// AgentSession is what a team knows of one agent's own session: its role
// and kind, the agent's session id (Claude's and Gemini's session_id,
// Codex's thread), the file the agent keeps it in, when the team last
// heard of it, and whether a restore would resume it.
type AgentSession struct {
	Role       string     `json:"role"`
	Agent      agent.Kind `json:"agent"`
	Session    string     `json:"session_id,omitempty"`
	Transcript string     `json:"transcript,omitempty"`
	LastActive *time.Time `json:"last_active,omitempty"`
	Resumable  bool       `json:"resumable"`
	// Why says why a restore would start the agent fresh.
	Why string `json:"why,omitempty"`
	// Resumed says a restore started the agent resuming Session (in
	// party start's result only).
	Resumed bool `json:"resumed,omitempty"`
}

// String is the agent as party start says what it restored.
func (a AgentSession) String() string {
	switch {
	case a.Resumed:
		return fmt.Sprintf("%s: resumed %s session %s", a.Role, a.Agent, a.Session)
	case a.Session != "":
		return fmt.Sprintf("%s: started fresh, its session %s not resumed: %s", a.Role, a.Session, a.Why)
	}
	return fmt.Sprintf("%s: started fresh: %s", a.Role, a.Why)
}

// Agents are the agents of the team recorded in rec, in pane order, with
// what the team's event log (stateDir) says of their own sessions. getenv
// finds Codex's home (CODEX_HOME, HOME). Shells and generic programs have
// no session to resume.
func Agents(stateDir string, rec Record, getenv func(string) string) []AgentSession {
	byRole := map[string]*roleEvents{}
	paneRole := map[string]string{}
	for _, p := range rec.Panes {
		paneRole[p.ID] = p.Role
	}
	observe.Events{Path: filepath.Join(stateDir, state.EventLog)}.Each("", 0, func(ev hook.Event) bool {
		if ev.Time.Before(rec.Created) {
			return true // a team this one replaced (a fresh start in the same state dir)
		}
		role := ev.Role
		if role == "" {
			role = paneRole[ev.Pane] // an event logged before events named their role
		}
		if role == "" {
			return true
		}
		r := byRole[role]
		if r == nil {
			r = &roleEvents{}
			byRole[role] = r
		}
		r.add(ev)
		return true
	})
	var out []AgentSession
	for _, p := range rec.Panes {
		if !agent.Resumable(p.Agent) {
			continue
		}
		a := AgentSession{Role: p.Role, Agent: p.Agent}
		if r := byRole[p.Role]; r != nil {
			if !r.last.IsZero() {
				t := r.last
				a.LastActive = &t
			}
			a.Session, a.Transcript = r.pick(p.Agent, getenv)
		}
		a.Resumable, a.Why = resumable(a)
		out = append(out, a)
	}
	return out
}

// roleEvents gathers one role's events: the sessions they name, latest
// last, with the transcript each names.
type roleEvents struct {
	last        time.Time
	sessions    []string
	transcripts map[string]string
}

func (r *roleEvents) add(ev hook.Event) {
	if ev.Time.After(r.last) {
		r.last = ev.Time
	}
	if ev.Session == "" {
		return
	}
	if i := slices.Index(r.sessions, ev.Session); i >= 0 {
		r.sessions = slices.Delete(r.sessions, i, i+1)
	}
	r.sessions = append(r.sessions, ev.Session)
	if ev.Transcript != "" {
		if r.transcripts == nil {
			r.transcripts = map[string]string{}
		}
		r.transcripts[ev.Session] = ev.Transcript
	}
}

// pick is the session a restore resumes, and its file: the latest one the
// events name. A Codex's notifies may name another thread of its own (the
// one that titles the session, which keeps no rollout): its session is the
// latest thread whose rollout is on disk.
func (r *roleEvents) pick(kind agent.Kind, getenv func(string) string) (id, transcript string) {
	if len(r.sessions) == 0 {
		return "", ""
	}
	if kind != agent.Codex {
		id = r.sessions[len(r.sessions)-1]
		return id, r.transcripts[id]
	}
	home := hook.CodexHome(getenv)
	for i := len(r.sessions) - 1; i >= 0; i-- {
		if f := agent.CodexRollout(home, r.sessions[i]); f != "" {
			return r.sessions[i], f
		}
	}
	return r.sessions[len(r.sessions)-1], ""
}

// resumable says whether the agent keeps a's session, and why not.
func resumable(a AgentSession) (bool, string) {
	switch {
	case a.Session == "":
		return false, "no session of its own yet (it took no prompt)"
	case a.Transcript == "" && a.Agent == agent.Codex:
		return false, "Codex keeps no rollout of thread " + a.Session
	case a.Transcript == "":
		return false, "its events name no transcript of the session"
	}
	if _, err := os.Stat(a.Transcript); err != nil {
		return false, "its transcript " + a.Transcript + " is gone"
	}
	return true, ""
}

// Stored is a team party ran on this server: its record, its state dir,
// whether it runs now, and its agents.
type Stored struct {
	Name     string     `json:"session"`
	StateDir string     `json:"state_dir"`
	Cwd      string     `json:"cwd"`
	Created  time.Time  `json:"created"`
	Stopped  *time.Time `json:"stopped,omitempty"`
	Live     bool       `json:"live"`
	// State is live, restorable (it died: party start brings it back)
	// or stopped (party stop ended it: party start --restore).
	State   string         `json:"state"`
	Agents  []AgentSession `json:"agents"`
	Earlier []AgentSession `json:"earlier,omitempty"`
	// Worktrees are the agents' own git worktrees (party start --worktree).
	Worktrees []worktree.Tree `json:"worktrees,omitempty"`
}

// The States of a stored team.
const (
	TeamLive       = "live"
	TeamRestorable = "restorable"
	TeamStopped    = "stopped"
)

// teamState is the State of a team.
func teamState(live bool, stopped *time.Time) string {
	switch {
	case live:
		return TeamLive
	case stopped != nil:
		return TeamStopped
	}
	return TeamRestorable
}

// ErrNoTeam is a team name party keeps no record of.
var ErrNoTeam = errors.New("no such team")

// Teams are the teams party keeps records of for the server d works on,
// by name; cwd, when given, keeps those of that folder.
func Teams(ctx context.Context, d Deps, cwd string) ([]Stored, error) {
	root, err := state.Root(d.Getenv)
	if err != nil {
		return nil, err
	}
	dirs, err := os.ReadDir(filepath.Join(root, "sessions"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	live := liveSessions(ctx, d.Tmux)
	var out []Stored
	for _, e := range dirs {
		dir := filepath.Join(root, "sessions", e.Name())
		rec, err := ReadRecord(dir)
		if err != nil || rec.Socket != d.SocketPath || (cwd != "" && rec.Cwd != cwd) {
			continue
		}
		// The record is the server's own only where the name hashes there.
		if state.SessionDir(root, d.SocketPath, rec.Session) != dir {
			continue
		}
		live := live(rec.Session)
		out = append(out, Stored{Name: rec.Session, StateDir: dir, Cwd: rec.Cwd, Created: rec.Created,
			Stopped: rec.Stopped, Live: live, State: teamState(live, rec.Stopped), Agents: Agents(dir, rec, d.Getenv), Earlier: rec.Earlier,
			Worktrees: rec.Worktrees})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// liveSessions says which sessions the server has: from one listing when
// tc can list them (a tmux process a team cost 2 s over 200 teams),
// else asked one by one. No server: nothing is live.
func liveSessions(ctx context.Context, tc Tmux) func(name string) bool {
	if l, ok := tc.(interface {
		ListSessions(ctx context.Context) ([]tmux.Session, error)
	}); ok {
		if list, err := l.ListSessions(ctx); err == nil {
			names := map[string]bool{}
			for _, s := range list {
				names[s.Name] = true
			}
			return func(name string) bool { return names[name] }
		}
	}
	return func(name string) bool {
		live, err := tc.HasSession(ctx, name)
		return err == nil && live
	}
}

// Forget drops team name on the server d works on: its state dir (the
// record, the supervisor's store, the logs) and party's Gemini hooks in
// its folder, so that no party start brings it back, and returns the dir.
// Its agents' own transcripts are theirs, and kept. A live team is
// refused: party stop first; so is one with worktrees, which hold its
// agents' work (party worktree remove or prune first).
func Forget(ctx context.Context, d Deps, name string) (string, error) {
	root, err := state.Root(d.Getenv)
	if err != nil {
		return "", err
	}
	dir := state.SessionDir(root, d.SocketPath, name)
	rec, err := ReadRecord(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%w: %q on %s (party sessions lists them)", ErrNoTeam, name, d.Server)
		}
		return "", err
	}
	if len(rec.Worktrees) > 0 {
		return "", fmt.Errorf("team %q has worktrees holding its agents' work (party --session %s worktree remove ROLE, or prune, first): %w",
			name, name, worktree.ErrTaken)
	}
	if live, err := d.Tmux.HasSession(ctx, name); err == nil && live {
		return "", fmt.Errorf("team %q runs (party stop %s first): %w", name, name, ErrExists)
	}
	// A team that died left its hooks in its folder's Gemini settings.
	if err := d.unwireGemini(ctx, dir); err != nil {
		return "", err
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("forget %s: %w", name, err)
	}
	return dir, nil
}

// sameSpecs says whether the --pane specs given match the ones the team
// was started with (nil or empty: the default panes).
func sameSpecs(given, stored []string) bool {
	norm := func(s []string) string {
		if len(s) == 0 {
			s = DefaultPanes()
		}
		return strings.Join(s, "\x00")
	}
	return norm(given) == norm(stored)
}

// Restored is a team RestoreAll brought back, or why it could not.
type Restored struct {
	Team   string `json:"session"`
	Cwd    string `json:"cwd"`
	Result Result `json:"result"`
	Err    error  `json:"-"`
	Error  string `json:"error,omitempty"`
}

// RestoreAll brings back each of teams whose server died
// (TeamRestorable) with start, as party start in its folder would. One
// that fails does not stop the others; the error says how many failed.
func RestoreAll(teams []Stored, start func(Stored) (Result, error)) ([]Restored, error) {
	var out []Restored
	failed := 0
	for _, t := range teams {
		if t.State != TeamRestorable {
			continue
		}
		res, err := start(t)
		r := Restored{Team: t.Name, Cwd: t.Cwd, Result: res, Err: err}
		if err != nil {
			r.Error, failed = err.Error(), failed+1
		}
		out = append(out, r)
	}
	if failed > 0 {
		return out, fmt.Errorf("%d of %d teams not brought back", failed, len(out))
	}
	return out, nil
}
