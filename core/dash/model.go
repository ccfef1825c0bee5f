package dash

import (
	"fmt"
	"time"
)

// State is what an agent is doing, as the dashboard shows it.
type State int

// The states of an agent.
const (
	Starting   State = iota // its pane runs, no prompt or event seen yet
	Idle                    // waits for a prompt
	Busy                    // works on a turn
	Permission              // asks a permission (a tool, a command)
	Dialog                  // shows another dialog (trust, a menu, a question)
	Failed                  // its last turn failed (Reason says why)
	Dead                    // its pane's process exited
	numStates
)

var stateNames = [...]string{"starting", "idle", "busy", "permission", "dialog", "failed", "dead"}

func (s State) String() string {
	if s < 0 || s >= numStates {
		return fmt.Sprintf("State(%d)", int(s))
	}
	return stateNames[s]
}

// MarshalText writes the state's name.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a state's name.
func (s *State) UnmarshalText(b []byte) error {
	for i, n := range stateNames {
		if n == string(b) {
			*s = State(i)
			return nil
		}
	}
	return fmt.Errorf("unknown agent state %q", b)
}

// NeedsHuman says whether an agent in s waits for a person.
func (s State) NeedsHuman() bool { return s == Permission || s == Dialog || s == Failed }

// Model is everything the dashboard shows, at Now: this host's party
// sessions, and the other hosts' (Hosts: the configured ones; none when
// no host is configured).
type Model struct {
	Now      time.Time `json:"now"`
	Sessions []Session `json:"sessions"`
	Hosts    []Host    `json:"hosts,omitempty"`
}

// Host is another host's part of the dashboard: its party sessions as the
// party there read them (party dash --once there), or why it could not be
// read.
type Host struct {
	Name string `json:"name"`
	SSH  string `json:"ssh"`
	// Online says its last look answered; before the first look it is
	// neither online nor has an Error (Looking).
	Online bool       `json:"online"`
	Error  *HostError `json:"error,omitempty"`
	// Sessions are its party sessions at its last look (none offline).
	Sessions []Session `json:"sessions"`
	// Seen is when it last answered; Elapsed how long its last look took,
	// in milliseconds.
	Seen    time.Time `json:"seen,omitzero"`
	Elapsed int64     `json:"elapsed_ms"`
}

// HostError is why a host could not be read: its stable code in the
// error table (HOST_TIMEOUT, HOST_UNREACHABLE, VERSION_MISMATCH, …) and
// the message.
type HostError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Looking says the host was not looked at yet.
func (h Host) Looking() bool { return !h.Online && h.Error == nil }

// Looking are the hosts names as the dashboard shows them before their
// first look.
func Looking(names []string, dests map[string]string) []Host {
	out := make([]Host, 0, len(names))
	for _, n := range names {
		out = append(out, Host{Name: n, SSH: dests[n], Sessions: []Session{}})
	}
	return out
}

// Session is one party session of the server.
type Session struct {
	Name     string  `json:"name"`
	StateDir string  `json:"state_dir"`
	Agents   []Agent `json:"agents"`
	// Supervisor, Review and Tasks are nil when the session has none (no
	// supervisor store, not started with --review, no team linked).
	Supervisor *Supervisor `json:"supervisor,omitempty"`
	Review     *Review     `json:"review,omitempty"`
	Tasks      *Tasks      `json:"tasks,omitempty"`
}

// Agent is one pane of a session with a role.
type Agent struct {
	Role  string `json:"role"`
	Kind  string `json:"kind"` // claude, codex, gemini, generic, shell
	Pane  string `json:"pane"`
	State State  `json:"state"`
	// Branch is its git worktree's branch, when it runs in one.
	Branch string `json:"branch,omitempty"`
	// Tokens are what its role spent in the session, from the agent's own
	// records (0: none recorded, or an agent that keeps none).
	Tokens int64 `json:"tokens,omitempty"`
	// Since is when the agent entered State (busy: when its turn began).
	Since time.Time `json:"since,omitzero"`
	// Reason is what a permission or dialog asks, why a turn failed, or
	// how a dead pane exited.
	Reason string `json:"reason,omitempty"`
	// Prompt is the head of the running prompt (busy only), Answer that
	// of the last answer.
	Prompt string `json:"prompt,omitempty"`
	Answer string `json:"answer,omitempty"`
	// Queued is how many sends and talks wait for the agent's pane.
	Queued int `json:"queued"`
	// Hooked says the agent's state came from its own events; screens
	// then only fill in what events do not tell.
	Hooked bool `json:"hooked"`
	// busyByEvent says Busy came from the agent's own submit event,
	// which its screen may lag.
	busyByEvent bool
}

// Supervisor is what the session's supervisor recorded.
type Supervisor struct {
	Running  bool      `json:"running"`
	Runtimes []Runtime `json:"runtimes"`
	// Triggers are the open ones (not completed), and those that failed.
	Triggers []Trigger `json:"triggers"`
}

// Runtime is one runtime of the supervisor.
type Runtime struct {
	Role         string `json:"role"`
	Status       string `json:"status"`
	OperatorBusy bool   `json:"operator_busy,omitempty"`
	LastTrigger  string `json:"last_trigger,omitempty"`
	// StalledSince is when its agent was found stalled (busy, no sign of
	// life for supervise.stallAfter); zero while it is not.
	StalledSince time.Time `json:"stalled_since,omitzero"`
}

// Trigger is one trigger of the supervisor that is open or failed.
type Trigger struct {
	ID     string `json:"id"`
	Role   string `json:"role"`
	Status string `json:"status"`          // queued, deferred, triggering, delivered, retrying, acked, failed
	Class  string `json:"class,omitempty"` // deferred or failed: why
	Error  string `json:"error,omitempty"`
	// Since is when it was last updated.
	Since time.Time `json:"since"`
}

// Review is the review coordinator's state.
type Review struct {
	State         string     `json:"state"`
	Phase         string     `json:"phase,omitempty"`
	Since         time.Time  `json:"since"`
	Iteration     int        `json:"iteration"`
	MaxIterations int        `json:"max_iterations"`
	Reviews       int        `json:"reviews"`
	Evidence      []Evidence `json:"evidence"`
	Note          string     `json:"note,omitempty"` // why NEEDS_DISCUSSION
	Running       bool       `json:"running"`        // the coordinator's process runs
}

// Evidence is one kind of evidence and whether it is there and fresh.
type Evidence struct {
	Kind    string `json:"kind"`
	Present bool   `json:"present"`
	Fresh   bool   `json:"fresh"`
}

// Tasks are the team's tasks.
type Tasks struct {
	Team  string `json:"team,omitempty"`
	Items []Task `json:"items"`
}

// Task is one task of the team.
type Task struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Status   string `json:"status"`
	Assignee string `json:"assignee,omitempty"`
}

// Count is how many tasks have status.
func (t *Tasks) Count(status string) int {
	n := 0
	for _, it := range t.Items {
		if it.Status == status {
			n++
		}
	}
	return n
}

// Session returns the session name of m, or nil.
func (m *Model) Session(name string) *Session {
	for i := range m.Sessions {
		if m.Sessions[i].Name == name {
			return &m.Sessions[i]
		}
	}
	return nil
}

// Agent returns the agent of pane in s, or nil.
func (s *Session) Agent(pane string) *Agent {
	for i := range s.Agents {
		if s.Agents[i].Pane == pane {
			return &s.Agents[i]
		}
	}
	return nil
}

// AnyBusy says whether an agent of m shows a duration that moves by the
// second (busy, or waiting for a person).
func (m Model) AnyBusy() bool {
	for _, hs := range m.shown() {
		for _, a := range hs.Agents {
			if a.State == Busy || a.State.NeedsHuman() {
				return true
			}
		}
	}
	return false
}

// hostSession is a session the dashboard shows, with its host ("": this
// one).
type hostSession struct {
	Host string
	*Session
}

// shown are the sessions of m in the order the dashboard shows them:
// this host's, then each other host's.
func (m Model) shown() []hostSession {
	var out []hostSession
	for i := range m.Sessions {
		out = append(out, hostSession{"", &m.Sessions[i]})
	}
	for _, h := range m.Hosts {
		for i := range h.Sessions {
			out = append(out, hostSession{h.Name, &h.Sessions[i]})
		}
	}
	return out
}
