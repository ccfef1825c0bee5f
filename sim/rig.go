package sim

import "github.com/partyhq/party/core/deliver"

// Rig is one simulated agent in a pane of a fake mux, in virtual time,
// with a deliverer to it: the fixture of the delivery protocol's tests
// (core/deliver's and sim's own).
type Rig struct {
	Clock     *Clock
	Mux       *Mux
	Agent     *Agent
	ID        string
	Deliverer *deliver.Deliverer
}

// NewRig starts a fresh clock and mux with one agent of persona in a
// pane; setup, when not nil, shapes the agent before anything is sent.
func NewRig(persona string, setup func(*Agent)) *Rig {
	clock := NewClock()
	m := NewMux(clock)
	a := NewAgent(persona)
	p := m.Add("s", persona, a)
	if setup != nil {
		setup(a)
	}
	return &Rig{Clock: clock, Mux: m, Agent: a, ID: p.Info.ID,
		Deliverer: &deliver.Deliverer{Mux: m, Clock: clock, Locker: &Locker{}}}
}
