package dash

import (
	"slices"
	"strings"
	"time"

	"github.com/partyhq/party/core/hook"
)

// Event is one input of Update.
type Event interface{ event() }

// Tick is the time passing: durations are shown against Now.
type Tick struct{ Now time.Time }

// Pane is one pane of a session as tmux lists it.
type Pane struct {
	ID, Role, Kind string
	Dead           bool
	DeadStatus     string
	Branch         string // its git worktree's branch, when it runs in one
}

// PanesSeen is the list of a session's panes: agents appear (starting),
// stay (their state kept) or go; a dead pane is a dead agent.
type PanesSeen struct {
	Session, StateDir string
	Panes             []Pane
	At                time.Time
}

// SessionGone is a session that ended.
type SessionGone struct{ Session string }

// HookSeen is one event of the session's event log (what an agent's hooks
// reported).
type HookSeen struct {
	Session string
	Event   hook.Event
}

// ScreenSeen is what an agent's screen showed at At, read with its
// profile (observe.Read).
type ScreenSeen struct {
	Session, Pane string
	At            time.Time
	Busy          bool
	Dialog        string // the highlighted line of a dialog, "" when none
	// Permission is what an approval dialog on screen asks, "" when the
	// dialog is not one.
	Permission string
	Ready      bool // an input box is up, with nothing over it
}

// QueueSeen is how many sends and talks wait for each pane of a session
// (panes not named wait for none).
type QueueSeen struct {
	Session string
	Queued  map[string]int
}

// SupervisorSeen is the supervisor's records of a session (nil: none).
type SupervisorSeen struct {
	Session    string
	Supervisor *Supervisor
}

// ReviewSeen is the review coordinator's state of a session (nil: none).
type ReviewSeen struct {
	Session string
	Review  *Review
}

// TasksSeen is the team's tasks of a session (nil: no team).
type TasksSeen struct {
	Session string
	Tasks   *Tasks
}

// UsageSeen is what each role of a session spent, in tokens, from the
// agents' own records (core/spend).
type UsageSeen struct {
	Session string
	Tokens  map[string]int64 // by role
}

// HostSeen is another host's part of the dashboard, as one look at it
// found it (online, or why not).
type HostSeen struct{ Host Host }

func (HostSeen) event()       {}
func (UsageSeen) event()      {}
func (Tick) event()           {}
func (PanesSeen) event()      {}
func (SessionGone) event()    {}
func (HookSeen) event()       {}
func (ScreenSeen) event()     {}
func (QueueSeen) event()      {}
func (SupervisorSeen) event() {}
func (ReviewSeen) event()     {}
func (TasksSeen) event()      {}

// screenGrace is how long after an agent's own event says it turned busy
// a screen that shows it idle is not believed: the screen lags the event.
const screenGrace = 2 * time.Second

// headLen is how many characters of a prompt or an answer are kept.
const headLen = 200

// Update returns the model after ev. It never changes m: the sessions and
// agents it touches are copies.
func Update(m Model, ev Event) Model {
	m.Sessions = slices.Clone(m.Sessions)
	switch ev := ev.(type) {
	case Tick:
		m.Now = ev.Now
	case PanesSeen:
		s := m.session(ev.Session)
		s.StateDir = ev.StateDir
		s.Agents = panesSeen(s.Agents, ev.Panes, ev.At)
	case SessionGone:
		m.Sessions = slices.DeleteFunc(m.Sessions, func(s Session) bool { return s.Name == ev.Session })
	case HookSeen:
		if s := m.existing(ev.Session); s != nil {
			if a := s.Agent(ev.Event.Pane); a != nil {
				hookSeen(a, ev.Event)
			}
		}
	case ScreenSeen:
		if s := m.existing(ev.Session); s != nil {
			if a := s.Agent(ev.Pane); a != nil {
				screenSeen(a, ev)
			}
		}
	case QueueSeen:
		if s := m.existing(ev.Session); s != nil {
			for i := range s.Agents {
				s.Agents[i].Queued = ev.Queued[s.Agents[i].Pane]
			}
		}
	case SupervisorSeen:
		if s := m.existing(ev.Session); s != nil {
			s.Supervisor = ev.Supervisor
		}
	case ReviewSeen:
		if s := m.existing(ev.Session); s != nil {
			s.Review = ev.Review
		}
	case TasksSeen:
		if s := m.existing(ev.Session); s != nil {
			s.Tasks = ev.Tasks
		}
	case HostSeen:
		m.Hosts = hostSeen(m.Hosts, ev.Host)
	case UsageSeen:
		if s := m.existing(ev.Session); s != nil {
			for i := range s.Agents {
				s.Agents[i].Tokens = ev.Tokens[s.Agents[i].Role]
			}
		}
	}
	return m
}

// hostSeen is hosts with h in the place of the host of its name (added
// in name order when missing). A host that stopped answering keeps when
// it was last seen.
func hostSeen(hosts []Host, h Host) []Host {
	hosts = slices.Clone(hosts)
	if h.Sessions == nil {
		h.Sessions = []Session{}
	}
	i, found := slices.BinarySearchFunc(hosts, h.Name, func(x Host, n string) int { return strings.Compare(x.Name, n) })
	if !found {
		return slices.Insert(hosts, i, h)
	}
	if h.Seen.IsZero() {
		h.Seen = hosts[i].Seen
	}
	hosts[i] = h
	return hosts
}

// existing is the session name of m, its agents copied, or nil.
func (m *Model) existing(name string) *Session {
	s := m.Session(name)
	if s != nil {
		s.Agents = slices.Clone(s.Agents)
	}
	return s
}

// session is existing, added (in name order) when missing.
func (m *Model) session(name string) *Session {
	if s := m.existing(name); s != nil {
		return s
	}
	i, _ := slices.BinarySearchFunc(m.Sessions, name, func(s Session, n string) int { return strings.Compare(s.Name, n) })
	m.Sessions = slices.Insert(m.Sessions, i, Session{Name: name})
	return &m.Sessions[i]
}

// panesSeen is the agents of a session after its panes were listed.
func panesSeen(old []Agent, panes []Pane, at time.Time) []Agent {
	var out []Agent
	for _, p := range panes {
		if p.Role == "" {
			continue
		}
		a := Agent{Role: p.Role, Kind: p.Kind, Pane: p.ID, State: Starting, Since: at}
		if i := slices.IndexFunc(old, func(o Agent) bool { return o.Pane == p.ID }); i >= 0 && old[i].Role == p.Role {
			a = old[i]
			a.Kind = p.Kind
		}
		switch {
		case p.Dead && a.State != Dead:
			if a.State == Starting && a.Since.Equal(at) {
				at = time.Time{} // first seen dead: since when is not known
			}
			a.State, a.Since, a.Prompt = Dead, at, ""
			a.Reason = "exited"
			if p.DeadStatus != "" {
				a.Reason = "exited with status " + p.DeadStatus
			}
		case !p.Dead && a.State == Dead:
			// Respawned in the same pane.
			a = Agent{Role: p.Role, Kind: p.Kind, Pane: p.ID, State: Starting, Since: at}
		}
		a.Branch = p.Branch
		out = append(out, a)
	}
	return out
}

// hookSeen applies one of the agent's own events.
func hookSeen(a *Agent, ev hook.Event) {
	if a.State == Dead {
		return
	}
	switch ev.Kind {
	case hook.SessionStart, hook.PromptSubmit, hook.ToolUse, hook.ToolUsed, hook.Notification, hook.TurnComplete, hook.TurnFailed:
		a.Hooked = true
	default:
		return // party's own lines (an input delivered), another program's
	}
	switch ev.Kind {
	case hook.SessionStart:
		if a.State == Starting {
			a.set(Idle, ev.Time, "")
		}
	case hook.PromptSubmit:
		a.set(Busy, ev.Time, "")
		a.busyByEvent = true
		if len(ev.Prompts) > 0 {
			a.Prompt = Head(ev.Prompts[len(ev.Prompts)-1])
		}
	case hook.ToolUse, hook.ToolUsed:
		// A tool about to run, or run: the permission (if one was asked)
		// was given.
		if a.State != Busy {
			a.set(Busy, ev.Time, "")
		}
	case hook.Notification:
		switch ev.Type {
		case hook.PermissionPrompt:
			why := ev.Message
			if ev.Command != "" {
				why += ": " + ev.Command
			}
			switch {
			case a.State != Permission:
				a.set(Permission, ev.Time, Head(why))
			case ev.Command != "":
				// The event that names the command says more than the
				// screen, or a later notification, did.
				a.Reason = Head(why)
			}
		case "idle_prompt":
			if a.State != Busy {
				a.set(Idle, ev.Time, "")
			}
		}
	case hook.TurnComplete:
		a.set(Idle, ev.Time, "")
		a.Prompt = ""
		if ev.Answer != "" {
			a.Answer = Head(ev.Answer)
		}
	case hook.TurnFailed:
		why := ev.Type
		if ev.Message != "" {
			why += ": " + ev.Message
		}
		a.set(Failed, ev.Time, Head(why))
		a.Prompt = ""
	}
}

// screenSeen applies what the agent's screen showed.
func screenSeen(a *Agent, sc ScreenSeen) {
	if a.State == Dead {
		return
	}
	switch {
	case sc.Permission != "":
		if a.State != Permission {
			a.set(Permission, sc.At, Head(sc.Permission))
		}
	case sc.Dialog != "":
		if a.State != Permission && a.State != Dialog {
			a.set(Dialog, sc.At, Head(sc.Dialog))
		}
	case sc.Busy:
		if a.State != Busy {
			a.set(Busy, sc.At, "")
		}
	case sc.Ready:
		switch a.State {
		case Starting, Dialog, Permission:
			a.set(Idle, sc.At, "")
		case Busy:
			// An interrupted turn reports nothing: the screen says it is
			// over, once the event that began it is old enough to trust
			// the screen over it.
			if !a.busyByEvent || sc.At.Sub(a.Since) >= screenGrace {
				a.set(Idle, sc.At, "")
				a.Prompt = ""
			}
		}
	}
}

func (a *Agent) set(s State, at time.Time, reason string) {
	a.State, a.Since, a.Reason, a.busyByEvent = s, at, reason, false
}

// Head is the start of text on one line: spaces collapsed, at most
// headLen characters.
func Head(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > headLen {
		return string(r[:headLen-1]) + "…"
	}
	return text
}
