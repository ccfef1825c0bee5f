package notify

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestStep runs the gate through a phase table in virtual time: switches,
// the dedupe window, the rate window, and what it forgets.
func TestStep(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	p := Policy{On: map[Kind]bool{Permission: true, Failed: true}, Dedupe: 10 * time.Minute, Burst: 3, Window: time.Minute}
	steps := []struct {
		name string
		ev   Event
		want Verdict
	}{
		{"a permission is told", Event{Kind: Permission, Key: "p1", At: at(0)}, Tell},
		{"the same one again is not", Event{Kind: Permission, Key: "p1", At: at(time.Second)}, Duplicate},
		{"a kind switched off is not", Event{Kind: Done, Key: "d1", At: at(2 * time.Second)}, Off},
		{"another key is", Event{Kind: Failed, Key: "f1", At: at(3 * time.Second)}, Tell},
		{"a third in the minute is", Event{Kind: Failed, Key: "f2", At: at(4 * time.Second)}, Tell},
		{"a fourth in the minute is dropped", Event{Kind: Failed, Key: "f3", At: at(5 * time.Second)}, Limited},
		{"a test passes the switches, a minute after the first three", Event{Kind: Test, Key: "", At: at(65 * time.Second)}, Tell},
		{"the rate allows again", Event{Kind: Failed, Key: "f3", At: at(66 * time.Second)}, Tell},
		{"within ten minutes p1 is still told", Event{Kind: Permission, Key: "p1", At: at(9 * time.Minute)}, Duplicate},
		{"after ten minutes p1 is told again", Event{Kind: Permission, Key: "p1", At: at(10 * time.Minute)}, Tell},
		{"ten minutes on, only the newest key is remembered", Event{Kind: Permission, Key: "p2", At: at(20 * time.Minute)}, Tell},
	}
	var g Gate
	for _, s := range steps {
		before := g
		var v Verdict
		g, v = Step(p, g, s.ev)
		assert.Equal(t, s.want, v, "%s: got %s", s.name, v)
		if v != Tell {
			_, had := before.Told[s.ev.Key]
			_, has := g.Told[s.ev.Key]
			assert.False(t, has && !had, "%s: a verdict other than tell remembers no key", s.name)
		}
	}
	assert.Equal(t, 1, g.Dropped)
	assert.Len(t, g.Told, 1, "keys older than the dedupe window are forgotten")
	assert.Len(t, g.Recent, 1, "times older than the rate window are forgotten")
}

// TestStepIsPure: Step never changes the gate it is given.
func TestStepIsPure(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	p := Policy{On: map[Kind]bool{Permission: true}, Dedupe: time.Minute, Burst: 5, Window: time.Minute}
	g := Gate{Told: map[string]time.Time{"a": t0}, Recent: []time.Time{t0}}
	_, v := Step(p, g, Event{Kind: Permission, Key: "b", At: t0.Add(time.Second)})
	assert.Equal(t, Tell, v)
	assert.Equal(t, Gate{Told: map[string]time.Time{"a": t0}, Recent: []time.Time{t0}}, g)
}

func TestParseKinds(t *testing.T) {
	on, err := ParseKinds("permission, failed")
	assert.NoError(t, err)
	assert.Equal(t, map[Kind]bool{Permission: true, Failed: true}, on)
	on, err = ParseKinds("all")
	assert.NoError(t, err)
	assert.Len(t, on, len(Kinds))
	on, err = ParseKinds("none")
	assert.NoError(t, err)
	assert.Empty(t, on)
	_, err = ParseKinds("permission,bogus")
	assert.Error(t, err)
}
