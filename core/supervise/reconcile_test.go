package supervise

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestReconcileTable is every edge of a runtime's reconciliation with
// tmux, in virtual time.
func TestReconcileTable(t *testing.T) {
	p := DefaultRecoveryPolicy
	alive := Sight{Found: true, Pane: "%1", PID: 10, RunsAgent: true}
	rt := func(status RuntimeStatus, mod ...func(*Runtime)) Runtime {
		r := Runtime{ID: "s/claude", Role: "claude", Pane: "%1", PID: 10, Status: status}
		for _, m := range mod {
			m(&r)
		}
		return r
	}
	offline := func(since time.Duration, restarts ...time.Duration) func(*Runtime) {
		return func(r *Runtime) {
			r.Recovery.OfflineSince = t0.Add(since)
			for _, d := range restarts {
				r.Recovery.Restarts = append(r.Recovery.Restarts, t0.Add(d))
			}
		}
	}
	tests := []struct {
		name  string
		from  Runtime
		sight Sight
		at    time.Duration
		want  RuntimeStatus
		acts  []string
	}{
		{"alive stays ready", rt(Ready), alive, 0, Ready, nil},
		{"a dead pane is offline", rt(Ready), Sight{Found: true, Dead: true, Pane: "%1"}, 0, Offline, []string{"audit:runtime_offline"}},
		{"a gone pane is offline", rt(Triggering), Sight{}, 0, Offline, []string{"audit:runtime_offline"}},
		{"offline a while yet", rt(Offline, offline(0)), Sight{}, 4 * time.Second, Offline, nil},
		{"offline past the threshold is restarted", rt(Offline, offline(0)), Sight{}, 5 * time.Second, Offline,
			[]string{"audit:runtime_restart", "restart"}},
		{"restarted 3 times in 15 minutes: failed", rt(Offline, offline(10*time.Minute, 0, 5*time.Minute, 10*time.Minute)), Sight{},
			11 * time.Minute, Failed, []string{"audit:runtime_failed"}},
		{"old restarts do not count", rt(Offline, offline(20*time.Minute, 0, time.Minute, 2*time.Minute)), Sight{},
			21 * time.Minute, Offline, []string{"audit:runtime_restart", "restart"}},
		{"back after a restart: ready", rt(Offline, offline(0, 0)), alive, 8 * time.Second, Ready, []string{"audit:runtime_ready"}},
		{"another pane or pid is drift, corrected", rt(Ready), Sight{Found: true, Pane: "%7", PID: 99, RunsAgent: true}, 0, Ready,
			[]string{"audit:registry_drift"}},
		{"not its agent: grace", rt(Ready), Sight{Found: true, Pane: "%1", PID: 10}, 0, Ready, nil},
		{"not its agent past the grace: failed", rt(Ready, func(r *Runtime) { r.Recovery.NotAgentSince = t0 }),
			Sight{Found: true, Pane: "%1", PID: 10}, 30 * time.Second, Failed, []string{"audit:runtime_failed"}},
		{"a failed runtime running its agent again is ready", rt(Failed), alive, 0, Ready, []string{"audit:runtime_ready"}},
		{"a failed runtime whose pane died stays failed", rt(Failed), Sight{}, time.Hour, Failed, nil},
		{"a runtime busy with a trigger keeps that status", rt(AwaitingAck), alive, 0, AwaitingAck, nil},
		{"a stopping runtime is left to its stop", rt(Stopping, offline(0)), Sight{}, time.Hour, Stopping, nil},
		{"a runtime a trigger's fallback holds is not restarted", rt(Offline, offline(0)), Sight{Held: true}, time.Minute, Offline, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, acts := Reconcile(p, tc.from, tc.sight, t0.Add(tc.at))
			assert.Equal(t, tc.want, got.Status)
			assert.Equal(t, tc.acts, kinds(acts))
			if tc.sight.Found && !tc.sight.Dead {
				assert.Equal(t, tc.sight.Pane, got.Pane, "the record follows tmux")
			}
		})
	}
}

// TestReconcileRestartHow: a restart resumes the agent's session, unless
// none is known, it is stale, or the runtime crash-loops.
func TestReconcileRestartHow(t *testing.T) {
	p := DefaultRecoveryPolicy
	base := Runtime{ID: "s/claude", Role: "claude", Pane: "%1", Status: Offline, AgentSession: "sess-1", Updated: t0,
		Recovery: Recovery{OfflineSince: t0}}
	how := func(r Runtime, at time.Time) string {
		t.Helper()
		_, acts := Reconcile(p, r, Sight{Found: true, Dead: true, Pane: "%1"}, at)
		for _, a := range acts {
			if a.Kind == ActRestart {
				return a.Result
			}
		}
		return "none"
	}
	assert.Equal(t, RestartResume, how(base, after(5*time.Second)))
	noSession := base
	noSession.AgentSession = ""
	assert.Equal(t, RestartFresh, how(noSession, after(5*time.Second)))
	stale := base
	stale.LastHeartbeat = t0.Add(-13 * time.Hour)
	assert.Equal(t, RestartFresh, how(stale, after(5*time.Second)), "a heartbeat 12 h old is a stale session")
	recent := base
	recent.LastHeartbeat = t0.Add(-time.Hour)
	assert.Equal(t, RestartResume, how(recent, after(5*time.Second)))
	rewritten := base
	rewritten.Recovery.LastSign = t0.Add(-13 * time.Hour)
	rewritten.Updated = t0 // its status written a moment ago
	assert.Equal(t, RestartFresh, how(rewritten, after(5*time.Second)), "a record rewritten, no sign for 12 h: stale")
	signed := rewritten
	signed.Recovery.LastSign = t0.Add(-time.Hour)
	signed.LastHeartbeat = t0.Add(-20 * time.Hour)
	assert.Equal(t, RestartResume, how(signed, after(5*time.Second)), "the later of sign and heartbeat counts")
	unknown := base
	unknown.Updated = t0.Add(-48 * time.Hour)
	assert.Equal(t, RestartResume, how(unknown, after(5*time.Second)), "no sign known: resumed, not dropped on a guess")
	looping := base
	looping.Recovery.Restarts = []time.Time{t0.Add(-2 * time.Minute), t0.Add(-time.Minute)}
	assert.Equal(t, RestartFresh, how(looping, after(5*time.Second)), "the third failure in the window: a fresh session")
}

// TestReconcileRestartsBoundedInVirtualTime: a pane that dies every time
// it is restarted is restarted MaxRestarts times, then failed.
func TestReconcileRestartsBoundedInVirtualTime(t *testing.T) {
	p := DefaultRecoveryPolicy
	r := Runtime{ID: "s/claude", Role: "claude", Pane: "%1", Status: Ready}
	restarts := 0
	for s := 0; s < 600 && r.Status != Failed; s++ {
		var acts []Action
		r, acts = Reconcile(p, r, Sight{Found: true, Dead: true, Pane: "%1"}, t0.Add(time.Duration(s)*time.Second))
		for _, a := range acts {
			if a.Kind == ActRestart {
				restarts++
			}
		}
	}
	assert.Equal(t, Failed, r.Status)
	assert.Equal(t, p.MaxRestarts, restarts)
	assert.Contains(t, r.Recovery.FailedWhy, "crash loop")
}
