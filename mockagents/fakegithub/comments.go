package fakegithub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// listComments answers GET /repos/O/R/issues/N/comments, or with issue 0
// GET /repos/O/R/issues/comments (every comment of the repository).
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

// createComment answers POST /repos/O/R/issues/N/comments: {body}, by the
// token's user.
func (s *Server) createComment(req *request, r *repo, is *Issue) (int, any) {
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
	c := &Comment{ID: s.newID(), Issue: is.Number, Body: *in.Body, User: s.opt.User, Created: t, Updated: t}
	c.NodeID = fmt.Sprintf("IC_fake%d", c.ID)
	r.comments = append(r.comments, c)
	is.Updated = t
	return http.StatusCreated, s.commentJSON(r, c)
}
