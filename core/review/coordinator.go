package review

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	// Send delivers one line to the pane of role (delivery protocol).
	Send(ctx context.Context, role, line string) error
	// Health respawns the dead agent panes of the session.
	Health(ctx context.Context) error
}

// Config is the coordinator's configuration.
type Config struct {
	Implementer, Reviewer string
	Base                  string        // default base branch of a review
	FindingsTimeout       time.Duration // for findings and answers
	HealthInterval        time.Duration
	Poll                  time.Duration // safety-net poll of findings and signals
	MarkerDir             string        // also write /tmp/claude-<type>-<session_id> markers here
}

// Coordinator is the effect loop around Step: it applies signals in order,
// performs the actions, watches for findings and answers, and checks the
// agents' health. Its state lives in Dir; after a crash Run recovers from
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
		_ = c.Clock.Sleep(waitCtx, c.Config.Poll)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
	}
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
		if err := c.Effects.Health(ctx); err != nil && ctx.Err() == nil {
			c.Logf("health check: %v", err)
		}
	}
	return nil
}

// Status returns the status as the loop last saved it.
func (c *Coordinator) Status() Status { return c.status }

// recover picks up what a crash interrupted: a review without findings is
// dispatched again, findings already written are delivered by the next
// watch, a result that never reached the implementer is delivered, and
// unanswered questions are asked again.
func (c *Coordinator) recover(ctx context.Context) error {
	s := c.status
	if s.State == CodexReview && s.Review != nil {
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
		case sig.ID <= c.status.Signal:
			// Applied before a crash; only its removal was lost.
			res.State, res.Phase = c.status.State, c.status.Phase
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
	next, acts, err := Step(prev, ev)
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
func (c *Coordinator) reviewDir(n int) string {
	return filepath.Join(c.Dir, "reviews", strconv.Itoa(n))
}
func (c *Coordinator) findingsPath(n int) string {
	return filepath.Join(c.reviewDir(n), "findings.json")
}
func (c *Coordinator) exchangeDir(n int) string {
	return filepath.Join(c.Dir, "exchanges", strconv.Itoa(n))
}
func (c *Coordinator) answerPath(n int) string { return filepath.Join(c.exchangeDir(n), "answer.md") }

// perform carries out one action. Failures to reach an agent are logged
// and reported, never fatal; only state that cannot be written is.
func (c *Coordinator) perform(ctx context.Context, a Action) error {
	switch a.Kind {
	case ActDispatch:
		return c.dispatch(ctx, a.N)
	case ActDeliver:
		return c.deliver(ctx, a)
	case ActAsk:
		return c.ask(ctx, a.N)
	case ActMarkers:
		c.markers()
	}
	return nil
}

func (c *Coordinator) dispatch(ctx context.Context, n int) error {
	r := c.status.Review
	dir := c.reviewDir(n)
	if err := state.MkdirPrivate(dir); err != nil {
		return err
	}
	base := r.Base
	if base == "" {
		base = c.Config.Base
	}
	d, err := c.Effects.Diff(ctx, base)
	if err == nil && len(d.Patch) == 0 && len(d.Untracked) == 0 {
		err = fmt.Errorf("nothing to review: no change against %s", base)
	}
	if err != nil {
		c.Logf("review %d: %v", n, err)
		return c.apply(ctx, "", Event{Kind: EvDispatchFailed, N: n, Reason: err.Error(), At: c.Clock.Now()})
	}
	diffPath := filepath.Join(dir, "diff.patch")
	if err := state.WriteFile(diffPath, d.Patch, 0o644); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Review request %d", n)
	if r.Title != "" {
		fmt.Fprintf(&b, ": %s", r.Title)
	}
	fmt.Fprintf(&b, "\n\nYou are the reviewer. Review the change in %s: the work against %s (merge-base %s).\n", diffPath, base, d.MergeBase)
	if d.Uncommitted {
		b.WriteString("It includes changes that are not committed yet.\n")
	}
	if len(d.Untracked) > 0 {
		fmt.Fprintf(&b, "New files not yet tracked by git (read them in the working tree): %s\n", strings.Join(d.Untracked, ", "))
	}
	if r.Previous > 0 {
		fmt.Fprintf(&b, "\nThis is iteration %d. Your previous findings are in %s: check whether each was addressed.\n", c.status.Iteration, c.findingsPath(r.Previous))
	}
	if r.Note != "" {
		fmt.Fprintf(&b, "The implementer's note: %s\n", r.Note)
	}
	fmt.Fprintf(&b, "\nWrite your findings as JSON to %s (write a temporary file, then rename it), in exactly this schema, with no verdict:\n%s\n", c.findingsPath(n), FindingsSchema)
	prompt := filepath.Join(dir, "prompt.md")
	if err := state.WriteFile(prompt, []byte(b.String()), 0o644); err != nil {
		return err
	}
	line := fmt.Sprintf("[COORDINATOR] review request %d. Read: %s", n, prompt)
	if err := c.Effects.Send(ctx, c.Config.Reviewer, line); err != nil {
		c.Logf("review %d: could not reach the reviewer (%s): %v", n, c.Config.Reviewer, err)
		return c.notify(ctx, fmt.Sprintf("Review %d could not be sent to the reviewer (%s): %v. The coordinator reports a timeout if no findings arrive.", n, c.Config.Reviewer, err))
	}
	c.Logf("review %d dispatched to %s", n, c.Config.Reviewer)
	return nil
}

func (c *Coordinator) deliver(ctx context.Context, a Action) error {
	var path string
	to := c.Config.Implementer
	switch a.Type {
	case "review":
		r := *c.status.Review
		var f Findings
		if r.Outcome == Valid {
			b, err := os.ReadFile(c.findingsPath(r.N))
			if err == nil {
				f, _ = ParseFindings(b)
			}
		}
		path = filepath.Join(c.reviewDir(r.N), "message.md")
		msg := Message(r, f, c.findingsPath(r.N), c.status.Iteration, c.status.MaxIterations)
		if err := state.WriteFile(path, []byte(msg), 0o644); err != nil {
			return err
		}
	case "prompt", "dialogue":
		if a.Role != "" {
			to = a.Role
		}
		path = c.answerPath(a.N)
		if !exists(path) {
			path = filepath.Join(c.exchangeDir(a.N), "timeout.md")
			msg := fmt.Sprintf("No answer to question %d arrived within %s.\n", a.N, c.Config.FindingsTimeout)
			if err := state.WriteFile(path, []byte(msg), 0o644); err != nil {
				return err
			}
		}
		if a.Type == "dialogue" {
			c.dialogueLog(a.N, path)
		}
	default:
		return c.notify(ctx, a.Message)
	}
	line := fmt.Sprintf("[COORDINATOR] %s result ready. Read: %s", a.Type, path)
	if err := c.Effects.Send(ctx, to, line); err != nil {
		c.Logf("%s %d: could not reach %s: %v", a.Type, a.N, to, err)
		return nil
	}
	c.Logf("%s %d delivered to %s", a.Type, a.N, to)
	if a.Type == "review" {
		return c.apply(ctx, "", Event{Kind: EvDelivered, N: a.N, At: c.Clock.Now()})
	}
	return nil
}

// notify writes a notice for the implementer and points it there.
func (c *Coordinator) notify(ctx context.Context, text string) error {
	dir := filepath.Join(c.Dir, "notices")
	if err := state.MkdirPrivate(dir); err != nil {
		return err
	}
	path := filepath.Join(dir, strconv.FormatInt(c.Clock.Now().UnixNano(), 10)+".md")
	if err := state.WriteFile(path, []byte(text+"\n"), 0o644); err != nil {
		return err
	}
	if err := c.Effects.Send(ctx, c.Config.Implementer, "[COORDINATOR] notice result ready. Read: "+path); err != nil {
		c.Logf("notice: could not reach %s: %v", c.Config.Implementer, err)
	}
	return nil
}

func (c *Coordinator) ask(ctx context.Context, n int) error {
	var x *Exchange
	for i := range c.status.Exchanges {
		if c.status.Exchanges[i].N == n {
			x = &c.status.Exchanges[i]
		}
	}
	if x == nil {
		return nil
	}
	to := x.To
	if to == "" {
		to = c.Config.Reviewer
	}
	from := x.From
	if from == "" {
		from = c.Config.Implementer
	}
	dir := c.exchangeDir(n)
	if err := state.MkdirPrivate(dir); err != nil {
		return err
	}
	q := filepath.Join(dir, "question.md")
	text := fmt.Sprintf("# Question %d from %s\n\n%s\n\nWrite your answer to %s (write a temporary file, then rename it).\n", n, from, x.Text, c.answerPath(n))
	if err := state.WriteFile(q, []byte(text), 0o644); err != nil {
		return err
	}
	if x.Kind == "dialogue" {
		c.dialogueLog(n, "")
	}
	if err := c.Effects.Send(ctx, to, fmt.Sprintf("[COORDINATOR] question %d from %s. Read: %s", n, from, q)); err != nil {
		c.Logf("question %d: could not reach %s: %v", n, to, err)
	}
	return nil
}

// dialogueLog appends a question (answer "") or its answer to dialogue.jsonl.
func (c *Coordinator) dialogueLog(n int, answerPath string) {
	var x Exchange
	for _, e := range c.status.Exchanges {
		if e.N == n {
			x = e
		}
	}
	line := map[string]any{"time": c.Clock.Now().UTC(), "n": n}
	if answerPath == "" {
		line["from"], line["to"], line["question"] = x.From, x.To, x.Text
	} else {
		b, _ := os.ReadFile(answerPath)
		line["answer"], line["file"] = string(b), answerPath
	}
	if err := state.AppendEvent(filepath.Join(c.Dir, DialogueFile), line); err != nil {
		c.Logf("dialogue.jsonl: %v", err)
	}
}

// watch turns files that appeared, and deadlines that passed, into events.
func (c *Coordinator) watch(ctx context.Context) error {
	now := c.Clock.Now()
	s := c.status
	if r := s.Review; s.State == CodexReview && r != nil && (s.Phase == Dispatched || r.Outcome == Late) {
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

func isStep(err error) bool {
	var se *stepError
	return errors.As(err, &se)
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
		var syn *json.SyntaxError
		if (errors.As(err, &syn) || strings.Contains(err.Error(), "unexpected EOF")) && now.Sub(st.ModTime()) < 2*c.Config.Poll {
			return Event{}, false
		}
		return Event{Kind: EvFindingsBad, N: n, At: now, Reason: err.Error()}, true
	}
	return Event{Kind: EvFindings, N: n, At: now, Blocking: f.Blocking(), Total: len(f.Findings)}, true
}

// markerNames are the names of the brief's marker files per kind.
var markerNames = map[Kind]string{Critic: "code-critic"}

// markers mirrors the evidence as /tmp/claude-<type>-<session_id> files
// for hook setups that read them, when a marker dir is configured and
// Claude's session id is known.
func (c *Coordinator) markers() {
	dir, sid := c.Config.MarkerDir, c.status.SessionID
	if dir == "" || sid == "" || strings.ContainsAny(sid, "/\x00") {
		return
	}
	for _, k := range Kinds {
		name := markerNames[k]
		if name == "" {
			name = string(k)
		}
		path := filepath.Join(dir, "claude-"+name+"-"+sid)
		if c.status.Fresh(k) {
			if !exists(path) {
				if err := state.WriteFile(path, []byte(c.status.Evidence[k].Format(time.RFC3339)+"\n"), 0o600); err != nil {
					c.Logf("marker %s: %v", path, err)
				}
			}
			continue
		}
		_ = os.Remove(path)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
