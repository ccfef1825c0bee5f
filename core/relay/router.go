package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/blocks"
	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/roles"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/termsafe"
	"github.com/partyhq/party/core/wait"
)

// Router runs a Switchboard over the role panes of a session: it reads
// the blocks each role's agent wrote (the answers its hooks put in the
// event log, byte for byte; the screen for an agent that reports nothing,
// or a block its report lacks), forwards each new block to the role it
// names through the delivery protocol, and logs what it did. A block is typed
// only into a pane that runs claude, codex or gemini, unless the user
// opted its role in (Allowed): never into a shell or another program,
// where it would run as a command.
type Router struct {
	Mux      mux.Multiplexer
	Clock    clock.Clock
	Session  string
	Panes    []mux.Pane // the session's panes
	HopLimit int
	Deliver  *deliver.Deliverer
	// Profile is the profile to deliver to role's pane with.
	Profile func(role string, p mux.Pane) agent.Profile
	// Allowed says whether the user opted role in (route.allowRoles):
	// its pane is sent blocks whatever runs there. Nil allows none.
	Allowed func(role string) bool
	// Log appends one event to the session's event log.
	Log func(ev map[string]any)
	// Progress gets one line per decision (stderr).
	Progress io.Writer
	// Events is the session's event log: a text typed into a role's pane
	// (party's "input" events) or submitted there (the agent's
	// prompt-submit) other than the block the switchboard delivered
	// starts a new conversation there (Switchboard.Fresh). "" reads none.
	Events string

	sb       *Switchboard
	roleOf   map[string]mux.Pane
	offset   int64                // of Events, read up to
	onScreen map[string]time.Time // block id -> when a hooked pane's screen first showed it
}

// Start notes the blocks on screen now: they were there before the
// switchboard, so they are not routed.
func (r *Router) Start(ctx context.Context) error {
	r.sb = &Switchboard{Roles: roles.Names(r.Panes), HopLimit: r.HopLimit, Refuse: map[string]string{}}
	r.roleOf = map[string]mux.Pane{}
	for _, p := range r.Panes {
		if p.Role != "" {
			r.roleOf[p.Role] = p
		}
	}
	r.offset, r.onScreen = state.Size(r.Events), map[string]time.Time{}
	for role, p := range r.roleOf {
		if ok, why := agent.TakesAgentText(r.Profile(role, p).Kind); !ok && !r.allowed(role) {
			r.sb.Refuse[role] = why
		}
	}
	for _, p := range r.roleOf {
		found, err := r.scan(ctx, p)
		if err != nil {
			return err
		}
		for _, b := range found {
			r.sb.Ignore(b.ID)
		}
	}
	return nil
}

// Roles is the roles the switchboard serves.
func (r *Router) Roles() []string { return r.sb.Roles }

func (r *Router) allowed(role string) bool { return r.Allowed != nil && r.Allowed(role) }

// Run routes until ctx ends or done is closed (the session ended). It
// re-scans when wake fires (any pane printed) and at least every second.
// Start must have been called.
func (r *Router) Run(ctx context.Context, wake, done <-chan struct{}) error {
	r.Log(map[string]any{"time": r.Clock.Now().UTC(), "kind": "route.start", "roles": r.sb.Roles, "hop_limit": r.HopLimit, "refused": r.sb.Refuse})
	r.progress("switchboard on %s: %d roles, hop limit %d", r.Session, len(r.roleOf), r.HopLimit)
	for {
		r.pass(ctx)
		if !r.pause(ctx, wake, done) {
			return nil
		}
	}
}

// pass reads what the roles were given and what their agents wrote since
// the last pass, then scans every role's screen once, and acts on the new
// blocks.
func (r *Router) pass(ctx context.Context) {
	r.given(ctx)
	for role, p := range r.roleOf {
		found, err := r.scan(ctx, p)
		if err != nil {
			continue // a pane that went away
		}
		r.act(ctx, role, r.sb.See(role, r.settled(p, found)))
	}
}

// settled returns the blocks of found that the switchboard takes off the
// screen of pane p: all of them for an agent that reports nothing; for one
// whose hooks report its turns (their blocks come from what the model
// wrote, given), only those it has shown for HookGrace without its
// report holding them (its turn's last message did not, or its hooks are
// not wired).
func (r *Router) settled(p mux.Pane, found []blocks.Block) []blocks.Block {
	if p.Hooks == "" || r.Events == "" {
		return found
	}
	now := r.Clock.Now()
	var out []blocks.Block
	for _, b := range found {
		first, ok := r.onScreen[b.ID]
		if !ok {
			r.onScreen[b.ID] = now
			continue
		}
		if now.Sub(first) >= HookGrace {
			out = append(out, b)
		}
	}
	return out
}

// act carries out the decisions on the blocks of role.
func (r *Router) act(ctx context.Context, role string, decisions []Decision) {
	for _, dec := range decisions {
		ev := map[string]any{"time": r.Clock.Now().UTC(), "id": dec.Block.ID, "from": role, "to": dec.Block.To, "hop": dec.Hop}
		if dec.To == "" {
			ev["kind"] = "route." + dec.Reason
			hint := ""
			if why := r.sb.Refuse[dec.Role]; why != "" {
				p := r.roleOf[dec.Role]
				ev["pane"], ev["agent"] = p.ID, string(r.Profile(dec.Role, p).Kind)
				hint = fmt.Sprintf(" (%s runs a %s, not an agent; route.allowRoles opts a role in)", p.ID, why)
			}
			r.Log(ev)
			r.progress("block %s from %s to %q not forwarded: %s%s", dec.Block.ID, role, dec.Block.To, dec.Reason, hint)
			continue
		}
		to := r.roleOf[dec.To]
		res, err := r.Deliver.Send(ctx, deliver.Request{Pane: to.ID, Profile: r.Profile(dec.To, to), Text: Forward(dec),
			AgentsOnly: !r.allowed(dec.To)})
		ev["kind"], ev["outcome"] = "route.forward", res.Outcome
		if err != nil {
			ev["error"] = err.Error()
		}
		r.Log(ev)
		r.progress("block %s %s -> %s: %s", dec.Block.ID, role, dec.To, res.Outcome)
	}
}

// progress writes a line "party: …" to Progress, terminal-safe: block
// ids and roles are what agents wrote.
func (r *Router) progress(format string, a ...any) {
	fmt.Fprintln(r.Progress, "party: "+termsafe.Text(fmt.Sprintf(format, a...)))
}

// pause waits for a wake-up or a second; false means stop.
func (r *Router) pause(ctx context.Context, wake, done <-chan struct{}) bool {
	select {
	case <-done:
		return false
	default:
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if done != nil {
		go func() { // ends with pause
			select {
			case <-done:
				cancel()
			case <-sctx.Done():
			}
		}()
	}
	w := &wait.Waiter{Clock: r.Clock, Wake: wake}
	_ = w.Sleep(sctx, time.Second)
	return sctx.Err() == nil
}

func (r *Router) scan(ctx context.Context, p mux.Pane) ([]blocks.Block, error) {
	s, err := r.Mux.Capture(ctx, p.ID, History)
	if err != nil {
		return nil, err
	}
	found, _ := blocks.Parse(s)
	return found, nil
}

// given reads the session's events since the last look, in order: a
// role's pane given anything but the block the switchboard delivered to
// it has its chain cut (Fresh); the blocks in the answer of a role's
// finished turn (what its model wrote, byte for byte) are acted on.
func (r *Router) given(ctx context.Context) {
	if r.Events == "" {
		return
	}
	lines, next, err := state.ReadFrom(r.Events, r.offset)
	if err != nil {
		return
	}
	r.offset = next
	role := map[string]string{}
	for name, p := range r.roleOf {
		role[p.ID] = name
	}
	for _, l := range lines {
		var ev struct {
			Kind    string   `json:"kind"`
			Pane    string   `json:"pane"`
			Agent   string   `json:"agent"`
			Text    string   `json:"text"`
			Prompts []string `json:"prompts"`
			Answer  string   `json:"answer"`
		}
		if json.Unmarshal(l, &ev) != nil || role[ev.Pane] == "" {
			continue
		}
		from := role[ev.Pane]
		texts := ev.Prompts
		switch {
		case ev.Kind == "input":
			texts = []string{ev.Text}
		case ev.Kind == hook.TurnComplete && ev.Agent != "":
			found, _ := blocks.ParseText(ev.Answer)
			r.act(ctx, from, r.sb.See(from, found))
			continue
		case ev.Kind != hook.PromptSubmit:
			continue
		}
		for _, t := range texts {
			if !r.delivered(from, t) {
				r.sb.Fresh(from)
			}
		}
	}
}

// delivered says whether text is the block the switchboard last delivered
// to role (its forwarded header names the block's id), or role answers no
// block anyway.
func (r *Router) delivered(role, text string) bool {
	id := r.sb.Answering(role)
	if id == "" {
		return true
	}
	var q strings.Builder
	enc := json.NewEncoder(&q)
	enc.SetEscapeHTML(false) // as Forward writes it
	_ = enc.Encode(id)
	return strings.Contains(text, "[[POLI:MSG ") && strings.Contains(text, `"id":`+strings.TrimSuffix(q.String(), "\n"))
}
