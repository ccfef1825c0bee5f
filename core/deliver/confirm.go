package deliver

import (
	"context"
	"fmt"
	"time"

	"github.com/partyhq/party/core/observe"
)

// watch looks at the pane after a key press until the submission is
// confirmed or window ends.
func (s *submission) watch(ctx context.Context, before observe.State, window time.Duration) (observe.State, bool, error) {
	p := s.req.Profile
	deadline := s.d.Clock.Now().Add(window)
	st := before
	empty := 0 // looks in a row that found the box empty
	for {
		if err := s.d.Clock.Sleep(ctx, s.d.poll()); err != nil {
			return st, false, err
		}
		if s.events && s.d.Events.Submitted(s.req.Pane, s.mark, s.text) {
			// The real Claude runs UserPromptSubmit before it clears
			// its box: wait for that first, so that what follows (talk
			// reading the turn) does not see the text still there.
			var ok bool
			if st, ok = s.cleared(ctx, st); ok || !before.Busy {
				// An idle agent had nothing queued to announce: the
				// event is this Enter's. Our text in its box again is
				// the agent putting it back (Claude after an Esc before
				// the first token), not a lost Enter to press again.
				s.res.Via = "event"
				return st, true, nil
			}
			// A busy agent still holds the text: it is slow to clear
			// it, or the event was an earlier queued submission of the
			// same words and this Enter was lost. Watch on.
		}
		var err error
		if st, err = s.look(ctx); err != nil {
			return st, false, err
		}
		if st.Pane.Dead {
			return st, false, fmt.Errorf("send to %s: pane died after Enter (%s): %w", s.req.Pane, describeDead(st.Pane), ErrPaneDead)
		}
		taken := false
		switch {
		case len(p.Prompts) == 0:
			taken = st.Screen != before.Screen
		case st.HasInput && st.Input == "" && st.Dialog == "":
			// Twice in a row: one capture can catch the agent between
			// clearing its box and drawing it again.
			empty++
			taken = empty >= 2
		case !st.HasInput && st.Dialog == "" && !before.Busy && st.Busy:
			// The box hides while the agent works: turning busy is all
			// the screen tells. Where the box stays, busy alone proves
			// nothing (a queued turn starting), the text must leave it.
			taken = true
		case st.Dialog != "" && before.Dialog == "" && !before.Busy && !(st.HasInput && p.Holds(st.Input, s.text)):
			// An idle agent opened a dialog after Enter: the turn our
			// text started asks for approval before anything else (on a
			// loaded machine, before a look caught it busy).
			taken = true
		}
		if !(st.HasInput && st.Input == "") {
			empty = 0
		}
		if taken {
			s.res.Via = "screen"
			return st, true, nil
		}
		if !s.d.Clock.Now().Before(deadline) {
			return st, false, nil
		}
	}
}

// hooked watches the pane while the agent runs a hook (Announcing), up to
// hookWait, pressing nothing: it reports true when the submission was
// seen, else the last state once the hook is over (or the wait is).
func (s *submission) hooked(ctx context.Context, st observe.State, window time.Duration) (observe.State, bool, error) {
	deadline := s.d.Clock.Now().Add(hookWait)
	for s.d.Announcing(st.Pane) && s.d.Clock.Now().Before(deadline) {
		var ok bool
		var err error
		if st, ok, err = s.watch(ctx, st, window); err != nil || ok {
			return st, ok, err
		}
	}
	return st, false, nil
}

// cleared follows a submission the agent announced until its input box no
// longer shows the text (the hook can come before the box is redrawn), so
// that the next delivery finds it empty. It presses nothing, and reports
// false when the box still holds the text at the end of the confirm window.
func (s *submission) cleared(ctx context.Context, st observe.State) (observe.State, bool) {
	holds := func(st observe.State) bool {
		return st.HasInput && s.req.Profile.HoldsAll(st.Input, s.text)
	}
	deadline := s.d.Clock.Now().Add(s.d.confirm())
	for holds(st) && s.d.Clock.Now().Before(deadline) {
		if s.d.Clock.Sleep(ctx, s.d.poll()) != nil {
			return st, true // interrupted: the event stands
		}
		next, err := s.look(ctx)
		if err != nil {
			return st, true
		}
		st = next
	}
	return st, !holds(st)
}
