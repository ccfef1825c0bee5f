package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/blocks"
	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/wait"
)

// History is how much scrollback a block search reads.
const History = 3000

// HookGrace is how long an agent whose hooks report its turns may show a
// wanted block, idle, before the block is taken off its screen: its hook
// fires as its turn ends, so one that stays silent this long is not wired.
const HookGrace = 5 * time.Second

// Target is the pane a role resolves to and the profile to deliver with.
type Target struct {
	Pane    string
	Profile agent.Profile
	// Allowed: the user opted the role in (route.allowRoles), so its pane
	// is sent what agents wrote whatever runs there.
	Allowed bool
	// Hooks: the agent reports its turns to the session's event log, with
	// the text the model wrote (Claude's last_assistant_message, Codex's
	// notify, Gemini's transcript): blocks are read from there.
	Hooks bool
}

// MuxPanes implements Panes over a multiplexer (tmux, or the simulator):
// text goes in through the delivery protocol; blocks are read from what
// the model wrote, as the agent's hooks record it in the event log, and
// off the screen only for an agent that records nothing (a screen shows
// the text rendered: markdown drawn, long lines wrapped, lists
// re-indented), or once its turn has ended without the block (it was in
// an earlier message of the turn than the last). Roles are resolved once and remembered. A relay moves what
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
	// Events is the session's event log.
	Events string
	// Note records a relay event (relay.dialog when a role's pane shows a
	// dialog, relay.dialog-closed when it is answered); Warn says it on
	// stderr. Either may be nil.
	Note func(kind string, fields map[string]any)
	Warn func(msg string)

	targets map[string]Target
	marks   map[string]int64 // role -> the event log's size at its Mark
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
	if p.marks == nil {
		p.marks = map[string]int64{}
	}
	p.marks[role] = state.Size(p.Events)
	return seen, nil
}

// Send implements Panes. A dialog on role's screen (a permission the
// agent asks for) is never answered: the send waits until someone answers
// it, then delivers.
func (p *MuxPanes) Send(ctx context.Context, role, text string) error {
	t, err := p.target(ctx, role)
	if err != nil {
		return err
	}
	d := p.Deliverer(map[string]string{t.Pane: role})
	for {
		_, err = d.Send(ctx, deliver.Request{Pane: t.Pane, Profile: t.Profile, Text: text, AgentsOnly: !t.Allowed})
		if !errors.Is(err, deliver.ErrDialog) {
			return err
		}
		if err := p.outwait(ctx, role, t.Pane); err != nil {
			return err
		}
	}
}

// outwait waits until the dialog on pane's screen is gone, saying so when
// it starts and ends.
func (p *MuxPanes) outwait(ctx context.Context, role, pane string) error {
	var wake <-chan struct{}
	if p.Wake != nil {
		wake = p.Wake(pane)
	}
	since := time.Time{}
	for {
		s, err := p.Mux.Capture(ctx, pane, 0)
		if err != nil {
			return err
		}
		what, open := agent.Dialog(s)
		switch {
		case open && since.IsZero():
			since = p.Clock.Now()
			p.dialogUp(role, pane, what)
		case !open:
			if !since.IsZero() {
				p.dialogDown(role, pane, p.Clock.Now().Sub(since))
			}
			return nil
		}
		w := &wait.Waiter{Clock: p.Clock, Wake: wake}
		if err := w.Sleep(ctx, time.Second); err != nil {
			return err
		}
	}
}

func (p *MuxPanes) dialogUp(role, pane, what string) {
	if p.Note != nil {
		p.Note("dialog", map[string]any{"role": role, "pane": pane, "dialog": what})
	}
	if p.Warn != nil {
		p.Warn(fmt.Sprintf("%s (%s) shows a dialog (%q): the relay waits until it is answered in that pane (party attach); the time it is up does not count against the timeout",
			role, pane, what))
	}
}

func (p *MuxPanes) dialogDown(role, pane string, up time.Duration) {
	if p.Note != nil {
		p.Note("dialog-closed", map[string]any{"role": role, "pane": pane, "seconds": up.Round(time.Second).Seconds()})
	}
	if p.Warn != nil {
		p.Warn(fmt.Sprintf("%s (%s): the dialog was answered after %s; the relay goes on", role, pane, up.Round(time.Second)))
	}
}

// Await implements Panes: it reads the turns the agent reported since
// role's Mark and re-reads the screen when the pane prints or an event
// arrives, with a 1 s poll as a safety net.
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
	written := &answers{path: p.Events, pane: t.Pane, offset: p.marks[role]}
	var idle time.Time   // since when the screen shows the block, the agent idle
	var dialog time.Time // since when a dialog is up
	for {
		if t.Hooks && p.Events != "" {
			b, err := written.find(ids)
			if err != nil || b != nil {
				return b, "", err
			}
		}
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
		// A dialog (a permission the agent asks for) stops the clock: the
		// wait goes on, however long, until someone answers it.
		if what, open := agent.Dialog(s); open && dialog.IsZero() {
			dialog = p.Clock.Now()
			p.dialogUp(role, t.Pane, what)
		} else if !open && !dialog.IsZero() {
			up := p.Clock.Now().Sub(dialog)
			deadline, dialog = deadline.Add(up), time.Time{}
			p.dialogDown(role, t.Pane, up)
		}
		// An agent that records its turns is read off the screen only
		// once a turn has ended without the block, or when it shows the
		// block idle and its hooks said nothing since the prompt (a pane
		// whose agent was restarted without party's hooks): at once for
		// Claude and Gemini, whose hooks report the prompt as it is
		// submitted; after HookGrace for Codex, whose notify comes only
		// as its turn ends.
		found, _ := blocks.Parse(s)
		if b := wanted(found, ids, seen); b == nil || t.Profile.IsBusy(s) {
			idle = time.Time{}
		} else {
			if idle.IsZero() {
				idle = p.Clock.Now()
			}
			if !t.Hooks || p.Events == "" || written.ended || p.Clock.Now().Sub(idle) >= HookGrace ||
				(!written.heard && t.Profile.Kind != agent.Codex) {
				return b, s, nil
			}
		}
		left := deadline.Sub(p.Clock.Now())
		if !dialog.IsZero() {
			left = time.Second
		}
		if left <= 0 {
			return nil, s, nil
		}
		w := &wait.Waiter{Clock: p.Clock, Wake: wake}
		nap := time.Second
		if !idle.IsZero() {
			nap = 250 * time.Millisecond // the grace ends without a wake-up
		}
		if err := w.Sleep(ctx, min(left, nap)); err != nil {
			return nil, s, err
		}
	}
}

// wanted is the last of found whose id is one of ids and not in seen.
func wanted(found []blocks.Block, ids []string, seen map[string]bool) *blocks.Block {
	for i := len(found) - 1; i >= 0; i-- {
		b := found[i]
		for _, id := range ids {
			if b.ID == id && !seen[id] {
				return &b
			}
		}
	}
	return nil
}

// answers reads the turns one pane's agent reported to the event log,
// from offset on: what the model wrote, byte for byte.
type answers struct {
	path   string
	pane   string
	offset int64
	ended  bool // a turn of the pane ended since the mark
	heard  bool // the pane reported anything since the mark
}

// find reads the events that arrived since the last call and returns the
// block with one of ids that a turn's answer holds, if any.
func (a *answers) find(ids []string) (*blocks.Block, error) {
	lines, next, err := state.ReadFrom(a.path, a.offset)
	if err != nil {
		return nil, err
	}
	a.offset = next
	for _, l := range lines {
		var ev hook.Event
		if json.Unmarshal(l, &ev) != nil || ev.Pane != a.pane || ev.Agent == "" {
			continue // another pane's, or party's own (input)
		}
		a.heard = true
		if ev.Kind != hook.TurnComplete {
			continue
		}
		found, _ := blocks.ParseText(ev.Answer)
		if b := wanted(found, ids, nil); b != nil {
			return b, nil
		}
		// A turn whose prompt does not name the block is another turn,
		// not the end of the one asked for it: Codex's title thread,
		// late under load, quoting the thread's first prompt; Gemini's
		// turn on the primer that ended after the task's text went in
		// (seen under load). A turn that says no prompt (Claude's Stop)
		// counts.
		if len(ev.Prompts) == 0 || mentions(ev.Prompts, ids) {
			a.ended = true
		}
	}
	return nil, nil
}

// mentions reports whether one of prompts names one of ids.
func mentions(prompts, ids []string) bool {
	for _, p := range prompts {
		for _, id := range ids {
			if strings.Contains(p, id) {
				return true
			}
		}
	}
	return false
}
