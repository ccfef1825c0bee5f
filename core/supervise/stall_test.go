package supervise

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestStallTable is every edge of the stall policy: a runtime's liveness,
// a look, the liveness after it and what is audited.
func TestStallTable(t *testing.T) {
	const after = 2 * time.Minute
	rt := func(status RuntimeStatus, live Liveness) Runtime {
		return Runtime{ID: "s/claude", Role: "claude", Status: status, Recovery: Recovery{Live: live}}
	}
	quiet := Liveness{Screen: "a", Sign: t0}
	stalled := Liveness{Screen: "a", Sign: t0, StalledAt: t0.Add(after)}
	busy := Pulse{Seen: true, Busy: true, Screen: "a"}
	for _, tc := range []struct {
		name  string
		from  Runtime
		pulse Pulse
		at    time.Time
		want  Liveness
		acts  []string
	}{
		{"first look at a busy agent starts its clock", rt(Ready, Liveness{}), busy, t0, quiet, nil},
		{"busy, unchanged, within the limit", rt(Ready, quiet), busy, t0.Add(after - time.Second), quiet, nil},
		{"busy, unchanged, for the limit: stalled", rt(AwaitingAck, quiet), busy, t0.Add(after),
			stalled, []string{"audit:runtime_stalled"}},
		{"stalled stays stalled, audited once", rt(Stalled, stalled), busy, t0.Add(time.Hour), stalled, nil},
		{"its screen changed: alive", rt(Ready, quiet), Pulse{Seen: true, Busy: true, Screen: "b"}, t0.Add(after),
			Liveness{Screen: "b", Sign: t0.Add(after)}, nil},
		{"an event of its own: alive", rt(Ready, quiet), Pulse{Seen: true, Busy: true, Screen: "a", Event: true}, t0.Add(after),
			Liveness{Screen: "a", Sign: t0.Add(after)}, nil},
		{"idle: alive, nothing kept", rt(Ready, quiet), Pulse{Seen: true, Screen: "a"}, t0.Add(after), Liveness{}, nil},
		{"stalled, then its screen changes: no longer", rt(Stalled, stalled), Pulse{Seen: true, Busy: true, Screen: "b"}, t0.Add(time.Hour),
			Liveness{Screen: "b", Sign: t0.Add(time.Hour)}, []string{"audit:runtime_unstalled"}},
		{"stalled, then its turn ends: no longer", rt(Stalled, stalled), Pulse{Seen: true, Screen: "a"}, t0.Add(time.Hour),
			Liveness{}, []string{"audit:runtime_unstalled"}},
		{"a failed look changes nothing", rt(Stalled, stalled), Pulse{}, t0.Add(time.Hour), stalled, nil},
		{"offline: no liveness", rt(Offline, stalled), busy, t0.Add(time.Hour), Liveness{}, nil},
		{"stopping: no liveness", rt(Stopping, quiet), busy, t0.Add(time.Hour), Liveness{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, acts := Stall(after, tc.from, tc.pulse, tc.at)
			assert.Equal(t, tc.want, got.Recovery.Live)
			assert.Equal(t, tc.acts, kinds(acts))
			assert.Equal(t, !tc.want.StalledAt.IsZero(), IsStalled(got))
		})
	}
	t.Run("no limit: never stalled", func(t *testing.T) {
		got, acts := Stall(0, rt(Ready, quiet), busy, t0.Add(24*time.Hour))
		assert.False(t, IsStalled(got))
		assert.Empty(t, acts)
	})
}

func TestStallsOver(t *testing.T) {
	hung := trig(Acked, func(t *Trigger) { t.ID = "hung" })
	q := func(id string, st TriggerStatus) Trigger { return trig(st, func(t *Trigger) { t.ID = id }) }
	for _, tc := range []struct {
		name string
		open []Trigger
		want string
	}{
		{"the oldest behind the turn", []Trigger{hung, q("a", Queued), q("b", Queued)}, "a"},
		{"a deferred one waits behind the turn too", []Trigger{hung, q("a", TDeferred)}, "a"},
		{"one at a time: none while one resumes", []Trigger{hung, q("a", TFallbackResume), q("b", Queued)}, ""},
		{"none waits", []Trigger{hung}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := StallsOver(tc.open)
			assert.Equal(t, tc.want != "", ok)
			assert.Equal(t, tc.want, got.ID)
		})
	}
}
