package github

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/partyhq/party/core/task"
)

// Status labels and their colors.
const (
	labelPrefix   = "party:"
	assigneeLabel = "party:assignee:"
	assigneeColor = "C5DEF5"
)

var statusColors = map[task.Status]string{task.Pending: "FBCA04", task.InProgress: "0052CC", task.Done: "0E8A16"}

// StatusLabel is the label of a status: party:pending, party:in_progress,
// party:done.
func StatusLabel(s task.Status) string { return labelPrefix + string(s) }

// StatusOf is the status of an issue in state (open, closed) with labels:
// closed is done; otherwise the most advanced status label, pending when
// there is none.
func StatusOf(state string, labels []string) task.Status {
	if state == "closed" {
		return task.Done
	}
	st := task.Pending
	for i, s := range task.Statuses {
		if slices.Contains(labels, StatusLabel(s)) && i > slices.Index(task.Statuses, st) {
			st = s
		}
	}
	return st
}

// WithStatus is labels with exactly one status label, s's, in place of
// any others; the other labels keep their order.
func WithStatus(labels []string, s task.Status) []string {
	out := slices.DeleteFunc(slices.Clone(labels), isStatusLabel)
	return append(out, StatusLabel(s))
}

func isStatusLabel(l string) bool {
	return slices.ContainsFunc(task.Statuses, func(s task.Status) bool { return l == StatusLabel(s) })
}

// assigneeOf is the role of the first party:assignee: label, "" for none.
func assigneeOf(labels []string) string {
	for _, l := range labels {
		if r, ok := strings.CutPrefix(l, assigneeLabel); ok {
			return r
		}
	}
	return ""
}

// withAssignee is labels with one assignee label, role's ("" for none).
func withAssignee(labels []string, role string) []string {
	out := slices.DeleteFunc(slices.Clone(labels), func(l string) bool { return strings.HasPrefix(l, assigneeLabel) })
	if role != "" {
		out = append(out, assigneeLabel+role)
	}
	return out
}

// maxLabel is the length GitHub allows a label.
const maxLabel = 50

// checkLabel refuses an assignee whose label, party:assignee:ROLE, would
// be longer than GitHub allows.
func checkLabel(role string) error {
	if len(assigneeLabel+role) > maxLabel {
		return fmt.Errorf("assignee %q: at most %d characters on GitHub (the label %s…): %w", role, maxLabel-len(assigneeLabel), assigneeLabel, task.ErrInvalid)
	}
	return nil
}

// ensureLabels creates the labels of names that the repository lacks,
// with party's colors.
func (g *store) ensureLabels(ctx context.Context, names ...string) error {
	if len(names) == 0 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.labels == nil {
		type label struct {
			Name string `json:"name"`
		}
		ls, err := list[label](ctx, g, g.repoPath("labels?per_page=100"))
		if err != nil {
			return fmt.Errorf("github store: labels: %w", err)
		}
		g.labels = map[string]bool{}
		for _, l := range ls {
			g.labels[strings.ToLower(l.Name)] = true
		}
	}
	for _, n := range names {
		if g.labels[strings.ToLower(n)] {
			continue
		}
		color := assigneeColor
		for s, c := range statusColors {
			if n == StatusLabel(s) {
				color = c
			}
		}
		body := map[string]string{"name": n, "color": color, "description": "party pm"}
		err := g.api(ctx, "POST", g.repoPath("labels"), body, nil)
		if err != nil && !errors.Is(err, task.ErrInvalid) { // 422: made meanwhile
			return fmt.Errorf("github store: label %s: %w", n, err)
		}
		g.labels[strings.ToLower(n)] = true
	}
	return nil
}
