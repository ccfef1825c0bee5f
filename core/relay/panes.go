package relay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/blocks"
	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/wait"
)

// History is how much scrollback a block search reads.
const History = 3000

// Target is the pane a role resolves to and the profile to deliver with.
type Target struct {
	Pane    string
	Profile agent.Profile
	// Allowed: the user opted the role in (route.allowRoles), so its pane
	// is sent what agents wrote whatever runs there.
	Allowed bool
}

// MuxPanes implements Panes over a multiplexer (tmux, or the simulator):
// text goes in through the delivery protocol, blocks are read off the
// screen. Roles are resolved once and remembered. A relay moves what
// agents wrote, so a role whose pane runs a shell or another program, not
// claude, codex or gemini, is refused when it is resolved (a
// *deliver.NotAgentError), before anything is sent, unless its Target is
// Allowed.
type MuxPanes struct {
	Mux   mux.Multiplexer
	Clock clock.Clock
	// Resolve finds the pane of a role.
	Resolve func(ctx context.Context, role string) (Target, error)
	// Deliverer returns the delivery protocol for a send; roles maps the
	// pane sent to to its role.
	Deliverer func(roles map[string]string) *deliver.Deliverer
	// Wake returns the channel that wakes when pane prints or a hook
	// event arrives; nil (or a nil channel) relies on a 1 s poll.
	Wake func(pane string) <-chan struct{}
	// PrimeDir holds a mark per primed pane and role.
	PrimeDir string

	targets map[string]Target
}

var _ Panes = (*MuxPanes)(nil)

func (p *MuxPanes) target(ctx context.Context, role string) (Target, error) {
	if t, ok := p.targets[role]; ok {
		return t, nil
	}
	t, err := p.Resolve(ctx, role)
	if err != nil {
		return t, err
	}
	if !t.Allowed {
		if err := deliver.CheckAgentText(t.Pane, t.Profile.Kind); err != nil {
			return t, fmt.Errorf("relay role %s: %w", role, err)
		}
	}
	if p.targets == nil {
		p.targets = map[string]Target{}
	}
	p.targets[role] = t
	return t, nil
}

// Prime tells each role of t, once per pane, how to write blocks. Both
// roles are resolved (and a pane that takes no agent's text refused)
// before either is sent anything.
func (p *MuxPanes) Prime(ctx context.Context, t Task) error {
	if err := state.MkdirPrivate(p.PrimeDir); err != nil {
		return err
	}
	roles := map[string]string{t.Planner: ToPlanner, t.Executor: ToExecutor}
	for role := range roles {
		if _, err := p.target(ctx, role); err != nil {
			return err
		}
	}
	for role, as := range roles {
		tg, err := p.target(ctx, role)
		if err != nil {
			return err
		}
		mark := filepath.Join(p.PrimeDir, tg.Pane[1:]+"-"+as)
		if _, err := os.Stat(mark); err == nil {
			continue
		}
		if err := p.Send(ctx, role, Primer(as)); err != nil {
			return err
		}
		if err := state.WriteFile(mark, []byte(p.Clock.Now().UTC().Format(time.RFC3339)), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// Mark implements Panes.
func (p *MuxPanes) Mark(ctx context.Context, role string) (map[string]bool, error) {
	t, err := p.target(ctx, role)
	if err != nil {
		return nil, err
	}
	s, err := p.Mux.Capture(ctx, t.Pane, History)
	if err != nil {
		return nil, err
	}
	found, _ := blocks.Parse(s)
	seen := map[string]bool{}
	for _, b := range found {
		seen[b.ID] = true
	}
	return seen, nil
}

// Send implements Panes.
func (p *MuxPanes) Send(ctx context.Context, role, text string) error {
	t, err := p.target(ctx, role)
	if err != nil {
		return err
	}
	d := p.Deliverer(map[string]string{t.Pane: role})
	_, err = d.Send(ctx, deliver.Request{Pane: t.Pane, Profile: t.Profile, Text: text, AgentsOnly: !t.Allowed})
	return err
}

// Await implements Panes: it re-reads the screen when the pane prints,
// with a 1 s poll as a safety net.
func (p *MuxPanes) Await(ctx context.Context, role string, ids []string, seen map[string]bool, d time.Duration) (*blocks.Block, string, error) {
	t, err := p.target(ctx, role)
	if err != nil {
		return nil, "", err
	}
	var wake <-chan struct{}
	if p.Wake != nil {
		wake = p.Wake(t.Pane)
	}
	deadline := p.Clock.Now().Add(d)
	for {
		pane, err := p.Mux.Pane(ctx, t.Pane)
		if err != nil {
			return nil, "", err
		}
		s, err := p.Mux.Capture(ctx, t.Pane, History)
		if err != nil {
			return nil, "", err
		}
		if pane.Dead {
			return nil, s, fmt.Errorf("%s (%s) exited while relaying: %w", role, t.Pane, deliver.ErrPaneDead)
		}
		found, _ := blocks.Parse(s)
		for i := len(found) - 1; i >= 0; i-- {
			b := found[i]
			for _, id := range ids {
				if b.ID == id && !seen[id] {
					return &b, s, nil
				}
			}
		}
		left := deadline.Sub(p.Clock.Now())
		if left <= 0 {
			return nil, s, nil
		}
		w := &wait.Waiter{Clock: p.Clock, Wake: wake}
		if err := w.Sleep(ctx, min(left, time.Second)); err != nil {
			return nil, s, err
		}
	}
}
