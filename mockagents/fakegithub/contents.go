package fakegithub

import (
	"fmt"
	"slices"
	"strings"
)

// issueOf finds an issue. s.mu is held.
func (s *Server) issueOf(repoName string, number int) (*repo, *Issue, error) {
	owner, name, _ := strings.Cut(repoName, "/")
	r := s.repo(owner, name)
	if r == nil {
		return nil, nil, fmt.Errorf("fakegithub: no repository %s", repoName)
	}
	is := r.issues[number]
	if is == nil {
		return nil, nil, fmt.Errorf("fakegithub: no issue %s#%d", repoName, number)
	}
	return r, is, nil
}

// Issue returns a copy of an issue.
func (s *Server) Issue(repoName string, number int) (Issue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, is, err := s.issueOf(repoName, number)
	if err != nil {
		return Issue{}, err
	}
	return is.clone(), nil
}

// Issues returns copies of a repository's issues, by number.
func (s *Server) Issues(repoName string) []Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, name, _ := strings.Cut(repoName, "/")
	r := s.repo(owner, name)
	if r == nil {
		return nil
	}
	var out []Issue
	for _, is := range r.sortedIssues() {
		out = append(out, is.clone())
	}
	return out
}

// Comments returns an issue's comments, oldest first.
func (s *Server) Comments(repoName string, number int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, name, _ := strings.Cut(repoName, "/")
	r := s.repo(owner, name)
	if r == nil {
		return nil
	}
	var out []Comment
	for _, c := range r.comments {
		if c.Issue == number {
			out = append(out, *c)
		}
	}
	return out
}

// Labels returns a repository's labels, in creation order.
func (s *Server) Labels(repoName string) []Label {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, name, _ := strings.Cut(repoName, "/")
	r := s.repo(owner, name)
	if r == nil {
		return nil
	}
	var out []Label
	for _, l := range r.labels {
		out = append(out, *l)
	}
	return out
}

// Milestones returns a repository's milestones, by number.
func (s *Server) Milestones(repoName string) []Milestone {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, name, _ := strings.Cut(repoName, "/")
	r := s.repo(owner, name)
	if r == nil {
		return nil
	}
	var out []Milestone
	for _, m := range r.sortedMilestones() {
		out = append(out, *m)
	}
	return out
}

// Describe writes a repository's contents as stable text, for scenario
// oracles: labels with their colors, milestones, then each issue with its
// state, labels (sorted), milestone, assignees and comments.
func (s *Server) Describe(repoName string) string {
	var b strings.Builder
	for _, l := range s.Labels(repoName) {
		fmt.Fprintf(&b, "label %s %s\n", l.Name, l.Color)
	}
	miles := map[int]string{}
	for _, m := range s.Milestones(repoName) {
		miles[m.Number] = m.Title
		fmt.Fprintf(&b, "milestone %d %s %q\n", m.Number, m.State, m.Title)
	}
	for _, is := range s.Issues(repoName) {
		b.WriteString(DescribeIssue(is, miles, s.Comments(repoName, is.Number)))
	}
	return b.String()
}

// DescribeIssue writes one issue as Describe does.
func DescribeIssue(is Issue, milestones map[int]string, comments []Comment) string {
	var b strings.Builder
	fmt.Fprintf(&b, "issue #%d %s %q\n", is.Number, is.State, is.Title)
	labels := slices.Clone(is.Labels)
	slices.Sort(labels)
	fmt.Fprintf(&b, "  labels: %s\n", strings.Join(labels, " "))
	if is.Milestone != 0 {
		fmt.Fprintf(&b, "  milestone: %s\n", milestones[is.Milestone])
	}
	if len(is.Assignees) > 0 {
		fmt.Fprintf(&b, "  assignees: %s\n", strings.Join(is.Assignees, " "))
	}
	if is.Body != "" {
		fmt.Fprintf(&b, "  body: %q\n", is.Body)
	}
	for _, c := range comments {
		fmt.Fprintf(&b, "  comment by %s: %s\n", c.User, c.Body)
	}
	return b.String()
}
