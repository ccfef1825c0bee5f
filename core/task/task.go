package task

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/partyhq/party/core/termsafe"
	"github.com/partyhq/party/core/usage"
)

// Status is a task's state.
type Status string

const (
	Pending    Status = "pending"
	InProgress Status = "in_progress"
	Done       Status = "done"
)

// Statuses lists every status, in the order a task moves through them.
var Statuses = []Status{Pending, InProgress, Done}

// ParseStatus checks a status a user wrote.
func ParseStatus(s string) (Status, error) {
	for _, st := range Statuses {
		if string(st) == s {
			return st, nil
		}
	}
	return "", fmt.Errorf("status %q: %w (pending, in_progress or done)", s, ErrInvalid)
}

// HumanActor is the actor of a change made outside any party pane.
const HumanActor = "human"

// Team is a party's task list. A repository is linked to its team by a
// pointer file holding only the id (./.party/team.json).
type Team struct {
	ID      string    `json:"id"`
	Name    string    `json:"name,omitempty"`
	Created time.Time `json:"created"`
}

// Milestone groups tasks.
type Milestone struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	Done    bool      `json:"done"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Number is the GitHub milestone's number (github store only).
	Number int `json:"number,omitempty"`
}

// Task is one piece of work.
type Task struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Status    Status    `json:"status"`
	Assignee  string    `json:"assignee,omitempty"`
	Milestone string    `json:"milestone,omitempty"`
	Created   time.Time `json:"created"`
	Updated   time.Time `json:"updated"`
	// Issue is the GitHub issue's number (github store only); a task
	// shows as "Task 1 (#42)".
	Issue int `json:"issue,omitempty"`
	// Forced lists the changes made elsewhere (on GitHub) that an Update
	// with Change.Force was applied over, for the CLI's warning; empty
	// otherwise.
	Forced []FieldDiff `json:"forced,omitempty"`
}

// Label is "Task 1", or "Task 1 (#42)" for a task with an issue.
func (t Task) Label() string {
	if t.Issue != 0 {
		return fmt.Sprintf("Task %s (#%d)", t.ID, t.Issue)
	}
	return "Task " + t.ID
}

// Text is the task as party pm task show prints it: its label and title,
// then status, assignee, milestone and when it was last updated, one a
// line; "-" for a field it has not.
func (t Task) Text() string {
	return fmt.Sprintf("%s: %s\nstatus:    %s\nassignee:  %s\nmilestone: %s\nupdated:   %s", t.Label(), Printable(t.Title),
		t.Status, dash(Printable(t.Assignee)), dash(Printable(t.Milestone)), t.Updated.UTC().Format("2006-01-02T15:04:05Z"))
}

// Row is the task as a row of party pm task list: its id (with the
// issue's number), status, assignee, milestone and title.
func (t Task) Row() []string {
	return []string{strings.TrimPrefix(t.Label(), "Task "), string(t.Status), dash(t.Assignee), dash(t.Milestone), Printable(t.Title)}
}

// Row is the milestone as a row of party pm milestone list: id, state and
// name.
func (m Milestone) Row() []string { return []string{m.ID, m.State(), Printable(m.Name)} }

// State is the milestone's state as a word: open or done.
func (m Milestone) State() string {
	if m.Done {
		return "done"
	}
	return "open"
}

// Event is one entry of the audit trail: who changed what, from what, to
// what, when.
type Event struct {
	Event string    `json:"event"` // team_created, milestone_added, milestone_done, task_added, task_updated, doc_updated
	ID    string    `json:"id,omitempty"`
	Field string    `json:"field,omitempty"`
	From  string    `json:"from,omitempty"`
	To    string    `json:"to,omitempty"`
	Actor string    `json:"actor"`
	TS    time.Time `json:"ts"`
}

// Printable is s for one line of a terminal: what termsafe.Text makes of
// it (control characters, C1 and raw 8-bit C1 bytes shown as Go escapes
// such as \x1b and \u0085), with newlines and tabs shown as \n and \t
// too, so a title or a value written on GitHub can neither move the
// cursor, recolour the screen of whoever lists the tasks, nor break a
// row.
func Printable(s string) string {
	return oneLine.Replace(termsafe.Text(s))
}

// oneLine shows the line breaks and tabs termsafe.Text keeps.
var oneLine = strings.NewReplacer("\n", `\n`, "\t", `\t`)

// String is the event as a line of the audit trail: time, actor, event,
// id and the change ("status: pending → done").
func (e Event) String() string {
	line := e.TS.UTC().Format("2006-01-02T15:04:05Z") + "  " + e.Actor + "  " + e.Event + " " + e.ID
	switch {
	case e.Field != "":
		line += fmt.Sprintf(" %s: %s → %s", e.Field, dash(e.From), dash(e.To))
	case e.To != "":
		line += ": " + e.To
	}
	return Printable(line)
}

// dash is s, or "-" for an empty one.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// NewTask is a task to add. ID empty: the next free number.
type NewTask struct {
	ID        string
	Title     string
	Milestone string
	Assignee  string
}

// Check checks a new task as every store does: a title, an id that can
// name a file (CheckID), an assignee that is a role (CheckRole).
func (nt NewTask) Check() error {
	if strings.TrimSpace(nt.Title) == "" {
		return fmt.Errorf("a task needs a title: %w", ErrInvalid)
	}
	if nt.ID != "" {
		if err := CheckID(nt.ID); err != nil {
			return err
		}
	}
	if nt.Assignee != "" {
		return CheckRole("assignee", nt.Assignee)
	}
	return nil
}

// Filter selects tasks; an empty field matches all.
type Filter struct {
	Milestone string
	Status    Status
	Assignee  string
}

// Match says whether t passes the filter.
func (f Filter) Match(t Task) bool {
	return (f.Milestone == "" || t.Milestone == f.Milestone) &&
		(f.Status == "" || t.Status == f.Status) &&
		(f.Assignee == "" || t.Assignee == f.Assignee)
}

// Change is an update of a task; nil fields stay as they are. Force
// overrides a conflict with a change made elsewhere (last write wins).
type Change struct {
	Status    *Status
	Assignee  *string
	Milestone *string
	Force     bool
}

// Update is a change of task ID as party pm task update takes it: a
// status word ("": unchanged), and the assignee and milestone when given
// (given empty: cleared).
type Update struct {
	ID, Status, Assignee, Milestone string
	AssigneeGiven, MilestoneGiven   bool
	// Force applies the change over one made on GitHub meanwhile.
	Force bool
}

// Change is the store's change of u; changing nothing is a usage error.
func (u Update) Change() (Change, error) {
	c := Change{Force: u.Force}
	if u.Status != "" {
		s, err := ParseStatus(u.Status)
		if err != nil {
			return c, err
		}
		c.Status = &s
	}
	if u.AssigneeGiven {
		c.Assignee = &u.Assignee
	}
	if u.MilestoneGiven {
		c.Milestone = &u.Milestone
	}
	if c.Status == nil && c.Assignee == nil && c.Milestone == nil {
		return c, fmt.Errorf("%w: nothing to change: give --status, --assignee or --milestone", usage.Err)
	}
	return c, nil
}

// Check checks a change as every store does: a known status, an assignee
// that is a role (or empty: nobody).
func (c Change) Check() error {
	if c.Status != nil {
		if _, err := ParseStatus(string(*c.Status)); err != nil {
			return err
		}
	}
	if c.Assignee != nil && *c.Assignee != "" {
		return CheckRole("assignee", *c.Assignee)
	}
	return nil
}

// Store holds a team's milestones, tasks, their documents and the audit
// trail. Every change names its actor and is recorded.
type Store interface {
	Team(ctx context.Context) (Team, error)

	AddMilestone(ctx context.Context, actor, name string) (Milestone, error)
	Milestones(ctx context.Context) ([]Milestone, error)
	DoneMilestone(ctx context.Context, actor, id string) (Milestone, error)

	AddTask(ctx context.Context, actor string, t NewTask) (Task, error)
	Tasks(ctx context.Context, f Filter) ([]Task, error)
	Task(ctx context.Context, id string) (Task, error)
	// Update applies c and returns the task as it is now.
	Update(ctx context.Context, actor, id string, c Change) (Task, error)

	// Doc is the task's Markdown document ("" when it has none yet).
	Doc(ctx context.Context, id string) (string, error)
	SetDoc(ctx context.Context, actor, id, text string) error
	// SetDocFrom is SetDoc only while the document is still base, the
	// text the new one was made from (an editor opened on it); else
	// nothing changes and the error is a *DocConflictError.
	SetDocFrom(ctx context.Context, actor, id, base, text string) error

	// Log is the audit trail, oldest first: all of it, or one task's.
	Log(ctx context.Context, id string) ([]Event, error)
}

// Errors of the stores; the CLI maps them to exit codes.
var (
	// ErrInvalid is bad input: an unknown status, an empty title, an id
	// already taken.
	ErrInvalid = errors.New("invalid")
	// ErrNotFound is an unknown task, milestone or team.
	ErrNotFound = errors.New("not found")
	// ErrNoTeam is a directory not linked to a team (run party pm init).
	ErrNoTeam = errors.New("no team")
	// ErrCorrupt is a store file that does not parse; its path is in the
	// message and it is never replaced silently.
	ErrCorrupt = errors.New("corrupt store file")
	// ErrUnavailable is a store that cannot be reached: gh missing, not
	// authenticated, offline.
	ErrUnavailable = errors.New("store unavailable")
	// ErrConflict is what every *ConflictError is (errors.Is), for the
	// CLI's table of exit codes.
	ErrConflict = errors.New("conflict")
)

// ConflictError is a task changed elsewhere (on GitHub) since party last
// saw it. Fields lists what differs.
type ConflictError struct {
	ID     string
	Fields []FieldDiff
}

// JSONFields are what --json adds to the error's code and message: the
// task's id and the fields that differ.
func (e *ConflictError) JSONFields() map[string]any {
	return map[string]any{"id": e.ID, "fields": e.Fields}
}

// FieldDiff is one field that differs: what party last saw (Cached),
// what the store holds now (Remote).
type FieldDiff struct {
	Field  string `json:"field"`
	Cached string `json:"cached"`
	Remote string `json:"remote"`
}

// String is the difference as "status "pending" → "done"".
func (d FieldDiff) String() string { return fmt.Sprintf("%s %q → %q", d.Field, d.Cached, d.Remote) }

// Diffs is ds as one comma-separated list.
func Diffs(ds []FieldDiff) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.String()
	}
	return strings.Join(s, ", ")
}

// DocConflictError is a document changed by someone else since it was
// read to be edited.
type DocConflictError struct{ ID string }

func (e *DocConflictError) Error() string {
	return fmt.Sprintf("task %s: the document changed since it was opened", e.ID)
}

// Is makes a DocConflictError match ErrConflict.
func (e *DocConflictError) Is(target error) bool { return target == ErrConflict }

// MilestoneOfID is the milestone a task id <milestone>-<n> names, and
// whether that milestone must exist: for an id of party's milestone form
// (M1-2) it must, for another (bug-2) the id is taken as it is when the
// team has no such milestone.
func MilestoneOfID(id string) (milestone string, must bool) {
	m := milestoneTaskID.FindStringSubmatch(id)
	if m == nil {
		return "", false
	}
	return m[1], partyMilestone.MatchString(m[1])
}

// partyMilestone is a milestone id as party makes them.
var partyMilestone = regexp.MustCompile(`^M[1-9][0-9]*$`)

// Is makes a ConflictError match ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

func (e *ConflictError) Error() string {
	what := ""
	if len(e.Fields) > 0 {
		what = ": " + Diffs(e.Fields)
	}
	return fmt.Sprintf("task %s changed on the remote since party last read it%s (use --force to overwrite)", e.ID, what)
}
