package panes

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"

	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/observe"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/talk"
)

var _ supervise.Pulser = (*Effects)(nil)

// Pulses looks at each runtime's pane once for signs of life (one tmux
// process each: the pane and its screen), and reads the session's event
// log on from where the last look stopped for the panes that logged an
// event. A scan calls it (every supervise.scanEvery).
func (e *Effects) Pulses(ctx context.Context, rts []supervise.Runtime) map[string]supervise.Pulse {
	path := filepath.Join(e.Info.StateDir, state.EventLog)
	end := state.Size(path)
	evented := map[string]bool{}
	if e.pulse.started { // the first look starts at the end: older events are no sign of now
		observe.Events{Path: path}.Each("", e.pulse.read, func(ev hook.Event) bool {
			evented[ev.Pane] = true
			return true
		})
	}
	e.pulse.read, e.pulse.started = end, true
	out := make(map[string]supervise.Pulse, len(rts))
	for _, rt := range rts {
		p, screen, err := e.Tmux.Inspect(ctx, rt.Pane)
		if err != nil || p.Dead || p.Role != rt.Role {
			continue
		}
		profile := talk.Profile(e.Config, p)
		st := observe.Read(profile, p, screen)
		// The busy indicator's lines move (a spinner, a timer) while a
		// hung agent waits: they are no sign of life.
		h := sha256.New()
		for _, l := range strings.Split(screen, "\n") {
			if profile.Busy != nil && profile.Busy.MatchString(l) {
				continue
			}
			h.Write([]byte(l))
			h.Write([]byte{'\n'})
		}
		out[rt.Role] = supervise.Pulse{Seen: true, Busy: st.Busy, Screen: hex.EncodeToString(h.Sum(nil)[:12]), Event: evented[rt.Pane]}
	}
	return out
}
