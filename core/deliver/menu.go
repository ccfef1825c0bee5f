package deliver

import (
	"context"
	"fmt"
	"time"

	"github.com/partyhq/party/core/observe"
)

// menuWindow is how long a completion menu over the whole pasted text is
// watched for the agent to take it down itself, before its MenuKey is
// pressed, and again after.
const menuWindow = time.Second

// menuOver deals with a completion menu open over the pasted text before
// the first Enter, which would pick one of its items. Gemini opens its /
// menu for a text that starts with "/" once trimmed; under load it drew
// the menu of a first part of a paste over the whole text and took it
// down a moment later. menuOver waits menuWindow for that, then presses
// the profile's MenuKey once (gemini's Esc closes the menu and keeps the
// text; a second Esc would empty the box) and waits again. It returns the
// state once no menu is open, or the box no longer holds the text. A menu
// that stays: the text is taken back, and the error says so and what to
// do.
func (s *submission) menuOver(ctx context.Context, st observe.State) (observe.State, error) {
	p := s.req.Profile
	deadline := s.d.Clock.Now().Add(menuWindow)
	pressed := false
	for st.Menu && st.HasInput && p.Holds(st.Input, s.text) {
		if !s.d.Clock.Now().Before(deadline) {
			if pressed || p.MenuKey == "" {
				return st, s.menuStays(ctx, st, pressed)
			}
			if err := s.d.Mux.SendKey(ctx, s.req.Pane, p.MenuKey); err != nil {
				return st, fmt.Errorf("send to %s: press %s to close the completion menu: %w", s.req.Pane, p.MenuKey, err)
			}
			pressed = true
			deadline = s.d.Clock.Now().Add(menuWindow)
		}
		if err := s.d.Clock.Sleep(ctx, s.d.poll()); err != nil {
			return st, err
		}
		var err error
		if st, err = s.look(ctx); err != nil {
			return st, err
		}
	}
	if pressed {
		// The Enter that follows must not come as one with the key that
		// closed the menu (ESC then CR reads as Alt+Enter): settle.
		if err := s.d.Clock.Sleep(ctx, p.Settle); err != nil {
			return st, err
		}
		return s.look(ctx)
	}
	return st, nil
}

// menuStays takes the pasted text back from under a completion menu that
// would not close, and returns the refusal: what is on screen, where the
// text is, and the way out.
func (s *submission) menuStays(ctx context.Context, st observe.State, pressed bool) error {
	closed := ""
	if pressed {
		closed = fmt.Sprintf(" (%s did not close it)", s.req.Profile.MenuKey)
	}
	return fmt.Errorf("send to %s: a completion menu stayed open over the pasted text%s, where Enter would pick from it; Enter not pressed, %s; nothing was sent: send it again, or start the text with a word: %w",
		s.req.Pane, closed, s.takeBack(ctx), ErrDialog)
}

// takeBack takes the pasted text back from under a completion menu
// (Deliverer.takeBack) and says where the text is now.
func (s *submission) takeBack(ctx context.Context) string {
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	s.d.takeBack(tctx, s.req, s.text)
	cancel()
	if now, err := s.look(ctx); err != nil || (now.HasInput && s.req.Profile.Holds(now.Input, s.text)) {
		return "the text is still in the input box (clear it, or send again with --clear)"
	}
	return "the text was taken back"
}
