package sim_test

import (
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/sim"
)

// fixture is one pane with one simulated agent and a deliverer to it
// (core/deliver's tests have their own).
type fixture struct {
	clock *sim.Clock
	mux   *sim.Mux
	agent *sim.Agent
	pane  string
	d     *deliver.Deliverer
}

func newFixture(persona string, setup func(*sim.Agent)) *fixture {
	clock := sim.NewClock()
	m := sim.NewMux(clock)
	a := sim.NewAgent(persona)
	p := m.Add("s", persona, a)
	if setup != nil {
		setup(a)
	}
	return &fixture{clock: clock, mux: m, agent: a, pane: p.Info.ID,
		d: &deliver.Deliverer{Mux: m, Clock: clock, Locker: &sim.Locker{}}}
}
