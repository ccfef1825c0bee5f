package sim

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/partyhq/party/core/mux"
)

// Call is one multiplexer call, recorded for assertions.
type Call struct {
	Op   string // pane, list, capture, paste, key, leave-mode
	Pane string
	Arg  string
}

// Mux is an in-memory multiplexer.
type Mux struct {
	Clock *Clock
	mu    sync.Mutex
	panes []*Pane
	calls []Call
}

var _ mux.Multiplexer = (*Mux)(nil)

// NewMux returns an empty multiplexer on clock.
func NewMux(clock *Clock) *Mux { return &Mux{Clock: clock} }

// Pane is one simulated pane.
type Pane struct {
	Info  mux.Pane
	Agent *Agent
}

// Add adds a pane to session running agent, tagged with role (may be
// empty), and returns it.
func (m *Mux) Add(session, role string, agent *Agent) *Pane {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.panes)
	idx := 0
	for _, p := range m.panes {
		if p.Info.Session == session {
			idx++
		}
	}
	p := &Pane{Agent: agent, Info: mux.Pane{
		ID: fmt.Sprintf("%%%d", n), Session: session, WindowID: "@0", Index: idx, Role: role,
		Agent: agent.Persona, PID: 1000 + n, CurrentCommand: agent.Command, Width: 120, Height: 40,
	}}
	agent.clock = m.Clock
	m.panes = append(m.panes, p)
	return p
}

// Calls returns the calls made so far.
func (m *Mux) Calls() []Call {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Call(nil), m.calls...)
}

// Count returns how many calls of op were made.
func (m *Mux) Count(op string) int {
	n := 0
	for _, c := range m.Calls() {
		if c.Op == op {
			n++
		}
	}
	return n
}

func (m *Mux) record(op, pane, arg string) {
	m.calls = append(m.calls, Call{op, pane, arg})
}

func (m *Mux) find(id string) (*Pane, error) {
	for _, p := range m.panes {
		if p.Info.ID == id {
			return p, nil
		}
	}
	return nil, fmt.Errorf("pane %s: %w", id, mux.ErrNoPane)
}

func (m *Mux) info(p *Pane) mux.Pane {
	i := p.Info
	a := p.Agent
	a.advance()
	i.Dead, i.DeadStatus = a.dead, a.deadStatus
	i.InMode = a.copyMode
	if a.command != "" {
		i.CurrentCommand = a.command
	}
	return i
}

// ListPanes implements mux.Multiplexer.
func (m *Mux) ListPanes(_ context.Context, session string) ([]mux.Pane, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.record("list", "", session)
	var out []mux.Pane
	for _, p := range m.panes {
		if p.Info.Session == session {
			out = append(out, m.info(p))
		}
	}
	if out == nil {
		return nil, fmt.Errorf("session %q: %w", session, mux.ErrNoSession)
	}
	return out, nil
}

// Pane implements mux.Multiplexer.
func (m *Mux) Pane(_ context.Context, id string) (mux.Pane, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.record("pane", id, "")
	p, err := m.find(id)
	if err != nil {
		return mux.Pane{}, err
	}
	return m.info(p), nil
}

// Inspect implements mux.Multiplexer.
func (m *Mux) Inspect(ctx context.Context, id string) (mux.Pane, string, error) {
	p, err := m.Pane(ctx, id)
	if err != nil {
		return p, "", err
	}
	s, err := m.Capture(ctx, id, 0)
	return p, s, err
}

// Capture implements mux.Multiplexer.
func (m *Mux) Capture(_ context.Context, id string, _ int) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.record("capture", id, "")
	p, err := m.find(id)
	if err != nil {
		return "", err
	}
	return p.Agent.Screen(), nil
}

// Paste implements mux.Multiplexer.
func (m *Mux) Paste(_ context.Context, id string, text []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.record("paste", id, string(text))
	p, err := m.find(id)
	if err != nil {
		return err
	}
	if p.Agent.dead {
		return fmt.Errorf("paste into %s: pane is dead: %w", id, mux.ErrNoPane)
	}
	p.Agent.paste(string(text))
	return nil
}

// SendKey implements mux.Multiplexer.
func (m *Mux) SendKey(_ context.Context, id, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.record("key", id, key)
	p, err := m.find(id)
	if err != nil {
		return err
	}
	p.Agent.key(key)
	return nil
}

// LeaveMode implements mux.Multiplexer.
func (m *Mux) LeaveMode(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.record("leave-mode", id, "")
	p, err := m.find(id)
	if err != nil {
		return err
	}
	p.Agent.copyMode = false
	return nil
}

// Rows implements mux.Multiplexer: the agent's history lines that are
// no longer on its screen are the scrollback.
func (m *Mux) Rows(_ context.Context, id string, history int) (mux.Rows, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.record("rows", id, "")
	p, err := m.find(id)
	if err != nil {
		return mux.Rows{}, err
	}
	screen := strings.Split(p.Agent.Screen(), "\n")
	scroll := p.Agent.scrolledOff()
	first := len(scroll) - min(max(history, 0), len(scroll))
	raw := append(append([]string(nil), scroll[first:]...), screen...)
	of := make([]int, len(raw))
	for i := range of {
		of[i] = i
	}
	return mux.Rows{History: len(scroll), First: first, Raw: raw, Lines: raw, LineOf: of}, nil
}

// History of a pane's calls, for messages.
func (m *Mux) History(id string) string {
	var b strings.Builder
	for _, c := range m.Calls() {
		if c.Pane == id {
			fmt.Fprintf(&b, "%s %q\n", c.Op, c.Arg)
		}
	}
	return b.String()
}
