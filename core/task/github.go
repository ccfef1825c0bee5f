package task

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/state"
)

// The GitHub store keeps a team's tasks as issues of one repository and
// its milestones as the repository's milestones, through the gh CLI (argv
// only, JSON on stdin, `gh api`). What GitHub holds is the truth; the
// team's directory keeps what maps party's ids to GitHub's numbers:
//
//	id-map.json         {"1": {"issueNumber": 42, "nodeId": "I_…", "updatedAt": "…",
//	                           "createdAt": "…", "seen": {"title": …, "status": …,
//	                           "assignee": …, "milestone": …}}}
//	milestone-map.json  {"M1": {"number": 3, "title": "v1"}}
//	events.jsonl        every change, as the fs store writes it
//
// Status is a label, exactly one of party:pending, party:in_progress and
// party:done (created with their colors when missing); a closed issue is
// done whatever its labels, an open one without a status label is
// pending. party:done is put on before the issue is closed. party changes
// only its own labels, one by one (POST issues/N/labels for the new ones,
// DELETE issues/N/labels/NAME for its old ones), so a label a person puts
// on meanwhile stays. A task's
// assignee (a party role, not a GitHub user) is the label
// party:assignee:ROLE. A status or milestone change also posts an issue
// comment, one line per change:
//
//	**[party]** Status changed: `pending` → `in_progress` · Actor: codex · 2026-11-23T20:00:00Z
//
// and Log reads those lines back, with the local events: only the lines of
// comments by the user gh is logged in as.
//
// Conflicts: "seen" is the task as party last wrote it. Before an update
// the issue is read; when its updated_at is not the cached one and a
// field party tracks (title, status, assignee, milestone) differs from
// "seen", the update fails with *ConflictError listing them, unless
// Change.Force: then the change is applied over them (last write wins) and
// the returned task's Forced lists them. A change that touched none of
// those fields (a comment, the body) is no conflict.

// Status labels and their colors.
const (
	ghLabelPrefix   = "party:"
	ghAssigneeLabel = "party:assignee:"
	ghAssigneeColor = "C5DEF5"
)

var ghStatusColors = map[Status]string{Pending: "FBCA04", InProgress: "0052CC", Done: "0E8A16"}

// StatusLabel is the label of a status: party:pending, party:in_progress,
// party:done.
func StatusLabel(s Status) string { return ghLabelPrefix + string(s) }

// StatusOf is the status of an issue in state (open, closed) with labels:
// closed is done; otherwise the most advanced status label, pending when
// there is none.
func StatusOf(state string, labels []string) Status {
	if state == "closed" {
		return Done
	}
	st := Pending
	for i, s := range Statuses {
		if slices.Contains(labels, StatusLabel(s)) && i > slices.Index(Statuses, st) {
			st = s
		}
	}
	return st
}

// WithStatus is labels with exactly one status label, s's, in place of
// any others; the other labels keep their order.
func WithStatus(labels []string, s Status) []string {
	out := slices.DeleteFunc(slices.Clone(labels), isStatusLabel)
	return append(out, StatusLabel(s))
}

func isStatusLabel(l string) bool {
	return slices.ContainsFunc(Statuses, func(s Status) bool { return l == StatusLabel(s) })
}

// ghAssignee is the role of the first party:assignee: label, "" for none.
func ghAssignee(labels []string) string {
	for _, l := range labels {
		if r, ok := strings.CutPrefix(l, ghAssigneeLabel); ok {
			return r
		}
	}
	return ""
}

// ghWithAssignee is labels with one assignee label, role's ("" for none).
func ghWithAssignee(labels []string, role string) []string {
	out := slices.DeleteFunc(slices.Clone(labels), func(l string) bool { return strings.HasPrefix(l, ghAssigneeLabel) })
	if role != "" {
		out = append(out, ghAssigneeLabel+role)
	}
	return out
}

// ghMaxLabel is the length GitHub allows a label.
const ghMaxLabel = 50

// ghCheckLabel refuses an assignee whose label, party:assignee:ROLE, would
// be longer than GitHub allows.
func ghCheckLabel(role string) error {
	if len(ghAssigneeLabel+role) > ghMaxLabel {
		return fmt.Errorf("assignee %q: at most %d characters on GitHub (the label %s…): %w", role, ghMaxLabel-len(ghAssigneeLabel), ghAssigneeLabel, ErrInvalid)
	}
	return nil
}

// GitHubConfig says where a team's tasks live on GitHub.
type GitHubConfig struct {
	Dir  string // the team's dir under the state root (id-map.json lives there)
	Team Team
	Repo string   // owner/name
	Gh   string   // the gh binary ("gh" when empty; else an absolute path)
	Env  []string // gh's environment (nil: this process's)
	Now  func() time.Time
	// Clock paces the wait for the team's lock (nil: the real one).
	Clock clock.Clock
	// Warn reports what a command leaves out (an issue gone from GitHub).
	Warn func(string)
}

// githubStore is the GitHub store.
type githubStore struct {
	c      GitHubConfig
	gh     ghRunner
	locker state.Locker

	mu sync.Mutex
	// labels are the repository's labels once listed (lower-cased name
	// -> true).
	labels map[string]bool
	// login is the GitHub user gh is authenticated as, once asked.
	login string
}

// user is the login of the GitHub user gh is authenticated as (GET /user,
// once per store): the author of party's comments.
func (g *githubStore) user(ctx context.Context) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.login != "" {
		return g.login, nil
	}
	var u struct {
		Login string `json:"login"`
	}
	if err := g.api(ctx, "GET", "user", nil, &u); err != nil {
		return "", fmt.Errorf("github store: who gh is logged in as: %w", err)
	}
	if u.Login == "" {
		return "", fmt.Errorf("github store: GET /user named no login: %w", ErrUnavailable)
	}
	g.login = u.Login
	return g.login, nil
}

// NewGitHub opens the team's store on GitHub. It fails at once, with
// ErrUnavailable, when gh is missing, GitHub refuses its credentials or
// cannot be reached; with ErrNotFound when the repository does not exist.
func NewGitHub(ctx context.Context, c GitHubConfig) (Store, error) {
	if err := CheckRepo(c.Repo); err != nil {
		return nil, err
	}
	if c.Gh == "" {
		c.Gh = "gh"
	}
	bin, err := LookGh(c.Gh, c.Env)
	if err != nil {
		return nil, fmt.Errorf("github store: %s not found in PATH's absolute directories (install the GitHub CLI, https://cli.github.com): %w", c.Gh, ErrUnavailable)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if err := state.MkdirPrivate(c.Dir); err != nil {
		return nil, err
	}
	g := &githubStore{c: c, gh: execGh{bin: bin, env: c.Env},
		locker: state.Locker{Dir: filepath.Join(c.Dir, "locks")}}
	if err := g.api(ctx, "GET", g.repoPath(""), nil, nil); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("github store: repository %s not found (or gh's token cannot see it): %w", c.Repo, err)
		}
		return nil, fmt.Errorf("github store %s: %w", c.Repo, err)
	}
	return g, nil
}

func (g *githubStore) repoPath(rest string) string {
	if rest == "" {
		return "repos/" + g.c.Repo
	}
	return "repos/" + g.c.Repo + "/" + rest
}

// api runs gh api METHOD PATH with body as JSON on stdin and decodes the
// answer into out (either may be nil).
func (g *githubStore) api(ctx context.Context, method, path string, body, out any) error {
	args := []string{"api", "-X", method, path}
	var stdin []byte
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		stdin = b
		args = append(args, "--input", "-")
	}
	stdout, err := g.gh.Run(ctx, args, stdin)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		return fmt.Errorf("gh %s: the answer is not the JSON expected: %w", strings.Join(args, " "), err)
	}
	return nil
}

// ghList runs gh api --paginate on a list and decodes every item into a
// new T. gh prints the pages as one array or as arrays one after the
// other, depending on its version: both are read.
func ghList[T any](ctx context.Context, g *githubStore, path string) ([]T, error) {
	args := []string{"api", "--paginate", path}
	stdout, err := g.gh.Run(ctx, args, nil)
	if err != nil {
		return nil, err
	}
	var out []T
	dec := json.NewDecoder(bytes.NewReader(stdout))
	for dec.More() {
		var page []T
		if err := dec.Decode(&page); err != nil {
			return nil, fmt.Errorf("gh %s: the answer is not the JSON list expected: %w", strings.Join(args, " "), err)
		}
		out = append(out, page...)
	}
	return out, nil
}

// ghIssue is what party reads of an issue.
type ghIssue struct {
	Number int    `json:"number"`
	NodeID string `json:"node_id"`
	Title  string `json:"title"`
	Body   string `json:"body"`
	State  string `json:"state"`
	Labels []struct {
		Name string `json:"name"`
	} `json:"labels"`
	Milestone *struct {
		Number int `json:"number"`
	} `json:"milestone"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func (is ghIssue) labelNames() []string {
	out := make([]string, 0, len(is.Labels))
	for _, l := range is.Labels {
		out = append(out, l.Name)
	}
	return out
}

func (is ghIssue) milestoneNumber() int {
	if is.Milestone == nil {
		return 0
	}
	return is.Milestone.Number
}

type ghMilestone struct {
	Number    int       `json:"number"`
	Title     string    `json:"title"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

type ghComment struct {
	Body string `json:"body"`
	User struct {
		Login string `json:"login"`
	} `json:"user"`
	IssueURL  string    `json:"issue_url"`
	CreatedAt time.Time `json:"created_at"`
}

// ghSeen is a task's fields as party last wrote them, for conflicts.
type ghSeen struct {
	Title     string `json:"title"`
	Status    Status `json:"status"`
	Assignee  string `json:"assignee,omitempty"`
	Milestone string `json:"milestone,omitempty"`
}

// ghIssueRef is one entry of id-map.json.
type ghIssueRef struct {
	IssueNumber int       `json:"issueNumber"`
	NodeID      string    `json:"nodeId"`
	UpdatedAt   time.Time `json:"updatedAt"`
	CreatedAt   time.Time `json:"createdAt"`
	Seen        ghSeen    `json:"seen"`
}

// ghMilestoneRef is one entry of milestone-map.json.
type ghMilestoneRef struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
}

func (g *githubStore) idMapPath() string        { return filepath.Join(g.c.Dir, "id-map.json") }
func (g *githubStore) milestoneMapPath() string { return filepath.Join(g.c.Dir, "milestone-map.json") }
func (g *githubStore) eventsPath() string       { return filepath.Join(g.c.Dir, "events.jsonl") }

// ghReadMap reads a JSON map file; a missing file is an empty map, a file
// that does not parse is ErrCorrupt with its path.
func ghReadMap[T any](path string) (map[string]T, error) {
	m := map[string]T{}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %v: %w", path, err, ErrCorrupt)
	}
	return m, nil
}

func ghWriteMap[T any](path string, m map[string]T) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return state.WriteFile(path, append(b, '\n'), 0o600)
}

// lock serializes the writers of the team's maps across processes.
func (g *githubStore) lock(ctx context.Context) (func(), error) {
	return g.locker.Lock(ctx, "github-store")
}

func (g *githubStore) event(e Event) error {
	if e.TS.IsZero() {
		e.TS = g.now()
	}
	// A torn last line is moved aside, never glued onto (appendEvents).
	if _, err := appendEvents(g.eventsPath(), []Event{e}); err != nil {
		return fmt.Errorf("github store: %w", err)
	}
	return nil
}

// now is the time of a change, to the second (GitHub's precision, and
// what the comments show).
func (g *githubStore) now() time.Time { return g.c.Now().UTC().Truncate(time.Second) }

func (g *githubStore) Team(context.Context) (Team, error) { return g.c.Team, nil }

// ensureLabels creates the labels of names that the repository lacks,
// with party's colors.
func (g *githubStore) ensureLabels(ctx context.Context, names ...string) error {
	if len(names) == 0 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.labels == nil {
		type label struct {
			Name string `json:"name"`
		}
		ls, err := ghList[label](ctx, g, g.repoPath("labels?per_page=100"))
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
		color := ghAssigneeColor
		for s, c := range ghStatusColors {
			if n == StatusLabel(s) {
				color = c
			}
		}
		body := map[string]string{"name": n, "color": color, "description": "party pm"}
		err := g.api(ctx, "POST", g.repoPath("labels"), body, nil)
		if err != nil && !errors.Is(err, ErrInvalid) { // 422: made meanwhile
			return fmt.Errorf("github store: label %s: %w", n, err)
		}
		g.labels[strings.ToLower(n)] = true
	}
	return nil
}

// issueTask is the task an issue is; milestones maps GitHub's numbers to
// party's milestone ids.
func issueTask(id string, is ghIssue, milestones map[int]string) Task {
	labels := is.labelNames()
	return Task{
		ID:        id,
		Title:     is.Title,
		Status:    StatusOf(is.State, labels),
		Assignee:  ghAssignee(labels),
		Milestone: milestones[is.milestoneNumber()],
		Created:   is.CreatedAt,
		Updated:   is.UpdatedAt,
		Issue:     is.Number,
	}
}

func ghSeenOf(t Task) ghSeen {
	return ghSeen{Title: t.Title, Status: t.Status, Assignee: t.Assignee, Milestone: t.Milestone}
}

// ghDiff lists the fields that differ between what party saw and the task
// as it is now.
func ghDiff(was ghSeen, now Task) []FieldDiff {
	var out []FieldDiff
	add := func(field, a, b string) {
		if a != b {
			out = append(out, FieldDiff{Field: field, Cached: a, Remote: b})
		}
	}
	add("status", string(was.Status), string(now.Status))
	add("assignee", was.Assignee, now.Assignee)
	add("milestone", was.Milestone, now.Milestone)
	add("title", was.Title, now.Title)
	return out
}

// milestoneNumbers maps GitHub's milestone numbers to party's ids.
func (g *githubStore) milestoneNumbers() (map[int]string, map[string]ghMilestoneRef, error) {
	m, err := ghReadMap[ghMilestoneRef](g.milestoneMapPath())
	if err != nil {
		return nil, nil, err
	}
	byNumber := map[int]string{}
	for id, r := range m {
		byNumber[r.Number] = id
	}
	return byNumber, m, nil
}

func (g *githubStore) AddMilestone(ctx context.Context, actor, name string) (Milestone, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return Milestone{}, fmt.Errorf("milestone name: empty: %w", ErrInvalid)
	}
	unlock, err := g.lock(ctx)
	if err != nil {
		return Milestone{}, err
	}
	defer unlock()
	_, m, err := g.milestoneNumbers()
	if err != nil {
		return Milestone{}, err
	}
	var ms ghMilestone
	err = g.api(ctx, "POST", g.repoPath("milestones"), map[string]string{"title": name}, &ms)
	if errors.Is(err, ErrInvalid) {
		// GitHub has one by that title already: adopt it, unless it is
		// this team's already.
		all, lerr := ghList[ghMilestone](ctx, g, g.repoPath("milestones?state=all&per_page=100"))
		if lerr != nil {
			return Milestone{}, fmt.Errorf("github store: milestone %q: %w", name, lerr)
		}
		i := slices.IndexFunc(all, func(x ghMilestone) bool { return x.Title == name })
		if i < 0 {
			return Milestone{}, fmt.Errorf("github store: milestone %q: %w", name, err)
		}
		ms, err = all[i], nil
		for id, r := range m {
			if r.Number == ms.Number {
				return Milestone{}, fmt.Errorf("milestone %q exists already (id %s): %w", name, id, ErrInvalid)
			}
		}
	}
	if err != nil {
		return Milestone{}, fmt.Errorf("github store: milestone %q: %w", name, err)
	}
	id := "M" + strconv.Itoa(nextNumber(slices.Collect(maps.Keys(m)), "M"))
	m[id] = ghMilestoneRef{Number: ms.Number, Title: ms.Title}
	if err := ghWriteMap(g.milestoneMapPath(), m); err != nil {
		return Milestone{}, err
	}
	if err := g.event(Event{Event: "milestone_added", ID: id, To: name, Actor: actor}); err != nil {
		return Milestone{}, err
	}
	return ghMilestoneOf(id, ms), nil
}

func ghMilestoneOf(id string, ms ghMilestone) Milestone {
	return Milestone{ID: id, Name: ms.Title, Done: ms.State == "closed", Created: ms.CreatedAt, Updated: ms.UpdatedAt, Number: ms.Number}
}

func (g *githubStore) Milestones(ctx context.Context) ([]Milestone, error) {
	byNumber, m, err := g.milestoneNumbers()
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return []Milestone{}, nil
	}
	all, err := ghList[ghMilestone](ctx, g, g.repoPath("milestones?state=all&per_page=100"))
	if err != nil {
		return nil, fmt.Errorf("github store: milestones: %w", err)
	}
	out := []Milestone{}
	found := map[string]bool{}
	for _, ms := range all {
		if id, ok := byNumber[ms.Number]; ok {
			out = append(out, ghMilestoneOf(id, ms))
			found[id] = true
		}
	}
	for id, r := range m {
		if !found[id] { // gone from GitHub: what party knew of it
			out = append(out, Milestone{ID: id, Name: r.Title, Number: r.Number})
		}
	}
	slices.SortFunc(out, func(a, b Milestone) int { return compareIDs(a.ID, b.ID) })
	return out, nil
}

func (g *githubStore) DoneMilestone(ctx context.Context, actor, id string) (Milestone, error) {
	unlock, err := g.lock(ctx)
	if err != nil {
		return Milestone{}, err
	}
	defer unlock()
	_, m, err := g.milestoneNumbers()
	if err != nil {
		return Milestone{}, err
	}
	r, ok := m[id]
	if !ok {
		return Milestone{}, fmt.Errorf("milestone %s: %w", id, ErrNotFound)
	}
	var ms ghMilestone
	if err := g.api(ctx, "GET", g.repoPath(fmt.Sprintf("milestones/%d", r.Number)), nil, &ms); err != nil {
		return Milestone{}, fmt.Errorf("github store: milestone %s (#%d): %w", id, r.Number, err)
	}
	if ms.State == "closed" {
		return ghMilestoneOf(id, ms), nil
	}
	if err := g.api(ctx, "PATCH", g.repoPath(fmt.Sprintf("milestones/%d", r.Number)), map[string]string{"state": "closed"}, &ms); err != nil {
		return Milestone{}, fmt.Errorf("github store: milestone %s (#%d): %w", id, r.Number, err)
	}
	if err := g.event(Event{Event: "milestone_done", ID: id, Field: "done", From: "false", To: "true", Actor: actor}); err != nil {
		return Milestone{}, err
	}
	return ghMilestoneOf(id, ms), nil
}

func (g *githubStore) AddTask(ctx context.Context, actor string, nt NewTask) (Task, error) {
	if err := nt.Check(); err != nil {
		return Task{}, err
	}
	if err := ghCheckLabel(nt.Assignee); err != nil {
		return Task{}, err
	}
	title := strings.TrimSpace(nt.Title)
	unlock, err := g.lock(ctx)
	if err != nil {
		return Task{}, err
	}
	defer unlock()
	ids, err := ghReadMap[ghIssueRef](g.idMapPath())
	if err != nil {
		return Task{}, err
	}
	byNumber, miles, err := g.milestoneNumbers()
	if err != nil {
		return Task{}, err
	}
	// An id <milestone>-<n> of one of the team's milestones puts the task
	// in it, as in the file store.
	ms := nt.Milestone
	if of, must := milestoneOfID(nt.ID); of != "" {
		_, ok := miles[of]
		switch {
		case ok:
			if ms != "" && ms != of {
				return Task{}, fmt.Errorf("task id %s is in milestone %s, not %s: %w", nt.ID, of, ms, ErrInvalid)
			}
			ms = of
		case must:
			return Task{}, fmt.Errorf("task id %s puts the task in milestone %s, which does not exist (party pm milestone add makes it; or choose another id): %w", nt.ID, of, ErrNotFound)
		}
	}
	id := nt.ID
	if id == "" {
		id = strconv.Itoa(nextNumber(slices.Collect(maps.Keys(ids)), ""))
	} else if _, taken := ids[id]; taken {
		return Task{}, fmt.Errorf("task %s exists already: %w", id, ErrInvalid)
	}
	body := map[string]any{"title": title, "body": ""}
	if ms != "" {
		r, ok := miles[ms]
		if !ok {
			return Task{}, fmt.Errorf("milestone %s: %w", ms, ErrNotFound)
		}
		body["milestone"] = r.Number
	}
	labels := ghWithAssignee(WithStatus(nil, Pending), nt.Assignee)
	if err := g.ensureLabels(ctx, labels...); err != nil {
		return Task{}, err
	}
	body["labels"] = labels
	var is ghIssue
	if err := g.api(ctx, "POST", g.repoPath("issues"), body, &is); err != nil {
		return Task{}, fmt.Errorf("github store: add task %s: %w", id, err)
	}
	t := issueTask(id, is, byNumber)
	ids[id] = ghIssueRef{IssueNumber: is.Number, NodeID: is.NodeID, UpdatedAt: is.UpdatedAt, CreatedAt: is.CreatedAt, Seen: ghSeenOf(t)}
	if err := ghWriteMap(g.idMapPath(), ids); err != nil {
		return Task{}, fmt.Errorf("github store: issue #%d was made for task %s, but: %w", is.Number, id, err)
	}
	events := []Event{{Event: "task_added", ID: id, To: title, Actor: actor}}
	if t.Assignee != "" {
		events = append(events, Event{Event: "task_updated", ID: id, Field: "assignee", To: t.Assignee, Actor: actor})
	}
	if t.Milestone != "" {
		events = append(events, Event{Event: "task_updated", ID: id, Field: "milestone", To: t.Milestone, Actor: actor})
	}
	now := g.now()
	for _, e := range events {
		e.TS = now
		if err := g.event(e); err != nil {
			return Task{}, err
		}
	}
	return t, nil
}

// issue reads the issue of task id.
func (g *githubStore) issue(ctx context.Context, id string, r ghIssueRef) (ghIssue, error) {
	var is ghIssue
	if err := g.api(ctx, "GET", g.repoPath(fmt.Sprintf("issues/%d", r.IssueNumber)), nil, &is); err != nil {
		return ghIssue{}, fmt.Errorf("github store: task %s (#%d): %w", id, r.IssueNumber, err)
	}
	return is, nil
}

// ref finds task id in the map.
func (g *githubStore) ref(id string) (ghIssueRef, error) {
	ids, err := ghReadMap[ghIssueRef](g.idMapPath())
	if err != nil {
		return ghIssueRef{}, err
	}
	r, ok := ids[id]
	if !ok {
		return ghIssueRef{}, fmt.Errorf("task %s: %w", id, ErrNotFound)
	}
	return r, nil
}

func (g *githubStore) Task(ctx context.Context, id string) (Task, error) {
	r, err := g.ref(id)
	if err != nil {
		return Task{}, err
	}
	byNumber, _, err := g.milestoneNumbers()
	if err != nil {
		return Task{}, err
	}
	is, err := g.issue(ctx, id, r)
	if err != nil {
		return Task{}, err
	}
	return issueTask(id, is, byNumber), nil
}

func (g *githubStore) Tasks(ctx context.Context, f Filter) ([]Task, error) {
	ids, err := ghReadMap[ghIssueRef](g.idMapPath())
	if err != nil {
		return nil, err
	}
	byNumber, _, err := g.milestoneNumbers()
	if err != nil {
		return nil, err
	}
	out := []Task{}
	if len(ids) == 0 {
		return out, nil
	}
	// One listing of the issues updated since the team's first was made
	// (none of the team's can be older), then the few it missed one by one.
	idOf := map[int]string{}
	for id, r := range ids {
		idOf[r.IssueNumber] = id
	}
	issues, err := ghList[ghIssue](ctx, g, g.repoPath("issues?state=all&per_page=100&direction=asc"+ghSince(ids)))
	if err != nil {
		return nil, fmt.Errorf("github store: tasks: %w", err)
	}
	got := map[string]bool{}
	for _, is := range issues {
		if id, ok := idOf[is.Number]; ok && !got[id] {
			got[id] = true
			if t := issueTask(id, is, byNumber); f.Match(t) {
				out = append(out, t)
			}
		}
	}
	for id, r := range ids {
		if got[id] {
			continue
		}
		is, err := g.issue(ctx, id, r)
		if errors.Is(err, ErrNotFound) {
			// Deleted or transferred on GitHub: the other tasks still list.
			if g.c.Warn != nil {
				g.c.Warn(fmt.Sprintf("task %s: issue #%d is gone from %s (deleted or transferred); left out", id, r.IssueNumber, g.c.Repo))
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if t := issueTask(id, is, byNumber); f.Match(t) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b Task) int { return compareIDs(a.ID, b.ID) })
	return out, nil
}

func (g *githubStore) Update(ctx context.Context, actor, id string, c Change) (Task, error) {
	if err := c.Check(); err != nil {
		return Task{}, err
	}
	if c.Assignee != nil {
		if err := ghCheckLabel(*c.Assignee); err != nil {
			return Task{}, err
		}
	}
	unlock, err := g.lock(ctx)
	if err != nil {
		return Task{}, err
	}
	defer unlock()
	ids, err := ghReadMap[ghIssueRef](g.idMapPath())
	if err != nil {
		return Task{}, err
	}
	r, ok := ids[id]
	if !ok {
		return Task{}, fmt.Errorf("task %s: %w", id, ErrNotFound)
	}
	byNumber, miles, err := g.milestoneNumbers()
	if err != nil {
		return Task{}, err
	}
	var milestone int
	if c.Milestone != nil && *c.Milestone != "" {
		m, ok := miles[*c.Milestone]
		if !ok {
			return Task{}, fmt.Errorf("milestone %s: %w", *c.Milestone, ErrNotFound)
		}
		milestone = m.Number
	}
	is, err := g.issue(ctx, id, r)
	if err != nil {
		return Task{}, err
	}
	cur := issueTask(id, is, byNumber)
	var forced []FieldDiff
	if !is.UpdatedAt.Equal(r.UpdatedAt) {
		if d := ghDiff(r.Seen, cur); len(d) > 0 {
			if !c.Force {
				return Task{}, &ConflictError{ID: id, Fields: d}
			}
			forced = d
		}
	}

	next := cur
	if c.Status != nil {
		next.Status = *c.Status
	}
	if c.Assignee != nil {
		next.Assignee = *c.Assignee
	}
	if c.Milestone != nil {
		next.Milestone = *c.Milestone
	}
	// Normalize party's labels whenever the status changes or they do not
	// hold exactly the one status label the task's status asks for; only
	// party's are touched, one by one, so a label someone puts on
	// meanwhile stays.
	labels := is.labelNames()
	want := ghWithAssignee(WithStatus(labels, next.Status), next.Assignee)
	add := slices.DeleteFunc(slices.Clone(want), func(l string) bool { return slices.Contains(labels, l) })
	drop := slices.DeleteFunc(slices.Clone(labels), func(l string) bool { return slices.Contains(want, l) })
	path := g.repoPath(fmt.Sprintf("issues/%d", r.IssueNumber))
	reread := false
	if len(add) > 0 {
		// The issue's own labels exist; only new ones may need making.
		if err := g.ensureLabels(ctx, add...); err != nil {
			return Task{}, err
		}
		if err := g.api(ctx, "POST", path+"/labels", map[string][]string{"labels": add}, nil); err != nil {
			return Task{}, fmt.Errorf("github store: task %s (#%d): labels: %w", id, r.IssueNumber, err)
		}
		reread = true
	}
	for _, l := range drop {
		err := g.api(ctx, "DELETE", path+"/labels/"+url.PathEscape(l), nil, nil)
		if err != nil && !errors.Is(err, ErrNotFound) { // 404: taken off meanwhile
			return Task{}, fmt.Errorf("github store: task %s (#%d): label %s: %w", id, r.IssueNumber, l, err)
		}
		reread = true
	}
	patch := map[string]any{}
	if next.Milestone != cur.Milestone {
		if milestone == 0 {
			patch["milestone"] = nil
		} else {
			patch["milestone"] = milestone
		}
	}
	if next.Status != Done && is.State == "closed" {
		patch["state"] = "open"
	}
	if len(patch) > 0 {
		if err := g.api(ctx, "PATCH", path, patch, &is); err != nil {
			return Task{}, fmt.Errorf("github store: task %s (#%d): %w", id, r.IssueNumber, err)
		}
		reread = false
	}
	if next.Status == Done && is.State != "closed" {
		// party:done is on; now close it.
		if err := g.api(ctx, "PATCH", path, map[string]string{"state": "closed", "state_reason": "completed"}, &is); err != nil {
			return Task{}, fmt.Errorf("github store: task %s (#%d): %w", id, r.IssueNumber, err)
		}
		reread = false
	}

	now := g.now()
	var lines []string
	var events []Event
	change := func(field, from, to string) {
		if from == to {
			return
		}
		events = append(events, Event{Event: "task_updated", ID: id, Field: field, From: from, To: to, Actor: actor, TS: now})
		if field == "status" || field == "milestone" {
			lines = append(lines, ghCommentLine(field, from, to, actor, now))
		}
	}
	change("status", string(cur.Status), string(next.Status))
	change("assignee", cur.Assignee, next.Assignee)
	change("milestone", cur.Milestone, next.Milestone)
	if len(lines) > 0 {
		body := map[string]string{"body": strings.Join(lines, "\n")}
		if err := g.api(ctx, "POST", path+"/comments", body, nil); err != nil {
			return Task{}, fmt.Errorf("github store: task %s (#%d) changed, but its comment: %w", id, r.IssueNumber, err)
		}
		reread = true // the comment moved updated_at
	}
	if reread {
		if is, err = g.issue(ctx, id, r); err != nil {
			return Task{}, err
		}
	}
	t := issueTask(id, is, byNumber)
	r.UpdatedAt, r.Seen = is.UpdatedAt, ghSeenOf(t)
	ids[id] = r
	if err := ghWriteMap(g.idMapPath(), ids); err != nil {
		return Task{}, err
	}
	for _, e := range events {
		if err := g.event(e); err != nil {
			return Task{}, err
		}
	}
	t.Forced = forced
	return t, nil
}

// compareIDs orders ids as the file store does (idLess).
func compareIDs(a, b string) int {
	switch {
	case idLess(a, b):
		return -1
	case idLess(b, a):
		return 1
	}
	return 0
}

func (g *githubStore) Doc(ctx context.Context, id string) (string, error) {
	r, err := g.ref(id)
	if err != nil {
		return "", err
	}
	is, err := g.issue(ctx, id, r)
	if err != nil {
		return "", err
	}
	return is.Body, nil
}

// SetDoc writes the issue's body; the last write wins.
func (g *githubStore) SetDoc(ctx context.Context, actor, id, text string) error {
	return g.setDoc(ctx, actor, id, nil, text)
}

// SetDocFrom writes the issue's body if it is still base when read under
// the team's lock (a write on GitHub between that read and this one still
// wins: GitHub has no compare-and-set for a body).
func (g *githubStore) SetDocFrom(ctx context.Context, actor, id, base, text string) error {
	return g.setDoc(ctx, actor, id, &base, text)
}

func (g *githubStore) setDoc(ctx context.Context, actor, id string, base *string, text string) error {
	unlock, err := g.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	ids, err := ghReadMap[ghIssueRef](g.idMapPath())
	if err != nil {
		return err
	}
	r, ok := ids[id]
	if !ok {
		return fmt.Errorf("task %s: %w", id, ErrNotFound)
	}
	if base != nil {
		is, err := g.issue(ctx, id, r)
		if err != nil {
			return err
		}
		if is.Body != *base {
			return &DocConflictError{ID: id}
		}
	}
	byNumber, _, err := g.milestoneNumbers()
	if err != nil {
		return err
	}
	var is ghIssue
	if err := g.api(ctx, "PATCH", g.repoPath(fmt.Sprintf("issues/%d", r.IssueNumber)), map[string]string{"body": text}, &is); err != nil {
		return fmt.Errorf("github store: task %s (#%d): %w", id, r.IssueNumber, err)
	}
	// The cached updatedAt moves only when nothing party tracks changed
	// meanwhile; else the next update must still see the conflict.
	if len(ghDiff(r.Seen, issueTask(id, is, byNumber))) == 0 {
		r.UpdatedAt = is.UpdatedAt
		ids[id] = r
		if err := ghWriteMap(g.idMapPath(), ids); err != nil {
			return err
		}
	}
	return g.event(Event{Event: "doc_updated", ID: id, Actor: actor})
}

// ghCommentLine is one line of an issue comment recording a change.
func ghCommentLine(field, from, to, actor string, at time.Time) string {
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

var ghCommentRE = regexp.MustCompile("^\\*\\*\\[party\\]\\*\\* (Status|Milestone) changed: `([^`]*)` → `([^`]*)` · Actor: (.+) · (\\S+)$")

// ParseComment reads the change lines of a party comment on the issue of
// task id back into events; other lines are skipped.
func ParseComment(id, body string) []Event {
	var out []Event
	for line := range strings.SplitSeq(body, "\n") {
		m := ghCommentRE.FindStringSubmatch(strings.TrimSpace(line))
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
		out = append(out, Event{Event: "task_updated", ID: id, Field: strings.ToLower(m[1]),
			From: hide(m[2]), To: hide(m[3]), Actor: m[4], TS: ts.UTC()})
	}
	return out
}

// Log is the local events and the party comments on the team's issues,
// merged: a comment party wrote here is in both and shows once. Only the
// comments of the GitHub user gh is logged in as are read: party
// elsewhere, with the same login, is party; anyone else is not.
func (g *githubStore) Log(ctx context.Context, id string) ([]Event, error) {
	ids, err := ghReadMap[ghIssueRef](g.idMapPath())
	if err != nil {
		return nil, err
	}
	if id != "" {
		if _, ok := ids[id]; !ok {
			return nil, fmt.Errorf("task %s: %w", id, ErrNotFound)
		}
	}
	local, err := ReadEvents(g.eventsPath())
	if err != nil {
		return nil, err
	}
	out := []Event{}
	for _, e := range local {
		if e.OfTask(id) {
			out = append(out, e)
		}
	}
	var remote []Event
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
		cs, err := ghList[ghComment](ctx, g, g.repoPath(fmt.Sprintf("issues/%d/comments?per_page=100", r.IssueNumber)))
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
		cs, err := ghList[ghComment](ctx, g, g.repoPath("issues/comments?per_page=100"+ghSince(ids)))
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
		if !slices.ContainsFunc(out, func(l Event) bool { return ghSameEvent(l, e) }) {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b Event) int { return a.TS.Compare(b.TS) })
	return out, nil
}

// ghSameEvent says whether two events record the same change (times to the
// second: comments carry no more).
func ghSameEvent(a, b Event) bool {
	return a.Event == b.Event && a.ID == b.ID && a.Field == b.Field && a.From == b.From && a.To == b.To &&
		a.Actor == b.Actor && a.TS.Truncate(time.Second).Equal(b.TS.Truncate(time.Second))
}

// ghSince is the since= parameter of a listing of the team's issues or
// their comments: none of them is older than the team's first issue.
func ghSince(ids map[string]ghIssueRef) string {
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
