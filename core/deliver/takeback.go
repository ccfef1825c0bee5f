package deliver

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/observe"
)

// takeBack removes a text that was pasted but not submitted, when the
// input box holds exactly that: a send interrupted between paste and
// confirmation leaves nothing behind to merge with the next one. It
// reports whether the box held it whole and was emptied of it.
func (d *Deliverer) takeBack(ctx context.Context, req Request, text string) bool {
	for i := range maxClears {
		pane, screen, err := d.Mux.Inspect(ctx, req.Pane)
		if err != nil || pane.Dead {
			return false
		}
		st := observe.Read(req.Profile, pane, screen)
		if st.Dialog != "" || !st.HasInput {
			return false
		}
		if st.Input == "" || !req.Profile.Holds(st.Input, text) {
			return i > 0
		}
		// All of it, not a part next to someone else's text; later
		// presses clear what is left of it line by line.
		if i == 0 && !ownBox(req.Profile, st.Input, text) {
			return false
		}
		if err := d.clearLine(ctx, req); err != nil {
			return false
		}
		_ = d.Clock.Sleep(ctx, d.poll())
	}
	return false
}

// ownBox says whether the input box showing in holds text and nothing
// else: all of it, or its first line where the agent reads only the line
// of its prompt glyph (Codex's › line) of a tall input.
func ownBox(p agent.Profile, in, text string) bool {
	if p.HoldsAll(in, text) {
		return true
	}
	first, _, tall := strings.Cut(text, "\n")
	return tall && in != "" && agent.Squeeze(in) == agent.Squeeze(first)
}

// Reclaim is what a sender that stopped between its paste and its Enter
// (a supervisor killed) does with req.Text when it starts again: the text
// in req.Pane's input box is its own, never someone's draft. Under the
// pane's lock, when the box holds the text whole, alone or after someone
// else's, it is taken back (theirs left as they typed it); nothing is
// pressed when the box does not hold it. Held says the box held it; the
// error says it could not be taken back.
func (d *Deliverer) Reclaim(ctx context.Context, req Request) (held bool, err error) {
	text, err := req.pasteText()
	if err != nil {
		return false, err
	}
	unlock, err := d.Locker.Lock(ctx, req.Pane)
	if err != nil {
		return false, fmt.Errorf("reclaim in %s: waiting for earlier sends: %w", req.Pane, err)
	}
	defer unlock()
	pane, screen, err := d.Mux.Inspect(ctx, req.Pane)
	if err != nil {
		return false, fmt.Errorf("reclaim in %s: %w", req.Pane, err)
	}
	if pane.Dead {
		return false, nil
	}
	st := observe.Read(req.Profile, pane, screen)
	switch {
	case !st.HasInput || st.Input == "":
		return false, nil
	case ownBox(req.Profile, st.Input, text):
		if !d.takeBack(ctx, req, text) {
			return true, fmt.Errorf("reclaim in %s: the input box still holds the text pasted: %w", req.Pane, ErrInputBusy)
		}
		return true, nil
	case typedBefore(req.Profile, st.Input, text):
		s := submission{d: d, req: req, text: text, res: &Result{}}
		if !s.untangle(ctx, st) {
			return true, fmt.Errorf("reclaim in %s: the text pasted could not be taken back off the end of someone's: %w", req.Pane, ErrInputBusy)
		}
		return true, nil
	}
	return false, nil
}

// typedBefore reports whether the input box shows text of someone else's
// followed by the text pasted, shown in full or as placeholders.
func typedBefore(p agent.Profile, in, text string) bool {
	_, ok := theirsBefore(p, in, text)
	return ok
}

// theirsBefore cuts the text pasted off the end of the input box showing
// in, shown in full or as the agent's placeholders of it (Claude's
// "[Pasted text #1 +5 lines]"), and returns what is left before it, as
// shown: someone else's text, when there is any.
func theirsBefore(p agent.Profile, in, text string) (string, bool) {
	if p.Pasted != nil {
		end := len(in)
		locs := p.Pasted.FindAllStringIndex(in, -1)
		for i := len(locs) - 1; i >= 0 && strings.TrimSpace(in[locs[i][1]:end]) == ""; i-- {
			end = locs[i][0]
		}
		if end < len(in) {
			theirs := in[:end]
			return theirs, agent.Squeeze(theirs) != ""
		}
	}
	theirs, ok := cutShown(in, text)
	return theirs, ok && agent.Squeeze(theirs) != ""
}

// theirsAfter cuts the text pasted off the start of the input box
// showing in, shown in full or as the agent's placeholders of it, and
// returns what is left after it, trimmed: keys someone typed after the
// paste (or before an Enter the agent took for a new line), when there
// are any.
func theirsAfter(p agent.Profile, in, text string) (string, bool) {
	if p.Pasted != nil {
		start := 0
		for _, l := range p.Pasted.FindAllStringIndex(in, -1) {
			if strings.TrimSpace(in[start:l[0]]) != "" {
				break
			}
			start = l[1]
		}
		if start > 0 {
			theirs := strings.TrimSpace(in[start:])
			return theirs, theirs != ""
		}
	}
	rest, ok := cutShownStart(in, text)
	theirs := strings.TrimSpace(rest)
	return theirs, ok && theirs != ""
}

// untangleAfter takes the text pasted back out of an input box that
// holds it followed by theirs, someone's keys, and types their keys back
// into the emptied box: nothing of theirs goes to the agent, nothing of
// ours stays in their draft. The box is cleared line by line from its
// end (the agent's clear keys), looking again each round, and only while
// it still shows nothing but the text and their keys. It returns the
// error to report: ErrInputBusy either way, the text not sent.
func (s *submission) untangleAfter(ctx context.Context, theirs string) error {
	p, pane := s.req.Profile, s.req.Pane
	for range maxClears {
		st, err := s.look(ctx)
		if err != nil {
			return err
		}
		if st.HasInput && st.Input == "" && st.Dialog == "" {
			if err := s.d.Mux.Paste(ctx, pane, []byte(theirs)); err != nil {
				return fmt.Errorf("send to %s: someone typed %q into the input box after the text was pasted; the text was taken back, but their keys could not be typed back: %v: %w", pane, theirs, err, ErrInputBusy)
			}
			s.res.TypedAfter, s.res.GivenBack = theirs, true
			return fmt.Errorf("send to %s: someone typed %q into the input box after the text was pasted (before its Enter, or as the agent took it for a new line); the text was taken back and their keys typed back, nothing sent: %w", pane, theirs, ErrInputBusy)
		}
		if !st.HasInput || st.Dialog != "" || st.Menu || !p.Holds(st.Input, s.text+theirs) {
			break
		}
		if err := s.d.clearLine(ctx, s.req); err != nil {
			return err
		}
		if err := s.d.Clock.Sleep(ctx, s.d.poll()); err != nil {
			return err
		}
	}
	return fmt.Errorf("send to %s: someone typed %q into the input box after the text was pasted, and the text could not be taken back out of it; Enter not pressed again: %w", pane, theirs, ErrInputBusy)
}

// cutShown cuts text off the end of in, white space aside (an agent
// rewraps what it shows), and returns what is before it.
func cutShown(in, text string) (string, bool) {
	shown, want := []rune(in), []rune(agent.Squeeze(text))
	i := len(shown)
	for j := len(want) - 1; j >= 0; j-- {
		for i > 0 && unicode.IsSpace(shown[i-1]) {
			i--
		}
		if i == 0 || shown[i-1] != want[j] {
			return "", false
		}
		i--
	}
	return string(shown[:i]), true
}

// cutShownStart cuts text off the start of in, white space aside (an
// agent rewraps what it shows, or trims what it reports), and returns
// what is after it.
func cutShownStart(in, text string) (string, bool) {
	shown := []rune(in)
	i := 0
	for _, w := range agent.Squeeze(text) {
		for i < len(shown) && unicode.IsSpace(shown[i]) {
			i++
		}
		if i == len(shown) || shown[i] != w {
			return "", false
		}
		i++
	}
	return string(shown[i:]), true
}

// presses is how many BSpace presses at most delete what the input box
// shows as in: one a character (white space aside, which an agent may
// draw where it wrapped) and one a placeholder, which the agents delete
// whole.
func presses(p agent.Profile, in string) int {
	n := 0
	if p.Pasted != nil {
		n = len(p.Pasted.FindAllStringIndex(in, -1))
		in = p.Pasted.ReplaceAllString(in, "")
	}
	return n + utf8.RuneCountInString(agent.Squeeze(in))
}

// untangle presses BSpace at the end of the input box until only what
// came before the pasted text is left (theirsBefore), never more presses
// than it shows of ours, looking again after each round; it reports
// whether the box ended holding just the other text.
func (s *submission) untangle(ctx context.Context, st observe.State) bool {
	p := s.req.Profile
	theirs, _ := theirsBefore(p, st.Input, s.text)
	for range maxClears {
		n := presses(p, st.Input) - presses(p, theirs)
		if n <= 0 {
			return n == 0
		}
		for range n {
			if err := s.d.Mux.SendKey(ctx, s.req.Pane, "BSpace"); err != nil {
				return false
			}
		}
		if err := s.d.Clock.Sleep(ctx, s.d.poll()); err != nil {
			return false
		}
		var err error
		if st, err = s.look(ctx); err != nil || !st.HasInput || !strings.HasPrefix(agent.Squeeze(st.Input), agent.Squeeze(theirs)) {
			return false
		}
	}
	return false
}
