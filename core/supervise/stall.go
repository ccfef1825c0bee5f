package supervise

import (
	"context"
	"fmt"
	"time"
)

// A stalled agent: busy, and no sign of life for StallAfter. The signs are
// a change of its screen (the lines of its busy indicator left out: their
// spinner and timer move while a hung agent waits for ever) and an event
// of its own (a hook, a notify). A scan looks at each runtime once
// (Pulser: one capture of its pane, and the event log read on from where
// the last look stopped), at most pulsesPerStall times in StallAfter (a
// stall is seen at most StallAfter/pulsesPerStall late, and an idle
// supervisor captures no pane every few seconds); Stall, pure, turns the
// looks into the runtime's Liveness. A stalled runtime shows Stalled, its stall and its end are
// audited (a notification), and the triggers waiting behind its turn take
// the fallback (EvStalled) instead of waiting out supervise.turnTimeout.

// pulsesPerStall is how many looks for signs of life a StallAfter holds
// at the most: with the default 10 minutes, one every 30 s.
const pulsesPerStall = 20

// Pulse is what one look at a runtime's pane and events found.
type Pulse struct {
	// Seen says the look worked; nothing else counts without it.
	Seen bool
	// Busy says the agent works (its busy indicator is up).
	Busy bool
	// Screen is a digest of its screen without the busy indicator's lines.
	Screen string
	// Event says the agent logged an event since the last look.
	Event bool
}

// Pulser is the effect that looks at runtimes for signs of life; the
// loop's Effects may have it (without it no runtime stalls).
type Pulser interface {
	// Pulses looks at each runtime once, by role.
	Pulses(ctx context.Context, rts []Runtime) map[string]Pulse
}

// Liveness is what the supervisor keeps of a runtime's signs of life.
type Liveness struct {
	// Screen is the digest the last look found.
	Screen string `json:"screen,omitempty"`
	// Sign is the last sign of life while busy: a screen change, an event;
	// or the first look at it busy.
	Sign time.Time `json:"sign_at,omitzero"`
	// StalledAt is when it was found stalled; zero while it is not.
	StalledAt time.Time `json:"stalled_at,omitzero"`
}

// Audit kinds of stalls.
const (
	AuditStalled   = "runtime_stalled"
	AuditUnstalled = "runtime_unstalled"
)

// Stall applies a look p at rt at a time under after (supervise.stallAfter)
// and returns the runtime as it now stands and the audit actions that
// follow. It is pure. A runtime that is not up (offline, starting, failed,
// stopping) has no liveness, nor has an agent that is not busy; the first
// look at a busy one starts its clock; a busy one whose screen changed or
// that logged an event is alive; a busy one without either for after is
// stalled until it shows a sign again or its turn ends.
func Stall(after time.Duration, rt Runtime, p Pulse, at time.Time) (Runtime, []Action) {
	n := rt
	live := &n.Recovery.Live
	switch rt.Status {
	case Offline, Starting, Failed, Stopping:
		*live = Liveness{}
		return n, nil
	}
	if !p.Seen {
		return n, nil
	}
	was := live.StalledAt
	var acts []Action
	if !was.IsZero() && (!p.Busy || p.Event || p.Screen != live.Screen) {
		why := "it shows a sign of life again"
		if !p.Busy {
			why = "its turn ended"
		}
		acts = []Action{audit(AuditUnstalled, "", fmt.Sprintf("stalled for %s; %s", at.Sub(was).Round(time.Second), why))}
	}
	if !p.Busy {
		// Idle: alive, and nothing kept (no write while it stays so).
		*live = Liveness{}
		return n, acts
	}
	if p.Event || p.Screen != live.Screen || live.Sign.IsZero() {
		*live = Liveness{Screen: p.Screen, Sign: at}
		return n, acts
	}
	if was.IsZero() && after > 0 && at.Sub(live.Sign) >= after {
		live.StalledAt = at
		return n, []Action{audit(AuditStalled, string(Stalled),
			fmt.Sprintf("busy with no screen change and no event of its own for %s", at.Sub(live.Sign).Round(time.Second)))}
	}
	return n, nil
}

// IsStalled says whether rt's agent is stalled.
func IsStalled(rt Runtime) bool { return !rt.Recovery.Live.StalledAt.IsZero() }

// WaitsBehindTurn says whether t waits behind its agent's running turn:
// not yet delivered (queued, deferred), or delivered into the agent's
// queue and not yet taken (no ack window open). Such a trigger of a
// stalled runtime takes the fallback (EvStalled); one held for a spent
// budget waits for the budget, not the turn.
func WaitsBehindTurn(t Trigger) bool {
	switch t.Status {
	case Queued:
		return true
	case TDeferred:
		return t.Class != BudgetExceeded
	case Delivered:
		return t.AckBy.IsZero()
	}
	return false
}

// StallsOver says which open trigger of a stalled runtime takes the
// fallback now (ok false: none): the oldest that waits behind the turn,
// one at a time, none while another of the runtime's is in its fallback.
// open are the runtime's open triggers, oldest first.
func StallsOver(open []Trigger) (Trigger, bool) {
	for _, t := range open {
		if t.Status == TFallbackResume || t.Status == TSpawnRecovery {
			return Trigger{}, false
		}
	}
	for _, t := range open {
		if WaitsBehindTurn(t) {
			return t, true
		}
	}
	return Trigger{}, false
}

// PrefaceDue says whether t, about to be delivered to rt, is the first
// trigger of an agent restarted fresh (a stale session, a crash loop, no
// session known): it then carries its thread's summary first.
func PrefaceDue(rt Runtime, t Trigger) bool {
	return rt.Recovery.Summarize && t.Preface == ""
}

// watchStalls looks at the runtimes for signs of life and records what
// Stall makes of them, onto the records as they stand now.
func (l *Loop) watchStalls(ctx context.Context, at time.Time) {
	px, ok := l.Effects.(Pulser)
	if !ok {
		return
	}
	list, err := l.Store.Runtimes(ctx)
	if err != nil {
		l.logf("stalls: %v", err)
		return
	}
	var up []Runtime
	for _, rt := range list {
		switch rt.Status {
		case Offline, Starting, Failed, Stopping:
			if rt.Recovery.Live != (Liveness{}) {
				up = append(up, rt) // its liveness is cleared below
			}
		default:
			up = append(up, rt)
		}
	}
	if len(up) == 0 {
		return
	}
	pulses := px.Pulses(ctx, up)
	for _, rt := range up {
		next, acts := Stall(l.StallAfter, rt, pulses[rt.Role], at)
		if next.Recovery.Live == rt.Recovery.Live {
			continue
		}
		if err := l.Store.SetLiveness(ctx, rt.Role, next.Recovery.Live); err != nil {
			l.logf("runtime %s: %v", rt.Role, err)
			continue
		}
		for _, a := range acts {
			l.logf("runtime %s: %s %s", rt.Role, a.Audit, a.Detail)
			if err := l.Store.Audit(ctx, AuditEvent{At: at, Kind: a.Audit, Role: rt.Role, Result: a.Result, Detail: a.Detail}); err != nil {
				l.logf("runtime %s: %v", rt.Role, err)
			}
		}
	}
}

// stallsOver hands the trigger waiting behind the turn of each stalled
// runtime to the fallback (StallsOver), one at a time.
func (l *Loop) stallsOver(ctx context.Context) {
	rts, err := l.Store.sharedRuntimes(ctx)
	if err != nil {
		return
	}
	var stalled []string
	for _, rt := range rts {
		if IsStalled(rt) {
			stalled = append(stalled, rt.Role)
		}
	}
	for _, role := range stalled {
		open, err := l.Store.Triggers(ctx, TriggerFilter{Open: true, Role: role})
		if err != nil {
			l.logf("runtime %s: %v", role, err)
			continue
		}
		if t, ok := StallsOver(open); ok {
			l.apply(ctx, t, Event{Kind: EvStalled, At: l.now(),
				Err: fmt.Sprintf("its agent stalled mid-turn (no screen change, no event for %s)", l.StallAfter)})
		}
	}
}

// summarized records that role's fresh agent got its thread's summary.
func (l *Loop) summarized(ctx context.Context, role string) {
	rt, err := l.Store.Runtime(ctx, role)
	if err != nil || !rt.Recovery.Summarize {
		return
	}
	rt.Recovery.Summarize = false
	if err := l.Store.PutRuntime(ctx, rt); err != nil {
		l.logf("runtime %s: %v", role, err)
	}
}
