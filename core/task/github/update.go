package github

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/partyhq/party/core/task"
)

func (g *store) Update(ctx context.Context, actor, id string, c task.Change) (task.Task, error) {
	if err := c.Check(); err != nil {
		return task.Task{}, err
	}
	if c.Assignee != nil {
		if err := checkLabel(*c.Assignee); err != nil {
			return task.Task{}, err
		}
	}
	unlock, err := g.lock(ctx)
	if err != nil {
		return task.Task{}, err
	}
	defer unlock()
	ids, err := readMap[issueRef](g.idMapPath())
	if err != nil {
		return task.Task{}, err
	}
	r, ok := ids[id]
	if !ok {
		return task.Task{}, fmt.Errorf("task %s: %w", id, task.ErrNotFound)
	}
	byNumber, miles, err := g.milestoneNumbers()
	if err != nil {
		return task.Task{}, err
	}
	var milestone int
	if c.Milestone != nil && *c.Milestone != "" {
		m, ok := miles[*c.Milestone]
		if !ok {
			return task.Task{}, fmt.Errorf("milestone %s: %w", *c.Milestone, task.ErrNotFound)
		}
		milestone = m.Number
	}
	is, err := g.issue(ctx, id, r)
	if err != nil {
		return task.Task{}, err
	}
	cur := issueTask(id, is, byNumber)
	var forced []task.FieldDiff
	if !is.UpdatedAt.Equal(r.UpdatedAt) {
		if d := diff(r.Seen, cur); len(d) > 0 {
			if !c.Force {
				return task.Task{}, &task.ConflictError{ID: id, Fields: d}
			}
			forced = d
		}
	}

	next := cur
	if c.Status != nil {
		next.Status = *c.Status
	}
	if c.Assignee != nil {
		next.Assignee = *c.Assignee
	}
	if c.Milestone != nil {
		next.Milestone = *c.Milestone
	}
	// Normalize party's labels whenever the status changes or they do not
	// hold exactly the one status label the task's status asks for; only
	// party's are touched, one by one, so a label someone puts on
	// meanwhile stays.
	labels := is.labelNames()
	want := withAssignee(WithStatus(labels, next.Status), next.Assignee)
	add := slices.DeleteFunc(slices.Clone(want), func(l string) bool { return slices.Contains(labels, l) })
	drop := slices.DeleteFunc(slices.Clone(labels), func(l string) bool { return slices.Contains(want, l) })
	path := g.repoPath(fmt.Sprintf("issues/%d", r.IssueNumber))
	reread := false
	if len(add) > 0 {
		// The issue's own labels exist; only new ones may need making.
		if err := g.ensureLabels(ctx, add...); err != nil {
			return task.Task{}, err
		}
		if err := g.api(ctx, "POST", path+"/labels", map[string][]string{"labels": add}, nil); err != nil {
			return task.Task{}, fmt.Errorf("github store: task %s (#%d): labels: %w", id, r.IssueNumber, err)
		}
		reread = true
	}
	for _, l := range drop {
		err := g.api(ctx, "DELETE", path+"/labels/"+url.PathEscape(l), nil, nil)
		if err != nil && !errors.Is(err, task.ErrNotFound) { // 404: taken off meanwhile
			return task.Task{}, fmt.Errorf("github store: task %s (#%d): label %s: %w", id, r.IssueNumber, l, err)
		}
		reread = true
	}
	patch := map[string]any{}
	if next.Milestone != cur.Milestone {
		if milestone == 0 {
			patch["milestone"] = nil
		} else {
			patch["milestone"] = milestone
		}
	}
	if next.Status != task.Done && is.State == "closed" {
		patch["state"] = "open"
	}
	if len(patch) > 0 {
		if err := g.api(ctx, "PATCH", path, patch, &is); err != nil {
			return task.Task{}, fmt.Errorf("github store: task %s (#%d): %w", id, r.IssueNumber, err)
		}
		reread = false
	}
	if next.Status == task.Done && is.State != "closed" {
		// party:done is on; now close it.
		if err := g.api(ctx, "PATCH", path, map[string]string{"state": "closed", "state_reason": "completed"}, &is); err != nil {
			return task.Task{}, fmt.Errorf("github store: task %s (#%d): %w", id, r.IssueNumber, err)
		}
		reread = false
	}

	now := g.now()
	var lines []string
	var events []task.Event
	change := func(field, from, to string) {
		if from == to {
			return
		}
		events = append(events, task.Event{Event: "task_updated", ID: id, Field: field, From: from, To: to, Actor: actor, TS: now})
		if field == "status" || field == "milestone" {
			lines = append(lines, commentLine(field, from, to, actor, now))
		}
	}
	change("status", string(cur.Status), string(next.Status))
	change("assignee", cur.Assignee, next.Assignee)
	change("milestone", cur.Milestone, next.Milestone)
	if len(lines) > 0 {
		body := map[string]string{"body": strings.Join(lines, "\n")}
		if err := g.api(ctx, "POST", path+"/comments", body, nil); err != nil {
			return task.Task{}, fmt.Errorf("github store: task %s (#%d) changed, but its comment: %w", id, r.IssueNumber, err)
		}
		reread = true // the comment moved updated_at
	}
	if reread {
		if is, err = g.issue(ctx, id, r); err != nil {
			return task.Task{}, err
		}
	}
	t := issueTask(id, is, byNumber)
	r.UpdatedAt, r.Seen = is.UpdatedAt, seenOf(t)
	ids[id] = r
	if err := writeMap(g.idMapPath(), ids); err != nil {
		return task.Task{}, err
	}
	for _, e := range events {
		if err := g.event(e); err != nil {
			return task.Task{}, err
		}
	}
	t.Forced = forced
	return t, nil
}

func (g *store) Doc(ctx context.Context, id string) (string, error) {
	r, err := g.ref(id)
	if err != nil {
		return "", err
	}
	is, err := g.issue(ctx, id, r)
	if err != nil {
		return "", err
	}
	return is.Body, nil
}

// SetDoc writes the issue's body; the last write wins.
func (g *store) SetDoc(ctx context.Context, actor, id, text string) error {
	return g.setDoc(ctx, actor, id, nil, text)
}

// SetDocFrom writes the issue's body if it is still base when read under
// the team's lock (a write on GitHub between that read and this one still
// wins: GitHub has no compare-and-set for a body).
func (g *store) SetDocFrom(ctx context.Context, actor, id, base, text string) error {
	return g.setDoc(ctx, actor, id, &base, text)
}

func (g *store) setDoc(ctx context.Context, actor, id string, base *string, text string) error {
	unlock, err := g.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	ids, err := readMap[issueRef](g.idMapPath())
	if err != nil {
		return err
	}
	r, ok := ids[id]
	if !ok {
		return fmt.Errorf("task %s: %w", id, task.ErrNotFound)
	}
	if base != nil {
		is, err := g.issue(ctx, id, r)
		if err != nil {
			return err
		}
		if is.Body != *base {
			return &task.DocConflictError{ID: id}
		}
	}
	byNumber, _, err := g.milestoneNumbers()
	if err != nil {
		return err
	}
	var is issue
	if err := g.api(ctx, "PATCH", g.repoPath(fmt.Sprintf("issues/%d", r.IssueNumber)), map[string]string{"body": text}, &is); err != nil {
		return fmt.Errorf("github store: task %s (#%d): %w", id, r.IssueNumber, err)
	}
	// The cached updatedAt moves only when nothing party tracks changed
	// meanwhile; else the next update must still see the conflict.
	if len(diff(r.Seen, issueTask(id, is, byNumber))) == 0 {
		r.UpdatedAt = is.UpdatedAt
		ids[id] = r
		if err := writeMap(g.idMapPath(), ids); err != nil {
			return err
		}
	}
	return g.event(task.Event{Event: "doc_updated", ID: id, Actor: actor})
}
