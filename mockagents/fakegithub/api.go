package fakegithub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// request is one API call, its path split into unescaped segments (after
// /api/v3/).
type request struct {
	method string
	seg    []string
	query  url.Values
	body   []byte
	self   string      // the URL without its query, for Link headers
	header http.Header // the response's
}

type errorBody struct {
	Message string       `json:"message"`
	Errors  []fieldError `json:"errors,omitempty"`
	DocURL  string       `json:"documentation_url"`
}

type fieldError struct {
	Resource string `json:"resource"`
	Code     string `json:"code"`
	Field    string `json:"field"`
}

func apiError(msg string) errorBody {
	return errorBody{Message: msg, DocURL: "https://docs.github.com/rest"}
}

func notFound() (int, any) { return http.StatusNotFound, apiError("Not Found") }

func invalid(resource, code, field string) (int, any) {
	e := apiError("Validation Failed")
	e.Errors = []fieldError{{Resource: resource, Code: code, Field: field}}
	return http.StatusUnprocessableEntity, e
}

func badJSON() (int, any) { return http.StatusBadRequest, apiError("Problems parsing JSON") }

func notAllowed() (int, any) { return http.StatusMethodNotAllowed, apiError("Method Not Allowed") }

// route answers req. s.mu is held.
func (s *Server) route(req *request) (int, any) {
	seg := req.seg
	if len(seg) == 1 && seg[0] == "user" && req.method == http.MethodGet {
		return http.StatusOK, map[string]any{"login": s.opt.User, "id": 1, "type": "User"}
	}
	if len(seg) < 3 || seg[0] != "repos" {
		return notFound()
	}
	r := s.repo(seg[1], seg[2])
	if r == nil {
		return notFound()
	}
	rest := seg[3:]
	if len(rest) == 0 {
		if req.method != http.MethodGet {
			return notAllowed()
		}
		return http.StatusOK, s.repoJSON(r)
	}
	switch rest[0] {
	case "issues":
		return s.issues(req, r, rest[1:])
	case "labels":
		return s.labels(req, r, rest[1:])
	case "milestones":
		return s.milestones(req, r, rest[1:])
	}
	return notFound()
}

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
		var in struct {
			Body *string `json:"body"`
		}
		if json.Unmarshal(req.body, &in) != nil {
			return badJSON()
		}
		if in.Body == nil || *in.Body == "" {
			return invalid("IssueComment", "missing_field", "body")
		}
		t := s.stamp()
		c := &Comment{ID: s.newID(), Issue: n, Body: *in.Body, User: s.opt.User, Created: t, Updated: t}
		c.NodeID = fmt.Sprintf("IC_fake%d", c.ID)
		r.comments = append(r.comments, c)
		is.Updated = t
		return http.StatusCreated, s.commentJSON(r, c)
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

// pageRange is the slice of a list one page shows.
type pageRange struct{ from, to int }

// paginate reads per_page and page, sets the Link header and returns the
// page's range of a list of n.
func paginate(req *request, n int) pageRange {
	per, err := strconv.Atoi(req.query.Get("per_page"))
	if err != nil || per <= 0 {
		per = 30
	}
	per = min(per, 100)
	page, err := strconv.Atoi(req.query.Get("page"))
	if err != nil || page <= 0 {
		page = 1
	}
	last := max(1, (n+per-1)/per)
	link := func(p int, rel string) string {
		q := url.Values{}
		for k, v := range req.query {
			q[k] = v
		}
		q.Set("page", strconv.Itoa(p))
		q.Set("per_page", strconv.Itoa(per))
		return fmt.Sprintf("<%s?%s>; rel=%q", req.self, q.Encode(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	if len(links) > 0 {
		req.header.Set("Link", strings.Join(links, ", "))
	}
	from := min((page-1)*per, n)
	return pageRange{from: from, to: min(from+per, n)}
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
		for _, n := range names {
			if !is.hasLabel(n) {
				is.Labels = append(is.Labels, s.ensureLabel(r, n).Name)
			}
		}
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
		for _, n := range names {
			if !is.hasLabel(n) {
				is.Labels = append(is.Labels, s.ensureLabel(r, n).Name)
			}
		}
		is.Updated = s.stamp()
		return http.StatusOK, list()
	}
	return notAllowed()
}

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

func (s *Server) listComments(req *request, r *repo, issue int) (int, any) {
	var since time.Time
	if v := req.query.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return invalid("IssueComment", "invalid", "since")
		}
		since = t
	}
	var list []*Comment
	for _, c := range r.comments {
		if (issue == 0 || c.Issue == issue) && !c.Updated.Before(since) {
			list = append(list, c)
		}
	}
	page := paginate(req, len(list))
	out := []any{}
	for _, c := range list[page.from:page.to] {
		out = append(out, s.commentJSON(r, c))
	}
	return http.StatusOK, out
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

func pathUnescape(p string) (string, error) { return url.PathUnescape(p) }
