package notify

import (
	"maps"
	"time"
)

// Policy is what Step decides by: the kinds switched on, the window in
// which an event of the same key is told once, and the rate limit (Burst
// events in any Window).
type Policy struct {
	On     map[Kind]bool
	Dedupe time.Duration
	Burst  int
	Window time.Duration
}

// Verdict is what Step decided about an event.
type Verdict int

// The verdicts.
const (
	Tell      Verdict = iota // tell it
	Off                      // its kind is switched off
	Duplicate                // told already within the dedupe window
	Limited                  // over the rate limit: dropped
)

func (v Verdict) String() string {
	return [...]string{"tell", "off", "duplicate", "limited"}[v]
}

// Gate is what Step remembers: when each key was last told and when the
// events of the rate window were, and how many were dropped for the
// rate. It is saved with the notifier's state.
type Gate struct {
	Told    map[string]time.Time `json:"told,omitempty"`
	Recent  []time.Time          `json:"recent,omitempty"`
	Dropped int                  `json:"dropped,omitempty"`
}

// Step decides whether ev is told and returns the gate after it. It
// forgets keys older than the dedupe window and times older than the rate
// window. A Test event passes every switch.
func Step(p Policy, g Gate, ev Event) (Gate, Verdict) {
	now := ev.At
	told := map[string]time.Time{}
	for k, t := range g.Told {
		if now.Sub(t) < p.Dedupe {
			told[k] = t
		}
	}
	var recent []time.Time
	for _, t := range g.Recent {
		if now.Sub(t) < p.Window {
			recent = append(recent, t)
		}
	}
	n := Gate{Told: told, Recent: recent, Dropped: g.Dropped}
	switch {
	case ev.Kind != Test && !p.On[ev.Kind]:
		return n, Off
	case ev.Key != "" && hasKey(told, ev.Key):
		return n, Duplicate
	case p.Burst > 0 && len(recent) >= p.Burst:
		n.Dropped++
		return n, Limited
	}
	n.Told = maps.Clone(told)
	if ev.Key != "" {
		n.Told[ev.Key] = now
	}
	n.Recent = append(append([]time.Time(nil), recent...), now)
	return n, Tell
}

func hasKey(m map[string]time.Time, k string) bool {
	_, ok := m[k]
	return ok
}
