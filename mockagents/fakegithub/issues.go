package fakegithub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// issues serves /repos/O/R/issues/...
func (s *Server) issues(req *request, r *repo, rest []string) (int, any) {
	switch {
	case len(rest) == 0 && req.method == http.MethodGet:
		return s.listIssues(req, r)
	case len(rest) == 0 && req.method == http.MethodPost:
		return s.createIssue(req, r)
	case len(rest) == 0:
		return notAllowed()
	case len(rest) == 1 && rest[0] == "comments" && req.method == http.MethodGet:
		return s.listComments(req, r, 0)
	}
	n, ok := parseNumber(rest[0])
	if !ok {
		return notFound()
	}
	is := r.issues[n]
	if is == nil {
		return notFound()
	}
	switch {
	case len(rest) == 1 && req.method == http.MethodGet:
		return http.StatusOK, s.issueJSON(r, is)
	case len(rest) == 1 && req.method == http.MethodPatch:
		return s.patchIssue(req, r, is)
	case len(rest) == 1:
		return notAllowed()
	case rest[1] == "comments" && len(rest) == 2 && req.method == http.MethodGet:
		return s.listComments(req, r, n)
	case rest[1] == "comments" && len(rest) == 2 && req.method == http.MethodPost:
		return s.createComment(req, r, is)
	case rest[1] == "labels":
		return s.issueLabels(req, r, is, rest[2:])
	}
	return notFound()
}

func (s *Server) listIssues(req *request, r *repo) (int, any) {
	q := req.query
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var since time.Time
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return invalid("Issue", "invalid", "since")
		}
		since = t
	}
	var want []string
	if v := q.Get("labels"); v != "" {
		want = strings.Split(v, ",")
	}
	list := r.sortedIssues()
	out := make([]*Issue, 0, len(list))
	for _, is := range list {
		if state != "all" && is.State != state {
			continue
		}
		if !since.IsZero() && is.Updated.Before(since) {
			continue
		}
		if slices.ContainsFunc(want, func(l string) bool { return !is.hasLabel(strings.TrimSpace(l)) }) {
			continue
		}
		if !milestoneMatches(q.Get("milestone"), is.Milestone) {
			continue
		}
		out = append(out, is)
	}
	key := func(is *Issue) time.Time { return is.Created }
	if q.Get("sort") == "updated" {
		key = func(is *Issue) time.Time { return is.Updated }
	}
	asc := q.Get("direction") == "asc"
	slices.SortStableFunc(out, func(a, b *Issue) int {
		c := key(a).Compare(key(b))
		if c == 0 {
			c = a.Number - b.Number
		}
		if !asc {
			c = -c
		}
		return c
	})
	page := paginate(req, len(out))
	res := []any{}
	for _, is := range out[page.from:page.to] {
		res = append(res, s.issueJSON(r, is))
	}
	return http.StatusOK, res
}

// milestoneMatches applies the milestone filter of an issue list: a
// number, * (any) or none; empty matches all.
func milestoneMatches(filter string, number int) bool {
	switch filter {
	case "":
		return true
	case "*":
		return number != 0
	case "none":
		return number == 0
	}
	n, err := strconv.Atoi(filter)
	return err == nil && n == number
}

// issueFields are the writable fields of an issue, present or not.
type issueFields map[string]json.RawMessage

func (f issueFields) str(key string) (string, bool, error) {
	raw, ok := f[key]
	if !ok || string(raw) == "null" {
		return "", ok, nil
	}
	var v string
	err := json.Unmarshal(raw, &v)
	return v, true, err
}

// labelNames reads labels given as names or as {"name": ...} objects.
func labelNames(raw json.RawMessage) ([]string, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, err
	}
	var out []string
	for _, it := range items {
		var name string
		if err := json.Unmarshal(it, &name); err != nil {
			var obj struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(it, &obj); err != nil {
				return nil, err
			}
			name = obj.Name
		}
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, name)
		}
	}
	return out, nil
}

// milestoneNumber reads a milestone given as a number, a numeric string
// or null (none).
func milestoneNumber(raw json.RawMessage) (int, error) {
	if string(raw) == "null" {
		return 0, nil
	}
	var n int
	if err := json.Unmarshal(raw, &n); err == nil {
		return n, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, err
	}
	return strconv.Atoi(s)
}

func (s *Server) createIssue(req *request, r *repo) (int, any) {
	var f issueFields
	if json.Unmarshal(req.body, &f) != nil {
		return badJSON()
	}
	title, _, err := f.str("title")
	if err != nil {
		return badJSON()
	}
	if strings.TrimSpace(title) == "" {
		return invalid("Issue", "missing_field", "title")
	}
	t := s.stamp()
	r.nextIssue++
	is := &Issue{Number: r.nextIssue, id: s.newID(), Title: title, State: "open", User: s.opt.User, Created: t, Updated: t}
	is.NodeID = fmt.Sprintf("I_fake%d", is.id)
	if status, v := s.applyIssue(r, is, f, t); status != 0 {
		r.nextIssue--
		return status, v
	}
	r.issues[is.Number] = is
	return http.StatusCreated, s.issueJSON(r, is)
}

func (s *Server) patchIssue(req *request, r *repo, is *Issue) (int, any) {
	var f issueFields
	if json.Unmarshal(req.body, &f) != nil {
		return badJSON()
	}
	t := s.stamp()
	next := is.clone()
	if status, v := s.applyIssue(r, &next, f, t); status != 0 {
		return status, v
	}
	next.Updated = t
	*is = next
	return http.StatusOK, s.issueJSON(r, is)
}

// applyIssue sets the fields of f on is; a status other than 0 is an
// error answer (is is then half changed: callers work on a copy).
func (s *Server) applyIssue(r *repo, is *Issue, f issueFields, t time.Time) (int, any) {
	if v, ok, err := f.str("title"); err != nil {
		return badJSON()
	} else if ok {
		if strings.TrimSpace(v) == "" {
			return invalid("Issue", "missing_field", "title")
		}
		is.Title = v
	}
	if v, ok, err := f.str("body"); err != nil {
		return badJSON()
	} else if ok {
		is.Body = v
	}
	reason, _, err := f.str("state_reason")
	if err != nil {
		return badJSON()
	}
	if v, ok, err := f.str("state"); err != nil {
		return badJSON()
	} else if ok && v != "" {
		if err := is.setState(v, reason, t); err != nil {
			return invalid("Issue", "invalid", "state")
		}
	}
	if raw, ok := f["labels"]; ok {
		names, err := labelNames(raw)
		if err != nil {
			return badJSON()
		}
		is.Labels = nil
		s.addLabels(r, is, names...)
	}
	if raw, ok := f["milestone"]; ok {
		n, err := milestoneNumber(raw)
		if err != nil {
			return badJSON()
		}
		if n != 0 && r.milestones[n] == nil {
			return invalid("Issue", "invalid", "milestone")
		}
		is.Milestone = n
	}
	if raw, ok := f["assignees"]; ok {
		var as []string
		if string(raw) != "null" && json.Unmarshal(raw, &as) != nil {
			return badJSON()
		}
		is.Assignees = as
	}
	return 0, nil
}

func (s *Server) issueLabels(req *request, r *repo, is *Issue, rest []string) (int, any) {
	list := func() []any {
		out := []any{}
		for _, n := range is.Labels {
			out = append(out, s.labelJSON(r, r.label(n)))
		}
		return out
	}
	if len(rest) == 1 {
		if req.method != http.MethodDelete {
			return notAllowed()
		}
		if !is.hasLabel(rest[0]) {
			return http.StatusNotFound, apiError("Label does not exist")
		}
		is.Labels = slices.DeleteFunc(is.Labels, func(l string) bool { return strings.EqualFold(l, rest[0]) })
		is.Updated = s.stamp()
		return http.StatusOK, list()
	}
	if len(rest) > 1 {
		return notFound()
	}
	switch req.method {
	case http.MethodGet:
		return http.StatusOK, list()
	case http.MethodDelete:
		is.Labels = nil
		is.Updated = s.stamp()
		return http.StatusNoContent, nil
	case http.MethodPost, http.MethodPut:
		// {"labels": [...]} or a bare array.
		raw := json.RawMessage(req.body)
		var obj struct {
			Labels json.RawMessage `json:"labels"`
		}
		if bytes.HasPrefix(bytes.TrimSpace(req.body), []byte("{")) {
			if json.Unmarshal(req.body, &obj) != nil {
				return badJSON()
			}
			raw = obj.Labels
		}
		names, err := labelNames(raw)
		if err != nil {
			return badJSON()
		}
		if req.method == http.MethodPut {
			is.Labels = nil
		}
		s.addLabels(r, is, names...)
		is.Updated = s.stamp()
		return http.StatusOK, list()
	}
	return notAllowed()
}
