package github

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/partyhq/party/core/task"
)

type comment struct {
	Body string `json:"body"`
	User struct {
		Login string `json:"login"`
	} `json:"user"`
	IssueURL  string    `json:"issue_url"`
	CreatedAt time.Time `json:"created_at"`
}

// commentLine is one line of an issue comment recording a change.
func commentLine(field, from, to, actor string, at time.Time) string {
	show := func(v string) string {
		if v == "" {
			return "(none)"
		}
		return v
	}
	name := "Status"
	if field == "milestone" {
		name = "Milestone"
	}
	return fmt.Sprintf("**[party]** %s changed: `%s` → `%s` · Actor: %s · %s",
		name, show(from), show(to), actor, at.UTC().Format(time.RFC3339))
}

var commentRE = regexp.MustCompile("^\\*\\*\\[party\\]\\*\\* (Status|Milestone) changed: `([^`]*)` → `([^`]*)` · Actor: (.+) · (\\S+)$")

// ParseComment reads the change lines of a party comment on the issue of
// task id back into events; other lines are skipped.
func ParseComment(id, body string) []task.Event {
	var out []task.Event
	for line := range strings.SplitSeq(body, "\n") {
		m := commentRE.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		ts, err := time.Parse(time.RFC3339, m[5])
		if err != nil {
			continue
		}
		hide := func(v string) string {
			if v == "(none)" {
				return ""
			}
			return v
		}
		out = append(out, task.Event{Event: "task_updated", ID: id, Field: strings.ToLower(m[1]),
			From: hide(m[2]), To: hide(m[3]), Actor: m[4], TS: ts.UTC()})
	}
	return out
}

// Log is the local events and the party comments on the team's issues,
// merged: a comment party wrote here is in both and shows once. Only the
// comments of the GitHub user gh is logged in as are read: party
// elsewhere, with the same login, is party; anyone else is not.
func (g *store) Log(ctx context.Context, id string) ([]task.Event, error) {
	ids, err := readMap[issueRef](g.idMapPath())
	if err != nil {
		return nil, err
	}
	if id != "" {
		if _, ok := ids[id]; !ok {
			return nil, fmt.Errorf("task %s: %w", id, task.ErrNotFound)
		}
	}
	local, err := task.ReadEvents(g.eventsPath())
	if err != nil {
		return nil, err
	}
	out := []task.Event{}
	for _, e := range local {
		if e.OfTask(id) {
			out = append(out, e)
		}
	}
	var remote []task.Event
	// Only party's own comments count: those of the user gh is logged in
	// as. Anyone may write a **[party]** line on a public repository.
	var login string
	if len(ids) > 0 {
		if login, err = g.user(ctx); err != nil {
			return nil, err
		}
	}
	if id != "" {
		r := ids[id]
		cs, err := list[comment](ctx, g, g.repoPath(fmt.Sprintf("issues/%d/comments?per_page=100", r.IssueNumber)))
		if err != nil {
			return nil, fmt.Errorf("github store: log of task %s (#%d): %w", id, r.IssueNumber, err)
		}
		for _, c := range cs {
			if c.User.Login == login {
				remote = append(remote, ParseComment(id, c.Body)...)
			}
		}
	} else if len(ids) > 0 {
		idOf := map[string]string{}
		for tid, r := range ids {
			idOf[strconv.Itoa(r.IssueNumber)] = tid
		}
		cs, err := list[comment](ctx, g, g.repoPath("issues/comments?per_page=100"+sinceParam(ids)))
		if err != nil {
			return nil, fmt.Errorf("github store: log: %w", err)
		}
		for _, c := range cs {
			n := c.IssueURL[strings.LastIndexByte(c.IssueURL, '/')+1:]
			if tid, ok := idOf[n]; ok && c.User.Login == login {
				remote = append(remote, ParseComment(tid, c.Body)...)
			}
		}
	}
	for _, e := range remote {
		if !slices.ContainsFunc(out, func(l task.Event) bool { return sameEvent(l, e) }) {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b task.Event) int { return a.TS.Compare(b.TS) })
	return out, nil
}

// sameEvent says whether two events record the same change (times to the
// second: comments carry no more).
func sameEvent(a, b task.Event) bool {
	return a.Event == b.Event && a.ID == b.ID && a.Field == b.Field && a.From == b.From && a.To == b.To &&
		a.Actor == b.Actor && a.TS.Truncate(time.Second).Equal(b.TS.Truncate(time.Second))
}

// sinceParam is the since= parameter of a listing of the team's issues or
// their comments: none of them is older than the team's first issue.
func sinceParam(ids map[string]issueRef) string {
	var since time.Time
	for _, r := range ids {
		if since.IsZero() || r.CreatedAt.Before(since) {
			since = r.CreatedAt
		}
	}
	if since.IsZero() {
		return ""
	}
	return "&since=" + since.UTC().Format(time.RFC3339)
}
