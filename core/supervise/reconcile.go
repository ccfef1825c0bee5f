package supervise

import (
	"fmt"
	"time"
)

// Recovery is what the supervisor keeps of a runtime's health between
// looks: since when it has been offline or not running its agent, when it
// was restarted lately, and when its agent last showed a sign of life.
type Recovery struct {
	// LastSign is the last time the agent's session showed it is used:
	// the runtime registered, an acknowledgement or an answer of the
	// agent's, its session id learnt from its events. Only such signs
	// (and a heartbeat, LastHeartbeat) set it; a rewrite of the record's
	// status does not, so a session quiet for StaleAfter is stale
	// however often the record changed.
	LastSign      time.Time   `json:"last_sign_at,omitzero"`
	OfflineSince  time.Time   `json:"offline_since,omitzero"`
	NotAgentSince time.Time   `json:"not_agent_since,omitzero"`
	Restarts      []time.Time `json:"restarts,omitempty"`
	FailedWhy     string      `json:"failed_why,omitempty"`
	Drift         int         `json:"drift,omitempty"` // registry drifts corrected
	// Live is its agent's signs of life while busy (Stall).
	Live Liveness `json:"live,omitzero"`
	// Summarize says its agent was restarted fresh and has had no trigger
	// yet: the next carries its thread's summary (PrefaceDue).
	Summarize bool `json:"summarize,omitempty"`
}

func (r Recovery) zero() bool {
	return r.LastSign.IsZero() && r.OfflineSince.IsZero() && r.NotAgentSince.IsZero() && len(r.Restarts) == 0 && r.FailedWhy == "" && r.Drift == 0 &&
		r.Live == (Liveness{}) && !r.Summarize
}

// RecoveryPolicy are the numbers reconciliation works with.
type RecoveryPolicy struct {
	// RestartAfter is how long a runtime stays offline (its pane dead or
	// gone) before it is restarted from its launch spec.
	RestartAfter time.Duration
	// NotAgentGrace is how long a pane may run something else than its
	// agent before the runtime is failed.
	NotAgentGrace time.Duration
	// A runtime is restarted with its agent's session resumed, unless the
	// session is stale (no sign of it for StaleAfter: lastSign) or
	// it crash-loops: its MaxRestarts-th failure within RestartWindow
	// starts a fresh agent session, and one more fails it.
	MaxRestarts   int
	RestartWindow time.Duration
	StaleAfter    time.Duration
}

// DefaultRecoveryPolicy restarts a runtime 5 s after it went offline,
// resuming its session; the third failure in 15 minutes, or a session
// quiet for 12 hours, gets a fresh one; the fourth fails it.
var DefaultRecoveryPolicy = RecoveryPolicy{RestartAfter: 5 * time.Second, NotAgentGrace: 30 * time.Second,
	MaxRestarts: 3, RestartWindow: 15 * time.Minute, StaleAfter: 12 * time.Hour}

// Sight is what tmux shows of a runtime's pane now.
type Sight struct {
	Found     bool // a pane with the runtime's role is in the session
	Dead      bool
	Pane      string
	PID       int
	Target    string
	RunsAgent bool // its process is the agent (not a shell it fell back to)
	// Held says a trigger's fallback owns the runtime (resuming its
	// session, spawning a fresh agent): it is not restarted meanwhile.
	Held bool
}

// Reconcile actions.
const (
	// ActRestart: restart the runtime from its launch spec (a new token),
	// in its pane, or in a new window when the pane is gone; Result says
	// how: RestartResume (the agent's session resumed) or RestartFresh.
	ActRestart ActionKind = "restart"
)

// How a runtime is restarted.
const (
	RestartResume = "resume"
	RestartFresh  = "fresh"
)

// Audit kinds of reconciliation.
const (
	AuditOffline       = "runtime_offline"
	AuditOnline        = "runtime_ready"
	AuditDrift         = "registry_drift"
	AuditRestart       = "runtime_restart"
	AuditRestartFailed = "runtime_restart_failed"
	AuditRuntimeFailed = "runtime_failed"
	AuditStopped       = "runtime_stopped"
)

// Reconcile compares rt with what tmux shows at a time and returns the
// runtime as it now stands and the actions that follow. It is pure: the
// time comes with the call. Failed stays failed until the runtime is seen
// running its agent again.
func Reconcile(p RecoveryPolicy, rt Runtime, s Sight, at time.Time) (Runtime, []Action) {
	if rt.Status == Stopping {
		return rt, nil // party runtime stop ends it
	}
	n := rt
	n.Recovery.Restarts = recent(rt.Recovery.Restarts, at, p.RestartWindow)
	var acts []Action
	if !s.Found || s.Dead {
		n.Recovery.NotAgentSince = time.Time{}
		if n.Status != Offline && n.Status != Failed {
			why := "its pane is gone"
			if s.Found {
				why = "its pane is dead"
			}
			n.Status, n.Recovery.OfflineSince = Offline, at
			acts = append(acts, audit(AuditOffline, rt.Pane, why))
		}
		if n.Status != Offline || s.Held || at.Sub(n.Recovery.OfflineSince) < p.RestartAfter {
			return n, acts
		}
		failures := len(n.Recovery.Restarts) + 1
		if failures > p.MaxRestarts {
			n.Status = Failed
			n.Recovery.FailedWhy = fmt.Sprintf("crash loop: %d restarts within %s", len(n.Recovery.Restarts), p.RestartWindow)
			return n, append(acts, audit(AuditRuntimeFailed, "crash-loop", n.Recovery.FailedWhy))
		}
		how, why := RestartResume, "its agent session resumed"
		switch {
		case n.AgentSession == "":
			how, why = RestartFresh, "no agent session known"
		case failures == p.MaxRestarts:
			how, why = RestartFresh, fmt.Sprintf("crash loop: failure %d within %s; a fresh agent session", failures, p.RestartWindow)
		case p.StaleAfter > 0 && !lastSign(rt).IsZero() && at.Sub(lastSign(rt)) >= p.StaleAfter:
			how, why = RestartFresh, fmt.Sprintf("its session is stale: no sign of it for %s", p.StaleAfter)
		}
		n.Recovery.Restarts = append(n.Recovery.Restarts, at)
		n.Recovery.OfflineSince = at // the next restart waits again
		return n, append(acts, audit(AuditRestart, how, why), Action{Kind: ActRestart, Result: how})
	}
	if rt.Pane != "" && (s.Pane != rt.Pane || (s.PID != 0 && rt.PID != 0 && s.PID != rt.PID)) {
		n.Recovery.Drift++
		acts = append(acts, audit(AuditDrift, string(RegistryDrift), fmt.Sprintf("pane %s pid %d, recorded %s pid %d", s.Pane, s.PID, rt.Pane, rt.PID)))
	}
	n.Pane, n.PID = s.Pane, s.PID
	if s.Target != "" {
		n.Target = s.Target
	}
	if !s.RunsAgent {
		if n.Recovery.NotAgentSince.IsZero() {
			n.Recovery.NotAgentSince = at
		}
		if n.Status != Failed && at.Sub(n.Recovery.NotAgentSince) >= p.NotAgentGrace {
			n.Status = Failed
			n.Recovery.FailedWhy = fmt.Sprintf("the pane has not run its agent for %s", p.NotAgentGrace)
			acts = append(acts, audit(AuditRuntimeFailed, "not-agent", n.Recovery.FailedWhy))
		}
		return n, acts
	}
	n.Recovery.NotAgentSince, n.Recovery.OfflineSince, n.Recovery.FailedWhy = time.Time{}, time.Time{}, ""
	switch n.Status {
	case Offline, Failed, Starting, "":
		n.Status = Ready
		acts = append(acts, audit(AuditOnline, s.Pane, ""))
	}
	return n, acts
}

// lastSign is the last time rt's agent session was known used: its last
// heartbeat or its last sign (Recovery.LastSign), whichever is later.
// Zero when neither is known (a record of a party that kept no sign): its
// session is resumed, not dropped on a guess.
func lastSign(rt Runtime) time.Time {
	if rt.LastHeartbeat.After(rt.Recovery.LastSign) {
		return rt.LastHeartbeat
	}
	return rt.Recovery.LastSign
}

// recent are the times within window before at.
func recent(ts []time.Time, at time.Time, window time.Duration) []time.Time {
	var out []time.Time
	for _, t := range ts {
		if at.Sub(t) < window {
			out = append(out, t)
		}
	}
	return out
}
