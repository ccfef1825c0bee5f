package review

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// What the coordinator watches, turned into events: respawned agents,
// findings and answers written, deadlines passed.

// respawnedRoles makes up for what a respawned agent lost with its
// context: a reviewer mid-review gets the request again, an implementer
// that has not decided yet gets the result again.
func (c *Coordinator) respawnedRoles(ctx context.Context, roles []string) error {
	now := c.Clock.Now()
	for _, role := range roles {
		c.outbox, _ = stepOutbox(c.outbox, outEvent{Kind: outRespawned, Role: role}, now)
		s := c.status
		if s.State != InReview || s.Review == nil {
			continue
		}
		switch {
		case role == c.Config.Reviewer && s.Phase == Dispatched && !exists(c.findingsPath(s.Review.N)):
			c.Logf("reviewer %s was respawned during review %d: dispatching it again", role, s.Review.N)
			if err := c.apply(ctx, "", Event{Kind: EvRedispatch, N: s.Review.N, At: now}); err != nil && !isStep(err) {
				return err
			}
		case role == c.Config.Implementer && s.Phase == Verdict:
			c.Logf("implementer %s was respawned before deciding on review %d: delivering the result again", role, s.Review.N)
			if err := c.perform(ctx, Action{Kind: ActDeliver, Type: "review", N: s.Review.N}); err != nil {
				return err
			}
		}
	}
	return nil
}

// watch turns files that appeared, and deadlines that passed, into events.
func (c *Coordinator) watch(ctx context.Context) error {
	now := c.Clock.Now()
	s := c.status
	if r := s.Review; s.State == InReview && r != nil && (s.Phase == Dispatched || r.Outcome == Late) {
		if ev, ok := c.findings(r.N, now); ok {
			if err := c.apply(ctx, "", ev); err != nil && !isStep(err) {
				return err
			}
		} else if s.Phase == Dispatched && now.Sub(r.Dispatched) >= c.Config.FindingsTimeout {
			ev := Event{Kind: EvFindingsLate, N: r.N, At: now, Reason: fmt.Sprintf("no findings in %s", c.Config.FindingsTimeout)}
			if err := c.apply(ctx, "", ev); err != nil && !isStep(err) {
				return err
			}
		}
	}
	for _, x := range c.status.Exchanges {
		var ev Event
		switch {
		case exists(c.answerPath(x.N)):
			ev = Event{Kind: EvAnswer, N: x.N, At: now}
		case now.Sub(x.Asked) >= c.Config.FindingsTimeout:
			ev = Event{Kind: EvAnswerLate, N: x.N, At: now}
		default:
			continue
		}
		if err := c.apply(ctx, "", ev); err != nil && !isStep(err) {
			return err
		}
	}
	return nil
}

// writeGrace is how long a findings file that does not parse is given to
// be finished after its last change.
const writeGrace = time.Second

// partial says whether a findings file that failed to parse may still be
// being written: empty, cut short, or not JSON (yet).
func partial(err error) bool {
	var syn *json.SyntaxError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &syn)
}

// findings reads the findings of review n, if the file is there and not
// being written (a file that does not parse yet and changed in the last
// poll interval is left for the next round).
func (c *Coordinator) findings(n int, now time.Time) (Event, bool) {
	path := c.findingsPath(n)
	st, err := os.Stat(path)
	if err != nil {
		return Event{}, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Event{}, false
	}
	f, err := ParseFindings(b)
	if err != nil {
		if partial(err) && now.Sub(st.ModTime()) < writeGrace {
			return Event{}, false
		}
		return Event{Kind: EvFindingsBad, N: n, At: now, Reason: err.Error()}, true
	}
	return Event{Kind: EvFindings, N: n, At: now, Blocking: f.Blocking(), Total: len(f.Findings)}, true
}
