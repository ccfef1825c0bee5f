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
	"github.com/partyhq/party/core/tmux"
)

var _ supervise.Pulser = (*Effects)(nil)

// look is what Pulses last found of a pane: the pane as the listing
// before the look showed it, and the pulse.
type look struct {
	pane  tmux.ListedPane // the pane in the listing before the look
	still bool            // its window had printed nothing in the second of the listing
	pulse supervise.Pulse
}

// Pulses looks at each runtime's pane for signs of life, and reads the
// session's event log on from where the last look stopped for the panes
// that logged an event. A pass calls it every supervise.stallAfter/20. One
// listing of the session's panes first says which printed nothing since
// their last look (their window's activity, and the pane, are as they
// were): their screen is as it was, and so is what it says; the others'
// are captured (one query each, pane and screen).
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
	// Before the listing: an output in the second it was taken may be
	// after it (activity counts whole seconds).
	second := e.Clock.Now().Unix()
	listing := map[string]tmux.ListedPane{}
	if panes, err := e.Tmux.ListPanesAsIs(ctx, e.Info.Name); err == nil {
		for _, p := range panes {
			listing[p.ID] = p
		}
	}
	looks := make(map[string]look, len(rts))
	out := make(map[string]supervise.Pulse, len(rts))
	for _, rt := range rts {
		lp, listed := listing[rt.Pane]
		if last, ok := e.pulse.looks[rt.Pane]; ok && listed && lp.Role == rt.Role && last.still && last.pane == lp {
			p := last.pulse
			p.Event = evented[rt.Pane]
			looks[rt.Pane], out[rt.Role] = last, p
			continue
		}
		p, screen, err := e.Tmux.Inspect(ctx, rt.Pane)
		if err != nil || p.Dead || p.Role != rt.Role {
			continue
		}
		profile := talk.Profile(e.Config, p)
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
		pulse := supervise.Pulse{Seen: true, Busy: profile.IsBusy(screen), Screen: hex.EncodeToString(h.Sum(nil)[:12]), Event: evented[rt.Pane]}
		out[rt.Role] = pulse
		if listed {
			looks[rt.Pane] = look{pane: lp, still: lp.Activity < second, pulse: pulse}
		}
	}
	e.pulse.looks = looks
	return out
}
