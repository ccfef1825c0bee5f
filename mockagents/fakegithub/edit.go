package fakegithub

import (
	"fmt"
	"slices"
	"strings"
)

type pendingEdit struct {
	repo    string
	number  int
	changes []string
}

// Edit changes an issue as someone on github.com would, behind party's
// back, and stamps its updated_at. Each change is KEY=VALUE:
//
//	title=T  body=B  state=open|closed  labels=a,b (replace; empty: none)
//	+label=L  -label=L  milestone=N|TITLE|none  assignees=a,b  comment=TEXT
//	mycomment=TEXT (a comment by the token's user, as party elsewhere with
//	the same login writes; comment= is someone else's, "someone-on-github")
//	deleted=true (the issue is gone: deleted or transferred, 404 from then on)
func (s *Server) Edit(repoName string, number int, changes ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.edit(repoName, number, changes...)
}

// EditBeforeWrite is Edit done later: just before the next request that
// writes (any method but GET) is answered, as a person's change landing
// between party's read and its write. The issue must exist now; a failure
// then is returned by Close.
func (s *Server) EditBeforeWrite(repoName string, number int, changes ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, _, err := s.issueOf(repoName, number); err != nil {
		return err
	}
	s.pending = append(s.pending, pendingEdit{repo: repoName, number: number, changes: changes})
	return nil
}

// edit is Edit. s.mu is held.
func (s *Server) edit(repoName string, number int, changes ...string) error {
	r, is, err := s.issueOf(repoName, number)
	if err != nil {
		return err
	}
	if slices.Contains(changes, "deleted=true") {
		delete(r.issues, number)
		return nil
	}
	t := s.stamp()
	for _, c := range changes {
		k, v, ok := strings.Cut(c, "=")
		if !ok {
			return fmt.Errorf("fakegithub edit: %q is not KEY=VALUE", c)
		}
		switch k {
		case "title":
			is.Title = v
		case "body":
			is.Body = v
		case "state":
			if err := is.setState(v, "", t); err != nil {
				return fmt.Errorf("fakegithub edit: %w", err)
			}
		case "labels":
			is.Labels = nil
			for l := range strings.SplitSeq(v, ",") {
				if l = strings.TrimSpace(l); l != "" {
					is.Labels = append(is.Labels, s.ensureLabel(r, l).Name)
				}
			}
		case "+label":
			s.addLabels(r, is, v)
		case "-label":
			is.Labels = slices.DeleteFunc(is.Labels, func(l string) bool { return strings.EqualFold(l, v) })
		case "milestone":
			switch m := r.milestoneByTitle(v); {
			case v == "none" || v == "":
				is.Milestone = 0
			case m != nil:
				is.Milestone = m.Number
			default:
				n, ok := parseNumber(v)
				if !ok || r.milestones[n] == nil {
					return fmt.Errorf("fakegithub edit: no milestone %q in %s", v, repoName)
				}
				is.Milestone = n
			}
		case "assignees":
			is.Assignees = nil
			for a := range strings.SplitSeq(v, ",") {
				if a = strings.TrimSpace(a); a != "" {
					is.Assignees = append(is.Assignees, a)
				}
			}
		case "comment":
			r.comments = append(r.comments, &Comment{ID: s.newID(), NodeID: fmt.Sprintf("IC_fake%d", s.nextID),
				Issue: is.Number, Body: v, User: "someone-on-github", Created: t, Updated: t})
		case "mycomment":
			r.comments = append(r.comments, &Comment{ID: s.newID(), NodeID: fmt.Sprintf("IC_fake%d", s.nextID),
				Issue: is.Number, Body: v, User: s.opt.User, Created: t, Updated: t})
		default:
			return fmt.Errorf("fakegithub edit: unknown field %q (title, body, state, labels, +label, -label, milestone, assignees, comment, mycomment)", k)
		}
	}
	is.Updated = t
	return nil
}
