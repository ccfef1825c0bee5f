package review

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
	// outbox holds the lines an agent has not taken yet, retried with
	// backoff; respawned says when each role's pane was last respawned.
	outbox    []pending
	respawned map[string]time.Time
}

// pending is a line the coordinator still owes an agent.
type pending struct {
	role, line string
	kind       string // dispatch, review, question or notice
	n          int    // review or exchange number
	next       time.Time
	wait       time.Duration
}

// Delivery retry timing: the first retry after retryFirst, doubling up to
// retryMax; a respawned pane gets lines only after respawnGrace, the time
// an agent needs to draw its screen.
const (
	retryFirst   = 5 * time.Second
	retryMax     = time.Minute
	respawnGrace = 3 * time.Second
)

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
	for _, p := range c.outbox {
		d = min(d, p.next.Sub(now))
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

// respawnedRoles makes up for what a respawned agent lost with its
// context: a reviewer mid-review gets the request again, an implementer
// that has not decided yet gets the result again.
func (c *Coordinator) respawnedRoles(ctx context.Context, roles []string) error {
	now := c.Clock.Now()
	for _, role := range roles {
		if c.respawned == nil {
			c.respawned = map[string]time.Time{}
		}
		c.respawned[role] = now
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

// post sends line to role, or keeps it in the outbox for a retry when the
// agent cannot take it now. A delivered review result is recorded.
func (c *Coordinator) post(ctx context.Context, p pending) error {
	now := c.Clock.Now()
	if at, ok := c.respawned[p.role]; ok && now.Before(at.Add(respawnGrace)) {
		p.next = at.Add(respawnGrace)
		c.queue(p)
		return nil
	}
	if err := c.Effects.Send(ctx, p.role, p.line); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		if p.wait = 2 * p.wait; p.wait == 0 {
			p.wait = retryFirst
		}
		p.wait = min(p.wait, retryMax)
		p.next = now.Add(p.wait)
		c.Logf("%s %d: could not reach %s (retry in %s): %v", p.kind, p.n, p.role, p.wait, err)
		c.queue(p)
		return nil
	}
	c.Logf("%s %d delivered to %s", p.kind, p.n, p.role)
	if p.kind == "review" {
		return c.apply(ctx, "", Event{Kind: EvDelivered, N: p.n, At: now})
	}
	return nil
}

// queue puts p in the outbox, in place of an older line of the same kind
// and number.
func (c *Coordinator) queue(p pending) {
	for i, q := range c.outbox {
		if q.kind == p.kind && q.n == p.n && q.role == p.role && p.kind != "notice" {
			c.outbox[i] = p
			return
		}
	}
	c.outbox = append(c.outbox, p)
}

// flush retries the lines whose time has come, and forgets those that no
// longer matter (a review that moved on, a question answered).
func (c *Coordinator) flush(ctx context.Context) error {
	now := c.Clock.Now()
	var due, keep []pending
	for _, p := range c.outbox {
		switch {
		case !c.owed(p):
		case now.Before(p.next):
			keep = append(keep, p)
		default:
			due = append(due, p)
		}
	}
	c.outbox = keep
	for _, p := range due {
		if err := c.post(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// owed says whether the line p still needs to reach its agent.
func (c *Coordinator) owed(p pending) bool {
	s := c.status
	switch p.kind {
	case "dispatch":
		return s.State == InReview && s.Phase == Dispatched && s.current(p.n) && !exists(c.findingsPath(p.n))
	case "review":
		return s.State == InReview && s.Phase == Verdict && s.current(p.n)
	case "question":
		return slices.ContainsFunc(s.Exchanges, func(x Exchange) bool { return x.N == p.n }) && !exists(c.answerPath(p.n))
	}
	return true
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
	if err != nil && ctx.Err() != nil {
		// Stopped while taking the diff: the review stays dispatched and
		// the next start dispatches it again.
		return nil
	}
	if err != nil {
		c.Logf("review %d: %v", n, err)
		return c.apply(ctx, "", Event{Kind: EvDispatchFailed, N: n, Reason: err.Error(), At: c.Clock.Now()})
	}
	if stale := c.findingsPath(n); exists(stale) {
		// Left by a reviewer of an earlier try of this number: kept aside,
		// never taken for this review.
		aside := fmt.Sprintf("%s.stale-%d", stale, c.Clock.Now().UnixNano())
		if err := os.Rename(stale, aside); err != nil {
			return err
		}
		c.Logf("review %d: an old findings file was moved to %s", n, aside)
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
	if prev := c.findingsPath(r.Previous); r.Previous > 0 && exists(prev) {
		fmt.Fprintf(&b, "\nThis is iteration %d. Your previous findings are in %s: check whether each was addressed.\n", c.status.Iteration, prev)
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
	return c.post(ctx, pending{role: c.Config.Reviewer, line: line, kind: "dispatch", n: n})
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
	return c.post(ctx, pending{role: to, line: line, kind: a.Type, n: a.N})
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
	return c.post(ctx, pending{role: c.Config.Implementer, line: "[COORDINATOR] notice result ready. Read: " + path, kind: "notice"})
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
	return c.post(ctx, pending{role: to, line: fmt.Sprintf("[COORDINATOR] question %d from %s. Read: %s", n, from, q), kind: "question", n: n})
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
		if partial(err) && now.Sub(st.ModTime()) < writeGrace {
			return Event{}, false
		}
		return Event{Kind: EvFindingsBad, N: n, At: now, Reason: err.Error()}, true
	}
	return Event{Kind: EvFindings, N: n, At: now, Blocking: f.Blocking(), Total: len(f.Findings)}, true
}

// markerNames are the names of the marker files per kind where they are
// not the kind's: the names the hook setups that read them look for, which
// keep the old names of the coordinator's evidence.
var markerNames = map[Kind]string{Critic: "code-critic", ReviewerRan: "codex-ran", ReviewApproved: "codex"}

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
