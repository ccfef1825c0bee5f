package fakegithub

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Issue is an issue as the server holds it.
type Issue struct {
	Number      int
	NodeID      string
	Title       string
	Body        string
	State       string // open, closed
	StateReason string // completed, not_planned, reopened or ""
	Labels      []string
	Milestone   int // its number, 0 for none
	Assignees   []string
	User        string
	Created     time.Time
	Updated     time.Time
	Closed      time.Time // zero while open

	id int64
}

// Comment is an issue comment.
type Comment struct {
	ID      int64
	NodeID  string
	Issue   int
	Body    string
	User    string
	Created time.Time
	Updated time.Time
}

// Label is a repository's label.
type Label struct {
	Name        string
	Color       string
	Description string

	id     int64
	nodeID string
}

// Milestone is a repository's milestone.
type Milestone struct {
	Number      int
	Title       string
	Description string
	State       string // open, closed
	Created     time.Time
	Updated     time.Time
	Closed      time.Time

	id     int64
	nodeID string
}

// repo is one repository's contents.
type repo struct {
	owner, name string
	id          int64
	issues      map[int]*Issue
	nextIssue   int
	labels      []*Label // in creation order
	milestones  map[int]*Milestone
	nextMile    int
	comments    []*Comment // in creation order
}

func newRepo(full string, id int64) *repo {
	owner, name, _ := strings.Cut(full, "/")
	return &repo{owner: owner, name: name, id: id, issues: map[int]*Issue{}, milestones: map[int]*Milestone{}}
}

func (r *repo) full() string { return r.owner + "/" + r.name }

func (r *repo) label(name string) *Label {
	for _, l := range r.labels {
		if strings.EqualFold(l.Name, name) {
			return l
		}
	}
	return nil
}

// milestoneByTitle finds a milestone by its title.
func (r *repo) milestoneByTitle(title string) *Milestone {
	for _, m := range r.milestones {
		if m.Title == title {
			return m
		}
	}
	return nil
}

func (r *repo) sortedIssues() []*Issue {
	out := make([]*Issue, 0, len(r.issues))
	for _, is := range r.issues {
		out = append(out, is)
	}
	slices.SortFunc(out, func(a, b *Issue) int { return a.Number - b.Number })
	return out
}

func (r *repo) sortedMilestones() []*Milestone {
	out := make([]*Milestone, 0, len(r.milestones))
	for _, m := range r.milestones {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *Milestone) int { return a.Number - b.Number })
	return out
}

func (is *Issue) clone() Issue {
	c := *is
	c.Labels = slices.Clone(is.Labels)
	c.Assignees = slices.Clone(is.Assignees)
	return c
}

func (is *Issue) hasLabel(name string) bool {
	return slices.ContainsFunc(is.Labels, func(l string) bool { return strings.EqualFold(l, name) })
}

// setState opens or closes the issue at t.
func (is *Issue) setState(state, reason string, t time.Time) error {
	switch state {
	case "open":
		if is.State == "closed" {
			is.StateReason = "reopened"
		}
		is.State, is.Closed = "open", time.Time{}
		if reason != "" {
			is.StateReason = reason
		}
	case "closed":
		if is.State != "closed" {
			is.Closed = t
		}
		is.State = "closed"
		if reason == "" {
			reason = "completed"
		}
		is.StateReason = reason
	default:
		return fmt.Errorf("state %q: want open or closed", state)
	}
	return nil
}

// parseNumber reads an issue or milestone number.
func parseNumber(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}
