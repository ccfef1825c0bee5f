package fakegithub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

func (s *Server) milestones(req *request, r *repo, rest []string) (int, any) {
	if len(rest) == 0 {
		switch req.method {
		case http.MethodGet:
			state := req.query.Get("state")
			if state == "" {
				state = "open"
			}
			var list []*Milestone
			for _, m := range r.sortedMilestones() {
				if state == "all" || m.State == state {
					list = append(list, m)
				}
			}
			page := paginate(req, len(list))
			out := []any{}
			for _, m := range list[page.from:page.to] {
				out = append(out, s.milestoneJSON(r, m))
			}
			return http.StatusOK, out
		case http.MethodPost:
			var in struct {
				Title       string `json:"title"`
				State       string `json:"state"`
				Description string `json:"description"`
			}
			if json.Unmarshal(req.body, &in) != nil {
				return badJSON()
			}
			if strings.TrimSpace(in.Title) == "" {
				return invalid("Milestone", "missing_field", "title")
			}
			if r.milestoneByTitle(in.Title) != nil {
				return invalid("Milestone", "already_exists", "title")
			}
			t := s.stamp()
			r.nextMile++
			m := &Milestone{Number: r.nextMile, Title: in.Title, Description: in.Description, State: "open", Created: t, Updated: t, id: s.newID()}
			m.nodeID = fmt.Sprintf("MI_fake%d", m.id)
			if in.State == "closed" {
				m.State, m.Closed = "closed", t
			}
			r.milestones[m.Number] = m
			return http.StatusCreated, s.milestoneJSON(r, m)
		}
		return notAllowed()
	}
	n, ok := parseNumber(rest[0])
	if !ok || len(rest) > 1 {
		return notFound()
	}
	m := r.milestones[n]
	if m == nil {
		return notFound()
	}
	switch req.method {
	case http.MethodGet:
		return http.StatusOK, s.milestoneJSON(r, m)
	case http.MethodPatch:
		var in struct {
			Title       *string `json:"title"`
			State       *string `json:"state"`
			Description *string `json:"description"`
		}
		if json.Unmarshal(req.body, &in) != nil {
			return badJSON()
		}
		t := s.stamp()
		if in.Title != nil {
			if o := r.milestoneByTitle(*in.Title); o != nil && o != m {
				return invalid("Milestone", "already_exists", "title")
			}
			m.Title = *in.Title
		}
		if in.Description != nil {
			m.Description = *in.Description
		}
		if in.State != nil {
			switch *in.State {
			case "open":
				m.State, m.Closed = "open", time.Time{}
			case "closed":
				if m.State != "closed" {
					m.Closed = t
				}
				m.State = "closed"
			default:
				return invalid("Milestone", "invalid", "state")
			}
		}
		m.Updated = t
		return http.StatusOK, s.milestoneJSON(r, m)
	case http.MethodDelete:
		delete(r.milestones, n)
		for _, is := range r.issues {
			if is.Milestone == n {
				is.Milestone = 0
			}
		}
		return http.StatusNoContent, nil
	}
	return notAllowed()
}
