package github_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/task"
	"github.com/partyhq/party/core/task/github"
	"github.com/partyhq/party/core/testhome"
	"github.com/partyhq/party/mockagents/fakegithub"
)

func TestMain(m *testing.M) { os.Exit(testhome.Main(m)) }

const repo = "acme/widgets"

// ghEnv is gh's environment for the fake: PATH (the real gh on it),
// HOME, and what points gh at the server.
func ghEnv(s *fakegithub.Server, extra ...string) []string {
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, s.Env()...)
	return append(env, extra...)
}

// clock is a store's clock that moves a second per reading.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

type fixture struct {
	srv   *fakegithub.Server
	cfg   github.Config
	store task.Store
}

// runner is the gh a store runs for env: under -short fakegithub.Gh,
// which answers in process as the real gh does (fakegithub's
// TestGhAnswersAsTheRealGh); in the full run the real gh (nil: the store
// looks it up), whose absence fails the test.
func runner(t *testing.T, env []string) github.Runner {
	t.Helper()
	if testing.Short() {
		return fakegithub.Gh{Env: env}
	}
	_, err := exec.LookPath("gh")
	require.NoError(t, err, "the real gh is required (apt-get install -y gh; .ci/run installs it)")
	return nil
}

// newFixture starts a fake GitHub and opens a store on it (with runner's
// gh).
func newFixture(t *testing.T, opt fakegithub.Options) *fixture {
	t.Helper()
	if opt.LogPath == "" {
		opt.LogPath = filepath.Join(t.TempDir(), "github.log")
	}
	srv, err := fakegithub.Start(opt)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.Close()) })
	clk := &clock{t: time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)}
	cfg := github.Config{
		Dir:  filepath.Join(t.TempDir(), "team"),
		Team: task.Team{ID: "2b5c7e1a-0000-4000-8000-000000000001", Name: "widgets"},
		Repo: repo,
		Env:  ghEnv(srv),
		Now:  clk.now,
	}
	cfg.Runner = runner(t, cfg.Env)
	st, err := github.New(context.Background(), cfg)
	require.NoError(t, err)
	return &fixture{srv: srv, cfg: cfg, store: st}
}

func (f *fixture) issue(t *testing.T, n int) fakegithub.Issue {
	t.Helper()
	is, err := f.srv.Issue(repo, n)
	require.NoError(t, err)
	return is
}

func (f *fixture) comments(n int) []string {
	var out []string
	for _, c := range f.srv.Comments(repo, n) {
		out = append(out, c.Body)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func TestGitHubTasksAreIssues(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakegithub.Options{})
	ctx := context.Background()

	m, err := f.store.AddMilestone(ctx, "planner", "v1")
	require.NoError(t, err)
	assert.Equal(t, "M1", m.ID)
	assert.Equal(t, 1, m.Number)

	t1, err := f.store.AddTask(ctx, "planner", task.NewTask{Title: "Write the store", Milestone: "M1", Assignee: "codex"})
	require.NoError(t, err)
	assert.Equal(t, "1", t1.ID)
	assert.Equal(t, 1, t1.Issue)
	assert.Equal(t, task.Pending, t1.Status)
	assert.Equal(t, "codex", t1.Assignee)
	assert.Equal(t, "M1", t1.Milestone)
	t2, err := f.store.AddTask(ctx, "planner", task.NewTask{ID: "m1-2", Title: "Test it"})
	require.NoError(t, err)
	assert.Equal(t, 2, t2.Issue)
	_, err = f.store.AddTask(ctx, "planner", task.NewTask{ID: "m1-2", Title: "again"})
	assert.ErrorIs(t, err, task.ErrInvalid, "an id already taken")
	_, err = f.store.AddTask(ctx, "planner", task.NewTask{Title: " "})
	assert.ErrorIs(t, err, task.ErrInvalid, "an empty title")
	_, err = f.store.AddTask(ctx, "planner", task.NewTask{Title: "x", Milestone: "9"})
	assert.ErrorIs(t, err, task.ErrNotFound, "an unknown milestone")

	is := f.issue(t, 1)
	assert.Equal(t, "Write the store", is.Title)
	assert.Equal(t, "open", is.State)
	assert.ElementsMatch(t, []string{"party:pending", "party:assignee:codex"}, is.Labels)
	assert.Equal(t, 1, is.Milestone)
	colors := map[string]string{}
	for _, l := range f.srv.Labels(repo) {
		colors[l.Name] = strings.ToUpper(l.Color)
	}
	assert.Equal(t, "FBCA04", colors["party:pending"], "status labels are created with their colors")

	got, err := f.store.Task(ctx, "1")
	require.NoError(t, err)
	assert.Equal(t, t1.Title, got.Title)
	assert.Equal(t, 1, got.Issue)
	_, err = f.store.Task(ctx, "nope")
	assert.ErrorIs(t, err, task.ErrNotFound)

	all, err := f.store.Tasks(ctx, task.Filter{})
	require.NoError(t, err)
	require.Len(t, all, 2)
	assert.Equal(t, []string{"1", "m1-2"}, []string{all[0].ID, all[1].ID})
	mine, err := f.store.Tasks(ctx, task.Filter{Assignee: "codex"})
	require.NoError(t, err)
	require.Len(t, mine, 1)
	inV1, err := f.store.Tasks(ctx, task.Filter{Milestone: "M1"})
	require.NoError(t, err)
	require.Len(t, inV1, 1)

	// The map holds what the issue says, as the issue promises.
	b, err := os.ReadFile(filepath.Join(f.cfg.Dir, "id-map.json"))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"issueNumber": 1`)
	assert.Contains(t, string(b), `"nodeId": "`+is.NodeID+`"`)
	assert.Contains(t, string(b), `"updatedAt": "`+is.Updated.Format(time.RFC3339)+`"`)
}

func TestGitHubStatusLabelsAndComments(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakegithub.Options{})
	ctx := context.Background()
	_, err := f.store.AddTask(ctx, "planner", task.NewTask{Title: "a"})
	require.NoError(t, err)

	up, err := f.store.Update(ctx, "codex", "1", task.Change{Status: ptr(task.InProgress)})
	require.NoError(t, err)
	assert.Equal(t, task.InProgress, up.Status)
	assert.Empty(t, up.Forced)
	assert.Equal(t, []string{"party:in_progress"}, f.issue(t, 1).Labels, "exactly one status label")
	assert.Equal(t, []string{"**[party]** Status changed: `pending` → `in_progress` · Actor: codex · 2026-11-23T20:00:02Z"}, f.comments(1))

	// An assignee change is recorded locally, with no comment.
	_, err = f.store.Update(ctx, "codex", "1", task.Change{Assignee: ptr("codex")})
	require.NoError(t, err)
	assert.Len(t, f.comments(1), 1)

	logBefore := len(mustLog(t, f.srv.LogPath()))
	done, err := f.store.Update(ctx, "codex", "1", task.Change{Status: ptr(task.Done)})
	require.NoError(t, err)
	assert.Equal(t, task.Done, done.Status)
	is := f.issue(t, 1)
	assert.Equal(t, "closed", is.State)
	assert.ElementsMatch(t, []string{"party:done", "party:assignee:codex"}, is.Labels)
	// party:done is on before the issue is closed: its POST, then the
	// PATCH that closes, and party's old status label taken off alone.
	var writes []string
	for _, e := range mustLog(t, f.srv.LogPath())[logBefore:] {
		if e.Method != "GET" && !strings.HasSuffix(e.Path, "/"+repo+"/labels") { // not the label's creation
			writes = append(writes, e.Method+" "+strings.TrimPrefix(e.Path, "/api/v3/repos/"+repo)+" "+string(e.Body))
		}
	}
	require.Len(t, writes, 4, "%q", writes)
	assert.Equal(t, `POST /issues/1/labels {"labels":["party:done"]}`, writes[0])
	assert.Equal(t, "DELETE /issues/1/labels/party:in_progress ", writes[1])
	assert.Equal(t, `PATCH /issues/1 {"state":"closed","state_reason":"completed"}`, writes[2])
	assert.True(t, strings.HasPrefix(writes[3], "POST /issues/1/comments "), writes[3])

	// Back to work reopens it.
	again, err := f.store.Update(ctx, "human", "1", task.Change{Status: ptr(task.InProgress)})
	require.NoError(t, err)
	assert.Equal(t, task.InProgress, again.Status)
	assert.Equal(t, "open", f.issue(t, 1).State)

	// A milestone change is commented too.
	_, err = f.store.AddMilestone(ctx, "human", "v1")
	require.NoError(t, err)
	_, err = f.store.Update(ctx, "human", "1", task.Change{Milestone: ptr("M1")})
	require.NoError(t, err)
	cs := f.comments(1)
	require.Len(t, cs, 4)
	assert.True(t, strings.HasPrefix(cs[3], "**[party]** Milestone changed: `(none)` → `M1` · Actor: human · "), cs[3])

	// The audit trail: local events and the comments, each change once.
	log, err := f.store.Log(ctx, "1")
	require.NoError(t, err)
	var lines []string
	for _, e := range log {
		lines = append(lines, fmt.Sprintf("%s %s %s->%s by %s", e.Event, e.Field, e.From, e.To, e.Actor))
	}
	assert.Equal(t, []string{
		"task_added  ->a by planner",
		"task_updated status pending->in_progress by codex",
		"task_updated assignee ->codex by codex",
		"task_updated status in_progress->done by codex",
		"task_updated status done->in_progress by human",
		"task_updated milestone ->M1 by human",
	}, lines)
}

func TestGitHubLogReadsCommentsFromElsewhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakegithub.Options{})
	ctx := context.Background()
	for _, title := range []string{"a", "b"} {
		_, err := f.store.AddTask(ctx, "planner", task.NewTask{Title: title})
		require.NoError(t, err)
	}
	_, err := f.store.Update(ctx, "codex", "2", task.Change{Status: ptr(task.InProgress)})
	require.NoError(t, err)
	// party on another machine, logged in as the same GitHub user, wrote
	// this one: it is only on GitHub.
	require.NoError(t, f.srv.Edit(repo, 1, "mycomment=**[party]** Status changed: `pending` → `done` · Actor: claude · 2026-11-23T21:00:00Z", "comment=a human's words"))
	// Anyone else can write a party line on a public repository: forged.
	require.NoError(t, f.srv.Edit(repo, 1, "comment=**[party]** Status changed: `done` → `pending` · Actor: mallory · 2026-11-23T22:00:00Z"))
	require.NoError(t, f.srv.Edit(repo, 2, "comment=**[party]** Milestone changed: `(none)` → `M9` · Actor: mallory · 2026-11-23T22:00:00Z"))
	one, err := f.store.Log(ctx, "1")
	require.NoError(t, err)
	for _, e := range one {
		assert.NotEqual(t, "mallory", e.Actor, "a comment by someone-on-github is not party's")
	}
	assert.Len(t, one, 2)
	log, err := f.store.Log(ctx, "")
	require.NoError(t, err)
	var got []string
	for _, e := range log {
		got = append(got, e.Event+" "+e.ID+" "+e.Field+" "+e.To+" "+e.Actor)
	}
	assert.Equal(t, []string{
		"task_added 1  a planner",
		"task_added 2  b planner",
		"task_updated 2 status in_progress codex",
		"task_updated 1 status done claude",
	}, got)
}

func TestGitHubConflict(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakegithub.Options{})
	ctx := context.Background()
	_, err := f.store.AddMilestone(ctx, "planner", "v1")
	require.NoError(t, err)
	_, err = f.store.AddTask(ctx, "planner", task.NewTask{Title: "a", Assignee: "codex"})
	require.NoError(t, err)

	// A comment or a body edit on GitHub changes none of party's fields.
	require.NoError(t, f.srv.Edit(repo, 1, "comment=looks good", "body=more words"))
	_, err = f.store.Update(ctx, "codex", "1", task.Change{Status: ptr(task.InProgress)})
	require.NoError(t, err, "no conflict")

	// Someone closes it and moves it on GitHub.
	require.NoError(t, f.srv.Edit(repo, 1, "state=closed", "milestone=v1", "title=a, renamed"))
	_, err = f.store.Update(ctx, "codex", "1", task.Change{Assignee: ptr("claude")})
	var ce *task.ConflictError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "1", ce.ID)
	assert.Equal(t, []task.FieldDiff{
		{Field: "status", Cached: "in_progress", Remote: "done"},
		{Field: "milestone", Cached: "", Remote: "M1"},
		{Field: "title", Cached: "a", Remote: "a, renamed"},
	}, ce.Fields)
	is := f.issue(t, 1)
	assert.ElementsMatch(t, []string{"party:in_progress", "party:assignee:codex"}, is.Labels, "nothing written")

	// Again: still a conflict, until --force.
	_, err = f.store.Update(ctx, "codex", "1", task.Change{Status: ptr(task.InProgress)})
	require.ErrorAs(t, err, &ce)
	forced, err := f.store.Update(ctx, "codex", "1", task.Change{Status: ptr(task.InProgress), Force: true})
	require.NoError(t, err)
	assert.Equal(t, ce.Fields, forced.Forced, "the overridden changes, for the warning")
	assert.Equal(t, task.InProgress, forced.Status, "last write wins")
	assert.Equal(t, "M1", forced.Milestone, "what the change did not touch stays as GitHub has it")
	assert.Equal(t, "open", f.issue(t, 1).State)

	after, err := f.store.Update(ctx, "codex", "1", task.Change{Assignee: ptr("claude")})
	require.NoError(t, err, "the forced write is what party saw last")
	assert.Empty(t, after.Forced)
}

func TestGitHubStatusAsGitHubShowsIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakegithub.Options{})
	ctx := context.Background()
	_, err := f.store.AddTask(ctx, "planner", task.NewTask{Title: "a"})
	require.NoError(t, err)
	require.NoError(t, f.srv.Edit(repo, 1, "labels="))
	got, err := f.store.Task(ctx, "1")
	require.NoError(t, err)
	assert.Equal(t, task.Pending, got.Status, "open without a label")
	require.NoError(t, f.srv.Edit(repo, 1, "labels=party:pending", "state=closed"))
	got, err = f.store.Task(ctx, "1")
	require.NoError(t, err)
	assert.Equal(t, task.Done, got.Status, "closed whatever the labels")
}

func TestGitHubDoc(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakegithub.Options{})
	ctx := context.Background()
	_, err := f.store.AddTask(ctx, "planner", task.NewTask{Title: "a"})
	require.NoError(t, err)
	doc, err := f.store.Doc(ctx, "1")
	require.NoError(t, err)
	assert.Empty(t, doc)
	require.NoError(t, f.store.SetDoc(ctx, "planner", "1", "# Plan\n\n- one\n"))
	assert.Equal(t, "# Plan\n\n- one\n", f.issue(t, 1).Body)
	doc, err = f.store.Doc(ctx, "1")
	require.NoError(t, err)
	assert.Equal(t, "# Plan\n\n- one\n", doc)
	assert.ErrorIs(t, f.store.SetDoc(ctx, "planner", "2", "x"), task.ErrNotFound)

	// A doc written over a remote status change does not hide it.
	require.NoError(t, f.srv.Edit(repo, 1, "state=closed"))
	require.NoError(t, f.store.SetDoc(ctx, "planner", "1", "v2"))
	_, err = f.store.Update(ctx, "codex", "1", task.Change{Assignee: ptr("codex")})
	var ce *task.ConflictError
	assert.ErrorAs(t, err, &ce)
}

func TestGitHubMilestonesAdoptAndClose(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakegithub.Options{})
	ctx := context.Background()
	ms, err := f.store.Milestones(ctx)
	require.NoError(t, err)
	assert.Empty(t, ms)
	for _, title := range []string{"v1", "v2"} {
		_, err := f.store.AddMilestone(ctx, "planner", title)
		require.NoError(t, err)
	}
	_, err = f.store.AddMilestone(ctx, "planner", "v1")
	assert.ErrorIs(t, err, task.ErrInvalid, "the team has v1 already")

	done, err := f.store.DoneMilestone(ctx, "planner", "M2")
	require.NoError(t, err)
	assert.True(t, done.Done)
	assert.Equal(t, "closed", f.srv.Milestones(repo)[1].State)
	_, err = f.store.DoneMilestone(ctx, "planner", "9")
	assert.ErrorIs(t, err, task.ErrNotFound)

	ms, err = f.store.Milestones(ctx)
	require.NoError(t, err)
	require.Len(t, ms, 2)
	assert.Equal(t, "v1", ms[0].Name)
	assert.False(t, ms[0].Done)
	assert.True(t, ms[1].Done)

	// Another store (another team) adopts the milestone GitHub has.
	cfg := f.cfg
	cfg.Dir = filepath.Join(t.TempDir(), "other-team")
	other, err := github.New(ctx, cfg)
	require.NoError(t, err)
	adopted, err := other.AddMilestone(ctx, "human", "v1")
	require.NoError(t, err)
	assert.Equal(t, 1, adopted.Number)
	assert.Len(t, f.srv.Milestones(repo), 2, "no second v1")

	log, err := f.store.Log(ctx, "")
	require.NoError(t, err)
	var events []string
	for _, e := range log {
		events = append(events, e.Event+" "+e.ID)
	}
	assert.Equal(t, []string{"milestone_added M1", "milestone_added M2", "milestone_done M2"}, events)
}

func mustLog(t *testing.T, path string) []fakegithub.LogEntry {
	t.Helper()
	entries, err := fakegithub.ReadLog(path)
	require.NoError(t, err)
	return entries
}
