package fakegithub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

func (s *Server) labels(req *request, r *repo, rest []string) (int, any) {
	if len(rest) == 0 {
		switch req.method {
		case http.MethodGet:
			page := paginate(req, len(r.labels))
			out := []any{}
			for _, l := range r.labels[page.from:page.to] {
				out = append(out, s.labelJSON(r, l))
			}
			return http.StatusOK, out
		case http.MethodPost:
			var in struct {
				Name        string `json:"name"`
				Color       string `json:"color"`
				Description string `json:"description"`
			}
			if json.Unmarshal(req.body, &in) != nil {
				return badJSON()
			}
			if strings.TrimSpace(in.Name) == "" {
				return invalid("Label", "missing_field", "name")
			}
			if r.label(in.Name) != nil {
				return invalid("Label", "already_exists", "name")
			}
			color := strings.TrimPrefix(in.Color, "#")
			if color == "" {
				color = "ededed"
			}
			if !validColor(color) {
				return invalid("Label", "invalid", "color")
			}
			l := &Label{Name: in.Name, Color: strings.ToLower(color), Description: in.Description, id: s.newID()}
			l.nodeID = fmt.Sprintf("LA_fake%d", l.id)
			r.labels = append(r.labels, l)
			return http.StatusCreated, s.labelJSON(r, l)
		}
		return notAllowed()
	}
	if len(rest) > 1 {
		return notFound()
	}
	l := r.label(rest[0])
	if l == nil {
		return notFound()
	}
	switch req.method {
	case http.MethodGet:
		return http.StatusOK, s.labelJSON(r, l)
	case http.MethodPatch:
		var in struct {
			NewName     *string `json:"new_name"`
			Color       *string `json:"color"`
			Description *string `json:"description"`
		}
		if json.Unmarshal(req.body, &in) != nil {
			return badJSON()
		}
		if in.Color != nil {
			c := strings.ToLower(strings.TrimPrefix(*in.Color, "#"))
			if !validColor(c) {
				return invalid("Label", "invalid", "color")
			}
			l.Color = c
		}
		if in.Description != nil {
			l.Description = *in.Description
		}
		if in.NewName != nil && *in.NewName != l.Name {
			if r.label(*in.NewName) != nil {
				return invalid("Label", "already_exists", "name")
			}
			for _, is := range r.issues {
				for i, n := range is.Labels {
					if strings.EqualFold(n, l.Name) {
						is.Labels[i] = *in.NewName
					}
				}
			}
			l.Name = *in.NewName
		}
		return http.StatusOK, s.labelJSON(r, l)
	case http.MethodDelete:
		r.labels = slices.DeleteFunc(r.labels, func(x *Label) bool { return x == l })
		for _, is := range r.issues {
			is.Labels = slices.DeleteFunc(is.Labels, func(n string) bool { return strings.EqualFold(n, l.Name) })
		}
		return http.StatusNoContent, nil
	}
	return notAllowed()
}

func validColor(c string) bool {
	if len(c) != 6 {
		return false
	}
	for _, ch := range strings.ToLower(c) {
		if !strings.ContainsRune("0123456789abcdef", ch) {
			return false
		}
	}
	return true
}

// ensureLabel returns the label named name, created with GitHub's
// default color when missing. s.mu is held.
func (s *Server) ensureLabel(r *repo, name string) *Label {
	if l := r.label(name); l != nil {
		return l
	}
	l := &Label{Name: name, Color: "ededed", id: s.newID()}
	l.nodeID = fmt.Sprintf("LA_fake%d", l.id)
	r.labels = append(r.labels, l)
	return l
}

// addLabels adds to is each of names it does not have yet (names compare
// as GitHub's do, case aside), creating the labels missing from r
// (ensureLabel). s.mu is held.
func (s *Server) addLabels(r *repo, is *Issue, names ...string) {
	for _, n := range names {
		if !is.hasLabel(n) {
			is.Labels = append(is.Labels, s.ensureLabel(r, n).Name)
		}
	}
}
