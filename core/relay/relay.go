package relay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/partyhq/party/core/blocks"
)

// Roles as they appear in the blocks' "to" field.
const (
	ToExecutor = "EXECUTER"
	ToPlanner  = "PLANNER"
	ToUser     = "USER"
)

// Errors of a relay.
var (
	ErrStalled = errors.New("agent stalled")
	ErrRounds  = errors.New("out of rounds")
)

// StallError is a role that produced no block in time; Screen is its last
// screen.
type StallError struct {
	Role, Want string
	After      time.Duration
	Screen     string
}

func (e *StallError) Error() string {
	return fmt.Sprintf("%s produced no %s block in %s; last screen:\n%s", e.Role, e.Want, e.After, e.Screen)
}

// Unwrap makes errors.Is(err, ErrStalled) true.
func (e *StallError) Unwrap() error { return ErrStalled }

// Panes moves text in and out of the agents' panes.
type Panes interface {
	// Mark returns the ids of the blocks already on role's screen, so a
	// wait after the next send ignores them.
	Mark(ctx context.Context, role string) (map[string]bool, error)
	// Send delivers text to role.
	Send(ctx context.Context, role, text string) error
	// Await waits until a block with one of ids, not in seen, is complete
	// on role's screen, or until d passes (returning nil and the screen).
	Await(ctx context.Context, role string, ids []string, seen map[string]bool, d time.Duration) (*blocks.Block, string, error)
}

// Log records what the relay saw and decided.
type Log func(kind string, fields map[string]any)

// Task is one relay run.
type Task struct {
	ID       string
	Text     string
	Planner  string // role of the planner pane
	Executor string // role of the executor pane
	Rounds   int
	PlanWait time.Duration
	ExecWait time.Duration
}

// Step is where a task stands; it is saved so an aborted task can be
// retried from its last step.
type Step struct {
	Task  Task     `json:"task"`
	Round int      `json:"round"`
	Role  string   `json:"role"` // who the last message went to
	Text  string   `json:"text"` // the last message
	Want  []string `json:"want"` // the block ids that answer it
	Kind  string   `json:"kind"` // plan, result or report
}

// Relay runs tasks.
type Relay struct {
	Panes Panes
	Log   Log
	// Save is called before each send with the step about to run.
	Save func(Step) error
	// NudgeAt is the fraction of a wait after which one nudge is sent.
	NudgeAt float64
}

// Nudge is sent once to a role that is slow to emit its block.
const Nudge = "If finished, emit the tagged block now."

// Run relays a task from the start and returns the planner's report.
func (r *Relay) Run(ctx context.Context, t Task) (string, error) {
	return r.from(ctx, Step{Task: t, Round: 1, Role: t.Planner, Kind: "plan",
		Text: TaskPrompt(t), Want: []string{PlanID(t.ID, 1)}})
}

// Resume re-sends the last step of an aborted task and continues.
func (r *Relay) Resume(ctx context.Context, s Step) (string, error) { return r.from(ctx, s) }

func (r *Relay) from(ctx context.Context, s Step) (string, error) {
	t := s.Task
	for {
		b, err := r.exchange(ctx, s)
		if err != nil {
			return "", err
		}
		switch {
		case b.ID == ReportID(t.ID):
			r.log("report", map[string]any{"task": t.ID, "id": b.ID})
			return b.Body, nil
		case s.Kind == "plan" || s.Kind == "report":
			// A plan (first, or a new round after a result): to the executor.
			if s.Kind == "report" {
				if s.Round >= t.Rounds {
					return "", fmt.Errorf("task %s: planner asked for round %d of %d: %w", t.ID, s.Round+1, t.Rounds, ErrRounds)
				}
				s.Round++
			}
			r.log("route", map[string]any{"task": t.ID, "id": b.ID, "from": t.Planner, "to": t.Executor})
			s = Step{Task: t, Round: s.Round, Role: t.Executor, Kind: "result",
				Text: ExecPrompt(t.ID, s.Round, b.Body), Want: []string{ResultID(t.ID, s.Round)}}
		default: // a result: back to the planner for a report or a new plan
			r.log("route", map[string]any{"task": t.ID, "id": b.ID, "from": t.Executor, "to": t.Planner})
			s = Step{Task: t, Round: s.Round, Role: t.Planner, Kind: "report",
				Text: ReportPrompt(t.ID, s.Round, b.Body), Want: []string{ReportID(t.ID), PlanID(t.ID, s.Round+1)}}
		}
	}
}

// exchange sends one step and waits for its block, nudging once.
func (r *Relay) exchange(ctx context.Context, s Step) (*blocks.Block, error) {
	if r.Save != nil {
		if err := r.Save(s); err != nil {
			return nil, err
		}
	}
	seen, err := r.Panes.Mark(ctx, s.Role)
	if err != nil {
		return nil, err
	}
	if err := r.Panes.Send(ctx, s.Role, s.Text); err != nil {
		return nil, err
	}
	r.log("sent", map[string]any{"task": s.Task.ID, "to": s.Role, "kind": s.Kind, "want": s.Want})
	total := s.Task.PlanWait
	if s.Role == s.Task.Executor {
		total = s.Task.ExecWait
	}
	at := r.NudgeAt
	if at <= 0 || at >= 1 {
		at = 0.8
	}
	first := time.Duration(float64(total) * at)
	b, _, err := r.Panes.Await(ctx, s.Role, s.Want, seen, first)
	if err != nil || b != nil {
		return r.got(s, b, err)
	}
	if err := r.Panes.Send(ctx, s.Role, Nudge); err != nil {
		return nil, err
	}
	r.log("nudge", map[string]any{"task": s.Task.ID, "to": s.Role})
	b, screen, err := r.Panes.Await(ctx, s.Role, s.Want, seen, total-first)
	if err != nil || b != nil {
		return r.got(s, b, err)
	}
	r.log("stalled", map[string]any{"task": s.Task.ID, "role": s.Role, "want": s.Want})
	return nil, &StallError{Role: s.Role, Want: s.Kind, After: total, Screen: screen}
}

func (r *Relay) got(s Step, b *blocks.Block, err error) (*blocks.Block, error) {
	if err != nil {
		return nil, err
	}
	r.log("block", map[string]any{"task": s.Task.ID, "from": s.Role, "id": b.ID, "type": b.Type, "to": b.To})
	return b, nil
}

func (r *Relay) log(kind string, fields map[string]any) {
	if r.Log != nil {
		r.Log(kind, fields)
	}
}

// Block ids of a task. The relay routes only blocks with ids it issued.
func PlanID(task string, round int) string {
	if round <= 1 {
		return task + "-plan"
	}
	return fmt.Sprintf("%s-plan-%d", task, round)
}

// ResultID is the id of the executor's result in round.
func ResultID(task string, round int) string {
	if round <= 1 {
		return task + "-result"
	}
	return fmt.Sprintf("%s-result-%d", task, round)
}

// ReportID is the id of the planner's final report.
func ReportID(task string) string { return task + "-report" }

// The prompts describe the block to emit in words, never as a complete
// block: an echoed prompt must not look like an answer.

// TaskPrompt asks the planner for a plan.
func TaskPrompt(t Task) string {
	return fmt.Sprintf("TASK %s:\n%s\n\nReply with a POLI:MSG block whose header is to %s, type plan, id %s, holding the plan for the executor.",
		t.ID, t.Text, ToExecutor, PlanID(t.ID, 1))
}

// ExecPrompt forwards a plan to the executor.
func ExecPrompt(task string, round int, plan string) string {
	return fmt.Sprintf("TASK %s PLAN from the planner:\n%s\n\nCarry it out, then reply with a POLI:MSG block whose header is to %s, type result, id %s, holding your result.",
		task, plan, ToPlanner, ResultID(task, round))
}

// ReportPrompt forwards a result to the planner.
func ReportPrompt(task string, round int, result string) string {
	return fmt.Sprintf("TASK %s RESULT from the executor:\n%s\n\nReply with the final report as a POLI:MSG block whose header is to %s, type report, id %s; or, if more work is needed, with a new plan block (to %s, type plan, id %s).",
		task, result, ToUser, ReportID(task), ToExecutor, PlanID(task, round+1))
}

// Primer is what each role is told once per pane.
func Primer(role string) string {
	peer, kind := ToExecutor, "plan"
	if role == ToExecutor {
		peer, kind = ToPlanner, "result"
	}
	return fmt.Sprintf(`You are the %s in a planner/executor pair. You exchange work through tagged blocks, written exactly like this example on lines of their own:

[[POLI:MSG {"to":"%s","type":"%s","id":"example-1"}]]
...content...
[[/POLI:MSG]]

Use the to, type and id each request names. Reply "ready".`, role, peer, kind)
}
