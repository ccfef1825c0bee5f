package review

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/state"
)

// Diff is the work under review.
type Diff struct {
	Patch       []byte
	Base        string // the branch asked for
	MergeBase   string // the commit the diff starts from
	Uncommitted bool   // the patch includes changes not committed yet
	Untracked   []string
}

// Effects are what the coordinator does outside its directory.
type Effects interface {
	// Diff returns the work against merge-base HEAD base, uncommitted
	// changes included.
	Diff(ctx context.Context, base string) (Diff, error)
	// Send types one line into the pane of role (delivery protocol). Not
	// to be confused with WriteSignal, which writes a signal file.
	Send(ctx context.Context, role, line string) error
	// Health respawns the dead agent panes of the session and returns
	// the roles it respawned.
	Health(ctx context.Context) ([]string, error)
}

// Config is the coordinator's configuration.
type Config struct {
	Implementer, Reviewer string
	Base                  string        // default base branch of a review
	FindingsTimeout       time.Duration // for findings and answers
	HealthInterval        time.Duration
	Poll                  time.Duration // how often findings and answers are looked for (signals wake the loop)
	MarkerDir             string        // also write /tmp/claude-<type>-<session_id> markers here
	// MaxIterations, when set, replaces the iteration cap of the saved
	// state, so that a changed review.maxIterations takes effect.
	MaxIterations int
}

// Coordinator is the effect loop around Step and stepOutbox: it applies
// signals in order, performs the actions, watches for findings and
// answers, and checks the agents' health. Its state lives in Dir; after a crash Run recovers from
// it.
type Coordinator struct {
	Dir     string
	Clock   clock.Clock
	Effects Effects
	Config  Config
	// Wake, when set, says that a signal may have arrived.
	Wake <-chan struct{}
	// Logf writes a line of the coordinator's log.
	Logf func(format string, args ...any)

	status     Status
	nextHealth time.Time
	// outbox holds the lines an agent has not taken yet (see stepOutbox).
	outbox outbox
}

// Init writes the starting status into dir unless one is there.
func Init(dir string, now time.Time, maxIterations int) error {
	if err := state.MkdirPrivate(dir); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, StateFile)); err == nil {
		return nil
	}
	return Save(dir, New(now, maxIterations))
}

// Run loads the status, recovers an interrupted review or exchange, and
// loops until ctx is done; then it returns nil. It returns an error only
// when its state cannot be read or written.
func (c *Coordinator) Run(ctx context.Context) error {
	s, err := Load(c.Dir)
	if err != nil {
		return err
	}
	if c.Config.MaxIterations > 0 && s.MaxIterations != c.Config.MaxIterations {
		c.Logf("iteration cap: %d (was %d)", c.Config.MaxIterations, s.MaxIterations)
		s.MaxIterations = c.Config.MaxIterations
		if err := Save(c.Dir, s); err != nil {
			return err
		}
	}
	c.status = s
	if err := c.recover(ctx); err != nil {
		return err
	}
	for {
		if err := c.pass(ctx); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		waitCtx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-c.Wake:
				cancel()
			case <-waitCtx.Done():
			}
		}()
		_ = c.Clock.Sleep(waitCtx, c.nap())
		cancel()
		if ctx.Err() != nil {
			return nil
		}
	}
}

// idleNap bounds the sleep of a coordinator that awaits nothing: signals
// wake it, the nap only covers a lost wake-up.
const idleNap = 2 * time.Second

// nap is how long the loop sleeps: Poll while findings, answers or
// retries are awaited, else until the next health check, at most idleNap.
func (c *Coordinator) nap() time.Duration {
	s := c.status
	if len(s.Exchanges) > 0 || (s.State == InReview && s.Review != nil && (s.Phase == Dispatched || s.Review.Outcome == Late)) {
		return c.Config.Poll
	}
	now := c.Clock.Now()
	d := idleNap
	if c.Config.HealthInterval > 0 {
		d = min(d, c.nextHealth.Sub(now))
	}
	if due, ok := c.outbox.nextDue(); ok {
		d = min(d, due.Sub(now))
	}
	return max(d, c.Config.Poll)
}

// pass does one round: signals, findings and answers, health.
func (c *Coordinator) pass(ctx context.Context) error {
	if err := c.signals(ctx); err != nil {
		return err
	}
	if err := c.watch(ctx); err != nil {
		return err
	}
	if now := c.Clock.Now(); c.Effects != nil && c.Config.HealthInterval > 0 && !now.Before(c.nextHealth) {
		c.nextHealth = now.Add(c.Config.HealthInterval)
		roles, err := c.Effects.Health(ctx)
		if err != nil && ctx.Err() == nil {
			c.Logf("health check: %v", err)
		}
		if err := c.respawnedRoles(ctx, roles); err != nil {
			return err
		}
	}
	return c.flush(ctx)
}

// Status returns the status as the loop last saved it.
func (c *Coordinator) Status() Status { return c.status }

// recover picks up what a crash interrupted: a review without findings is
// dispatched again, findings already written are delivered by the next
// watch, a result that never reached the implementer is delivered, and
// unanswered questions are asked again.
func (c *Coordinator) recover(ctx context.Context) error {
	s := c.status
	// The last signal applied before a crash may still wait without its
	// result: record it first, so that no signal sorted before it is
	// applied in between and makes it look new.
	if s.Signal != "" && !hasResult(c.Dir, s.Signal) && exists(filepath.Join(c.Dir, signalsDir, s.Signal+".json")) {
		if err := consume(c.Dir, Result{ID: s.Signal, State: s.State, Phase: s.Phase}); err != nil {
			return err
		}
	}
	if s.State == InReview && s.Review != nil {
		switch {
		case s.Phase == Dispatched && !exists(c.findingsPath(s.Review.N)):
			c.Logf("recovery: review %d has no findings yet; dispatching it again", s.Review.N)
			if err := c.apply(ctx, "", Event{Kind: EvRedispatch, N: s.Review.N, At: c.Clock.Now()}); err != nil {
				return err
			}
		case s.Phase == Dispatched:
			c.Logf("recovery: review %d has findings; delivering them", s.Review.N)
		case s.Phase == Verdict && !s.Review.Delivered:
			c.Logf("recovery: the result of review %d was not delivered; delivering it", s.Review.N)
			if err := c.perform(ctx, Action{Kind: ActDeliver, Type: "review", N: s.Review.N}); err != nil {
				return err
			}
		}
	}
	for _, x := range s.Exchanges {
		if !exists(c.answerPath(x.N)) {
			c.Logf("recovery: question %d is unanswered; asking again", x.N)
			if err := c.perform(ctx, Action{Kind: ActAsk, N: x.N}); err != nil {
				return err
			}
		}
	}
	return nil
}

// signals applies the waiting signals in order, each exactly once.
func (c *Coordinator) signals(ctx context.Context) error {
	sigs, err := Signals(c.Dir)
	if err != nil {
		return err
	}
	for _, sig := range sigs {
		if ctx.Err() != nil {
			return nil
		}
		res := Result{ID: sig.ID}
		switch {
		case hasResult(c.Dir, sig.ID):
			// Taken before a crash; only its removal was lost.
			if err := discard(c.Dir, sig.ID); err != nil {
				return err
			}
			continue
		case sig.Event.Kind == "":
			res.Error, res.Code = "unreadable signal file", "bad-event"
			c.Logf("signal %s: unreadable; dropped with an error result", sig.ID)
		default:
			if err := c.apply(ctx, sig.ID, sig.Event); err != nil {
				var se *stepError
				if !errors.As(err, &se) {
					return err
				}
				res.Error, res.Code = se.Error(), ErrorCode(se.err)
			}
			res.State, res.Phase = c.status.State, c.status.Phase
		}
		if err := consume(c.Dir, res); err != nil {
			return err
		}
	}
	return nil
}

// stepError is an event Step rejected.
type stepError struct{ err error }

func (e *stepError) Error() string { return e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// apply steps the status with ev (from signal id, if any), saves it, logs
// the transition, and performs the actions. A rejected event is logged and
// returned as a *stepError.
func (c *Coordinator) apply(ctx context.Context, id string, ev Event) error {
	prev := c.status
	next, acts, err := Admit(c.Dir, prev, ev)
	tr := Transition{Time: c.Clock.Now().UTC(), Signal: id, Event: ev.Kind, From: prev.where(), To: next.where(), Detail: detail(ev)}
	if err != nil {
		tr.Error = err.Error()
		c.logTransition(tr)
		c.Logf("rejected %s: %v", ev.Kind, err)
		return &stepError{err}
	}
	if id != "" {
		next.Signal = id
	}
	if err := Save(c.Dir, next); err != nil {
		return err
	}
	c.status = next
	c.logTransition(tr)
	for _, a := range acts {
		if err := c.perform(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

func detail(ev Event) string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	add("evidence", string(ev.Evidence))
	add("base", ev.Base)
	add("to", ev.To)
	add("role", ev.Role)
	add("reason", ev.Reason)
	if ev.N > 0 {
		add("n", strconv.Itoa(ev.N))
	}
	return strings.Join(parts, " ")
}

func (c *Coordinator) logTransition(tr Transition) {
	if err := state.AppendEvent(filepath.Join(c.Dir, TransitionsFile), tr); err != nil {
		c.Logf("transitions.log: %v", err)
	}
}

// Paths of a review's and an exchange's files.
func (c *Coordinator) reviewDir(n int) string    { return ReviewDir(c.Dir, n) }
func (c *Coordinator) findingsPath(n int) string { return FindingsPath(c.Dir, n) }
func (c *Coordinator) exchangeDir(n int) string  { return exchangeDir(c.Dir, n) }
func (c *Coordinator) answerPath(n int) string   { return AnswerPath(c.Dir, n) }

func isStep(err error) bool {
	var se *stepError
	return errors.As(err, &se)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
