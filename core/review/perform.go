package review

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/partyhq/party/core/state"
)

// What the coordinator does for the actions of Step (the files of a
// review, a question or a notice, and the marker files) and of stepOutbox
// (the sends).

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
	b.WriteString("Or run: party review findings 'JSON' (it checks the schema and writes the file).\n")
	prompt := filepath.Join(dir, "prompt.md")
	if err := state.WriteFile(prompt, []byte(b.String()), 0o644); err != nil {
		return err
	}
	line := fmt.Sprintf("[COORDINATOR] review request %d. Read: %s", n, prompt)
	return c.post(ctx, outLine{Role: c.Config.Reviewer, Text: line, Kind: lineDispatch, N: n})
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
	return c.post(ctx, outLine{Role: to, Text: line, Kind: lineKind(a.Type), N: a.N})
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
	return c.post(ctx, outLine{Role: c.Config.Implementer, Text: "[COORDINATOR] notice result ready. Read: " + path, Kind: lineNotice})
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
	text := fmt.Sprintf("# Question %d from %s\n\n%s\n\nWrite your answer to %s (write a temporary file, then rename it), or run: party review answer %d 'ANSWER'\n", n, from, x.Text, c.answerPath(n), n)
	if err := state.WriteFile(q, []byte(text), 0o644); err != nil {
		return err
	}
	if x.Kind == "dialogue" {
		c.dialogueLog(n, "")
	}
	return c.post(ctx, outLine{Role: to, Text: fmt.Sprintf("[COORDINATOR] question %d from %s. Read: %s", n, from, q), Kind: lineQuestion, N: n})
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

// post hands l to the outbox, which sends it now or holds it.
func (c *Coordinator) post(ctx context.Context, l outLine) error {
	now := c.Clock.Now()
	return c.stepOutbox(ctx, outEvent{Kind: outPost, Line: l}, now)
}

// flush sends the lines whose time has come, and forgets those that no
// longer matter (a review that moved on, a question answered).
func (c *Coordinator) flush(ctx context.Context) error {
	f := outFacts{Status: c.status, Findings: map[int]bool{}, Answers: map[int]bool{}}
	for _, l := range c.outbox.Lines {
		switch l.Kind {
		case lineDispatch:
			f.Findings[l.N] = exists(c.findingsPath(l.N))
		case lineQuestion:
			f.Answers[l.N] = exists(c.answerPath(l.N))
		}
	}
	return c.stepOutbox(ctx, outEvent{Kind: outTick, Facts: f}, c.Clock.Now())
}

// stepOutbox steps the outbox with ev at now and performs its actions.
func (c *Coordinator) stepOutbox(ctx context.Context, ev outEvent, now time.Time) error {
	var acts []outAction
	c.outbox, acts = stepOutbox(c.outbox, ev, now)
	for _, a := range acts {
		l := a.Line
		switch a.Kind {
		case outSend:
			if err := c.send(ctx, l); err != nil {
				return err
			}
		case outDue:
			if err := c.post(ctx, l); err != nil {
				return err
			}
		case outRetry:
			c.Logf("%s %d: could not reach %s (retry in %s): %v", l.Kind, l.N, l.Role, l.Wait, a.Err)
		case outDelivered:
			c.Logf("%s %d delivered to %s", l.Kind, l.N, l.Role)
			if l.Kind == lineReview {
				if err := c.apply(ctx, "", Event{Kind: EvDelivered, N: l.N, At: now}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// send types l into its agent's pane and steps the outbox with the
// outcome, as of the time the send began. A send that ctx stopped is
// dropped: a restart sends again what is still owed.
func (c *Coordinator) send(ctx context.Context, l outLine) error {
	at := c.Clock.Now()
	err := c.Effects.Send(ctx, l.Role, l.Text)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil
	case err != nil:
		return c.stepOutbox(ctx, outEvent{Kind: outFailed, Line: l, Err: err}, at)
	}
	return c.stepOutbox(ctx, outEvent{Kind: outSent, Line: l}, at)
}
