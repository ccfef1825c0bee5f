package fakegithub

import (
	"fmt"
	"net/url"
	"time"
)

func (s *Server) repoJSON(r *repo) map[string]any {
	return map[string]any{
		"id": r.id, "node_id": fmt.Sprintf("R_fake%d", r.id), "name": r.name, "full_name": r.full(),
		"owner":      map[string]any{"login": r.owner},
		"private":    false,
		"has_issues": true,
		"html_url":   "https://" + s.addr + "/" + r.full(),
		"permissions": map[string]bool{
			"admin": true, "maintain": true, "push": true, "triage": true, "pull": true,
		},
	}
}

func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func (s *Server) base(r *repo) string { return "https://" + s.addr + "/api/v3/repos/" + r.full() }

func (s *Server) issueJSON(r *repo, is *Issue) map[string]any {
	labels := []any{}
	for _, n := range is.Labels {
		if l := r.label(n); l != nil {
			labels = append(labels, s.labelJSON(r, l))
		}
	}
	var milestone any
	if m := r.milestones[is.Milestone]; m != nil {
		milestone = s.milestoneJSON(r, m)
	}
	assignees := []any{}
	for _, a := range is.Assignees {
		assignees = append(assignees, map[string]any{"login": a})
	}
	var assignee any
	if len(assignees) > 0 {
		assignee = assignees[0]
	}
	n := 0
	for _, c := range r.comments {
		if c.Issue == is.Number {
			n++
		}
	}
	var reason any
	if is.StateReason != "" {
		reason = is.StateReason
	}
	return map[string]any{
		"id": is.id, "node_id": is.NodeID, "number": is.Number,
		"url":            fmt.Sprintf("%s/issues/%d", s.base(r), is.Number),
		"html_url":       fmt.Sprintf("https://%s/%s/issues/%d", s.addr, r.full(), is.Number),
		"repository_url": s.base(r),
		"title":          is.Title, "body": is.Body, "state": is.State, "state_reason": reason,
		"labels": labels, "milestone": milestone, "assignee": assignee, "assignees": assignees,
		"user": map[string]any{"login": is.User}, "comments": n, "locked": false,
		"created_at": ts(is.Created), "updated_at": ts(is.Updated), "closed_at": ts(is.Closed),
	}
}

func (s *Server) labelJSON(r *repo, l *Label) map[string]any {
	if l == nil {
		return nil
	}
	return map[string]any{
		"id": l.id, "node_id": l.nodeID, "name": l.Name, "color": l.Color,
		"description": l.Description, "default": false,
		"url": s.base(r) + "/labels/" + url.PathEscape(l.Name),
	}
}

func (s *Server) milestoneJSON(r *repo, m *Milestone) map[string]any {
	open, closed := 0, 0
	for _, is := range r.issues {
		if is.Milestone == m.Number {
			if is.State == "open" {
				open++
			} else {
				closed++
			}
		}
	}
	return map[string]any{
		"id": m.id, "node_id": m.nodeID, "number": m.Number, "title": m.Title,
		"description": m.Description, "state": m.State,
		"open_issues": open, "closed_issues": closed,
		"url":        fmt.Sprintf("%s/milestones/%d", s.base(r), m.Number),
		"created_at": ts(m.Created), "updated_at": ts(m.Updated), "closed_at": ts(m.Closed), "due_on": nil,
	}
}

func (s *Server) commentJSON(r *repo, c *Comment) map[string]any {
	return map[string]any{
		"id": c.ID, "node_id": c.NodeID, "body": c.Body,
		"user":       map[string]any{"login": c.User},
		"url":        fmt.Sprintf("%s/issues/comments/%d", s.base(r), c.ID),
		"issue_url":  fmt.Sprintf("%s/issues/%d", s.base(r), c.Issue),
		"html_url":   fmt.Sprintf("https://%s/%s/issues/%d#issuecomment-%d", s.addr, r.full(), c.Issue, c.ID),
		"created_at": ts(c.Created), "updated_at": ts(c.Updated),
	}
}
