package github

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/partyhq/party/core/task"
)

// issue is what party reads of an issue.
type issue struct {
	Number int    `json:"number"`
	NodeID string `json:"node_id"`
	Title  string `json:"title"`
	Body   string `json:"body"`
	State  string `json:"state"`
	Labels []struct {
		Name string `json:"name"`
	} `json:"labels"`
	Milestone *struct {
		Number int `json:"number"`
	} `json:"milestone"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func (is issue) labelNames() []string {
	out := make([]string, 0, len(is.Labels))
	for _, l := range is.Labels {
		out = append(out, l.Name)
	}
	return out
}

func (is issue) milestoneNumber() int {
	if is.Milestone == nil {
		return 0
	}
	return is.Milestone.Number
}

// seen is a task's fields as party last wrote them, for conflicts.
type seen struct {
	Title     string      `json:"title"`
	Status    task.Status `json:"status"`
	Assignee  string      `json:"assignee,omitempty"`
	Milestone string      `json:"milestone,omitempty"`
}

// issueRef is one entry of id-map.json.
type issueRef struct {
	IssueNumber int       `json:"issueNumber"`
	NodeID      string    `json:"nodeId"`
	UpdatedAt   time.Time `json:"updatedAt"`
	CreatedAt   time.Time `json:"createdAt"`
	Seen        seen      `json:"seen"`
}

// issueTask is the task an issue is; milestones maps GitHub's numbers to
// party's milestone ids.
func issueTask(id string, is issue, milestones map[int]string) task.Task {
	labels := is.labelNames()
	return task.Task{
		ID:        id,
		Title:     is.Title,
		Status:    StatusOf(is.State, labels),
		Assignee:  assigneeOf(labels),
		Milestone: milestones[is.milestoneNumber()],
		Created:   is.CreatedAt,
		Updated:   is.UpdatedAt,
		Issue:     is.Number,
	}
}

func seenOf(t task.Task) seen {
	return seen{Title: t.Title, Status: t.Status, Assignee: t.Assignee, Milestone: t.Milestone}
}

// diff lists the fields that differ between what party saw and the task
// as it is now.
func diff(was seen, now task.Task) []task.FieldDiff {
	var out []task.FieldDiff
	add := func(field, a, b string) {
		if a != b {
			out = append(out, task.FieldDiff{Field: field, Cached: a, Remote: b})
		}
	}
	add("status", string(was.Status), string(now.Status))
	add("assignee", was.Assignee, now.Assignee)
	add("milestone", was.Milestone, now.Milestone)
	add("title", was.Title, now.Title)
	return out
}

func (g *store) AddTask(ctx context.Context, actor string, nt task.NewTask) (task.Task, error) {
	if err := nt.Check(); err != nil {
		return task.Task{}, err
	}
	if err := checkLabel(nt.Assignee); err != nil {
		return task.Task{}, err
	}
	title := strings.TrimSpace(nt.Title)
	unlock, err := g.lock(ctx)
	if err != nil {
		return task.Task{}, err
	}
	defer unlock()
	ids, err := readMap[issueRef](g.idMapPath())
	if err != nil {
		return task.Task{}, err
	}
	byNumber, miles, err := g.milestoneNumbers()
	if err != nil {
		return task.Task{}, err
	}
	// An id <milestone>-<n> of one of the team's milestones puts the task
	// in it, as in the file store.
	ms := nt.Milestone
	if of, must := task.MilestoneOfID(nt.ID); of != "" {
		_, ok := miles[of]
		switch {
		case ok:
			if ms != "" && ms != of {
				return task.Task{}, fmt.Errorf("task id %s is in milestone %s, not %s: %w", nt.ID, of, ms, task.ErrInvalid)
			}
			ms = of
		case must:
			return task.Task{}, fmt.Errorf("task id %s puts the task in milestone %s, which does not exist (party pm milestone add makes it; or choose another id): %w", nt.ID, of, task.ErrNotFound)
		}
	}
	id := nt.ID
	if id == "" {
		id = strconv.Itoa(task.NextNumber(slices.Collect(maps.Keys(ids)), ""))
	} else if _, taken := ids[id]; taken {
		return task.Task{}, fmt.Errorf("task %s exists already: %w", id, task.ErrInvalid)
	}
	body := map[string]any{"title": title, "body": ""}
	if ms != "" {
		r, ok := miles[ms]
		if !ok {
			return task.Task{}, fmt.Errorf("milestone %s: %w", ms, task.ErrNotFound)
		}
		body["milestone"] = r.Number
	}
	labels := withAssignee(WithStatus(nil, task.Pending), nt.Assignee)
	if err := g.ensureLabels(ctx, labels...); err != nil {
		return task.Task{}, err
	}
	body["labels"] = labels
	var is issue
	if err := g.api(ctx, "POST", g.repoPath("issues"), body, &is); err != nil {
		return task.Task{}, fmt.Errorf("github store: add task %s: %w", id, err)
	}
	t := issueTask(id, is, byNumber)
	ids[id] = issueRef{IssueNumber: is.Number, NodeID: is.NodeID, UpdatedAt: is.UpdatedAt, CreatedAt: is.CreatedAt, Seen: seenOf(t)}
	if err := writeMap(g.idMapPath(), ids); err != nil {
		return task.Task{}, fmt.Errorf("github store: issue #%d was made for task %s, but: %w", is.Number, id, err)
	}
	events := []task.Event{{Event: "task_added", ID: id, To: title, Actor: actor}}
	if t.Assignee != "" {
		events = append(events, task.Event{Event: "task_updated", ID: id, Field: "assignee", To: t.Assignee, Actor: actor})
	}
	if t.Milestone != "" {
		events = append(events, task.Event{Event: "task_updated", ID: id, Field: "milestone", To: t.Milestone, Actor: actor})
	}
	now := g.now()
	for _, e := range events {
		e.TS = now
		if err := g.event(e); err != nil {
			return task.Task{}, err
		}
	}
	return t, nil
}

// issue reads the issue of task id.
func (g *store) issue(ctx context.Context, id string, r issueRef) (issue, error) {
	var is issue
	if err := g.api(ctx, "GET", g.repoPath(fmt.Sprintf("issues/%d", r.IssueNumber)), nil, &is); err != nil {
		return issue{}, fmt.Errorf("github store: task %s (#%d): %w", id, r.IssueNumber, err)
	}
	return is, nil
}

// ref finds task id in the map.
func (g *store) ref(id string) (issueRef, error) {
	ids, err := readMap[issueRef](g.idMapPath())
	if err != nil {
		return issueRef{}, err
	}
	r, ok := ids[id]
	if !ok {
		return issueRef{}, fmt.Errorf("task %s: %w", id, task.ErrNotFound)
	}
	return r, nil
}

func (g *store) Task(ctx context.Context, id string) (task.Task, error) {
	r, err := g.ref(id)
	if err != nil {
		return task.Task{}, err
	}
	byNumber, _, err := g.milestoneNumbers()
	if err != nil {
		return task.Task{}, err
	}
	is, err := g.issue(ctx, id, r)
	if err != nil {
		return task.Task{}, err
	}
	return issueTask(id, is, byNumber), nil
}

func (g *store) Tasks(ctx context.Context, f task.Filter) ([]task.Task, error) {
	ids, err := readMap[issueRef](g.idMapPath())
	if err != nil {
		return nil, err
	}
	byNumber, _, err := g.milestoneNumbers()
	if err != nil {
		return nil, err
	}
	out := []task.Task{}
	if len(ids) == 0 {
		return out, nil
	}
	// One listing of the issues updated since the team's first was made
	// (none of the team's can be older), then the few it missed one by one.
	idOf := map[int]string{}
	for id, r := range ids {
		idOf[r.IssueNumber] = id
	}
	issues, err := list[issue](ctx, g, g.repoPath("issues?state=all&per_page=100&direction=asc"+sinceParam(ids)))
	if err != nil {
		return nil, fmt.Errorf("github store: tasks: %w", err)
	}
	got := map[string]bool{}
	for _, is := range issues {
		if id, ok := idOf[is.Number]; ok && !got[id] {
			got[id] = true
			if t := issueTask(id, is, byNumber); f.Match(t) {
				out = append(out, t)
			}
		}
	}
	for id, r := range ids {
		if got[id] {
			continue
		}
		is, err := g.issue(ctx, id, r)
		if errors.Is(err, task.ErrNotFound) {
			// Deleted or transferred on GitHub: the other tasks still list.
			if g.c.Warn != nil {
				g.c.Warn(fmt.Sprintf("task %s: issue #%d is gone from %s (deleted or transferred); left out", id, r.IssueNumber, g.c.Repo))
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if t := issueTask(id, is, byNumber); f.Match(t) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b task.Task) int { return task.CompareIDs(a.ID, b.ID) })
	return out, nil
}
