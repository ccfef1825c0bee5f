package task

import (
	"context"
	"encoding/json"
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

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/testhome"
)

func TestMain(m *testing.M) { os.Exit(testhome.Main(m)) }

// fixed is a clock that always tells the same time; its waits are real
// (the lock queue polls).
type fixed struct{ clock.Real }

var t0 = time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)

func (fixed) Now() time.Time { return t0 }

func newTeam(t *testing.T) *FS {
	t.Helper()
	s, err := CreateFS(context.Background(), filepath.Join(t.TempDir(), "team"), Team{ID: "0b7f2a6e-1111-4222-8333-444455556666", Name: "t", Created: t0}, "human", fixed{})
	require.NoError(t, err)
	return s
}

func ptr[T any](v T) *T { return &v }

func TestTaskIDs(t *testing.T) {
	ctx := context.Background()
	s := newTeam(t)
	m, err := s.AddMilestone(ctx, "planner", "parser")
	require.NoError(t, err)
	assert.Equal(t, "M1", m.ID)

	tests := []struct {
		name    string
		in      NewTask
		wantID  string
		wantMS  string
		wantErr error
	}{
		{"first auto", NewTask{Title: "lexer"}, "1", "", nil},
		{"second auto", NewTask{Title: "parser"}, "2", "", nil},
		{"milestone-n puts it in the milestone", NewTask{ID: "M1-1", Title: "grammar"}, "M1-1", "M1", nil},
		{"milestone-n of no milestone is opaque", NewTask{ID: "X9-1", Title: "x"}, "X9-1", "", nil},
		{"party's milestone form needs its milestone", NewTask{ID: "M9-1", Title: "x"}, "", "", ErrNotFound},
		{"opaque", NewTask{ID: "fix the båd thing", Title: "y"}, "fix the båd thing", "", nil},
		{"a number skips to after it", NewTask{ID: "10", Title: "z"}, "10", "", nil},
		{"auto after 10", NewTask{Title: "after"}, "11", "", nil},
		{"taken", NewTask{ID: "1", Title: "again"}, "", "", ErrInvalid},
		{"milestone-n in another milestone", NewTask{ID: "M1-2", Title: "g", Milestone: "M2"}, "", "", ErrInvalid},
		{"unknown milestone", NewTask{Title: "g", Milestone: "M7"}, "", "", ErrNotFound},
		{"empty title", NewTask{Title: "  "}, "", "", ErrInvalid},
		{"slash", NewTask{ID: "a/b", Title: "t"}, "", "", ErrInvalid},
		{"dotdot", NewTask{ID: "..", Title: "t"}, "", "", ErrInvalid},
		{"hidden", NewTask{ID: ".x", Title: "t"}, "", "", ErrInvalid},
		{"control", NewTask{ID: "a\nb", Title: "t"}, "", "", ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.AddTask(ctx, "planner", tt.in)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantID, got.ID)
			assert.Equal(t, tt.wantMS, got.Milestone)
			assert.Equal(t, Pending, got.Status)
		})
	}
	all, err := s.Tasks(ctx, Filter{})
	require.NoError(t, err)
	var ids []string
	for _, tk := range all {
		ids = append(ids, tk.ID)
	}
	assert.Equal(t, []string{"1", "2", "10", "11", "M1-1", "X9-1", "fix the båd thing"}, ids)
}

func TestUpdateFilterAndLog(t *testing.T) {
	ctx := context.Background()
	s := newTeam(t)
	_, err := s.AddMilestone(ctx, "planner", "v1")
	require.NoError(t, err)
	_, err = s.AddTask(ctx, "planner", NewTask{Title: "a", Assignee: "executor", Milestone: "M1"})
	require.NoError(t, err)
	_, err = s.AddTask(ctx, "planner", NewTask{Title: "b"})
	require.NoError(t, err)

	got, err := s.Update(ctx, "executor", "1", Change{Status: ptr(InProgress)})
	require.NoError(t, err)
	assert.Equal(t, InProgress, got.Status)
	_, err = s.Update(ctx, "executor", "1", Change{Status: ptr(InProgress), Assignee: ptr("executor")})
	require.NoError(t, err, "no change is fine")
	_, err = s.Update(ctx, "executor", "1", Change{Status: ptr(Status("later"))})
	assert.ErrorIs(t, err, ErrInvalid)
	_, err = s.Update(ctx, "executor", "1", Change{Milestone: ptr("M9")})
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = s.Update(ctx, "executor", "7", Change{Status: ptr(Done)})
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = s.Update(ctx, "codex", "2", Change{Assignee: ptr("codex"), Milestone: ptr("M1")})
	require.NoError(t, err)
	require.NoError(t, s.SetDoc(ctx, "planner", "2", "# b\n"))
	require.NoError(t, s.SetDoc(ctx, "planner", "2", "# b\n"), "same text: no event")
	doc, err := s.Doc(ctx, "2")
	require.NoError(t, err)
	assert.Equal(t, "# b\n", doc)
	doc, err = s.Doc(ctx, "1")
	require.NoError(t, err)
	assert.Empty(t, doc)
	_, err = s.DoneMilestone(ctx, "human", "M1")
	require.NoError(t, err)
	m, err := s.DoneMilestone(ctx, "human", "M1")
	require.NoError(t, err, "twice is no change")
	assert.True(t, m.Done)

	for _, tt := range []struct {
		f    Filter
		want []string
	}{
		{Filter{}, []string{"1", "2"}},
		{Filter{Status: InProgress}, []string{"1"}},
		{Filter{Status: Pending, Milestone: "M1"}, []string{"2"}},
		{Filter{Assignee: "codex"}, []string{"2"}},
		{Filter{Assignee: "nobody"}, nil},
	} {
		tasks, err := s.Tasks(ctx, tt.f)
		require.NoError(t, err)
		var ids []string
		for _, tk := range tasks {
			ids = append(ids, tk.ID)
		}
		assert.Equal(t, tt.want, ids, "%+v", tt.f)
	}

	log, err := s.Log(ctx, "")
	require.NoError(t, err)
	var lines []string
	for _, e := range log {
		assert.Equal(t, t0, e.TS)
		lines = append(lines, fmt.Sprintf("%s %s %s %s>%s %s", e.Event, e.ID, e.Field, e.From, e.To, e.Actor))
	}
	assert.Equal(t, []string{
		"team_created 0b7f2a6e-1111-4222-8333-444455556666  >t human",
		"milestone_added M1  >v1 planner",
		"task_added 1  >a planner",
		"task_updated 1 assignee >executor planner",
		"task_updated 1 milestone >M1 planner",
		"task_added 2  >b planner",
		"task_updated 1 status pending>in_progress executor",
		"task_updated 2 assignee >codex codex",
		"task_updated 2 milestone >M1 codex",
		"doc_updated 2  > planner",
		"milestone_done M1 done false>true human",
	}, lines)
	log, err = s.Log(ctx, "2")
	require.NoError(t, err)
	assert.Len(t, log, 4)
	_, err = s.Log(ctx, "9")
	assert.ErrorIs(t, err, ErrNotFound)

	// The event line is the documented one.
	b, err := os.ReadFile(s.EventsPath())
	require.NoError(t, err)
	assert.Contains(t, string(b), `{"event":"task_updated","id":"1","field":"status","from":"pending","to":"in_progress","actor":"executor","ts":"2026-11-23T20:00:00Z"}`+"\n")
}

func TestCorruptFileIsReportedNeverReplaced(t *testing.T) {
	ctx := context.Background()
	s := newTeam(t)
	_, err := s.AddTask(ctx, "planner", NewTask{Title: "a"})
	require.NoError(t, err)
	path := s.taskPath("1")
	require.NoError(t, os.WriteFile(path, []byte(`{"id": "1", "title": `), 0o600))

	_, err = s.Task(ctx, "1")
	assert.ErrorIs(t, err, ErrCorrupt)
	assert.ErrorContains(t, err, path)
	_, err = s.Update(ctx, "x", "1", Change{Status: ptr(Done)})
	assert.ErrorIs(t, err, ErrCorrupt)
	_, err = s.Tasks(ctx, Filter{})
	assert.ErrorIs(t, err, ErrCorrupt)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, `{"id": "1", "title": `, string(b), "untouched")

	f, err := os.OpenFile(s.EventsPath(), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("{oops\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = s.Log(ctx, "")
	assert.ErrorIs(t, err, ErrCorrupt)
	assert.ErrorContains(t, err, s.EventsPath()+":3")
}

// TestConcurrentUpdatesLoseNothing runs 20 updates of one task, each
// changing a field another one may be changing, from 20 goroutines: each
// is a read-modify-write under the lock, so every one leaves its event and
// the last event is the task's state.
func TestConcurrentUpdatesLoseNothing(t *testing.T) {
	ctx := context.Background()
	s := newTeam(t)
	_, err := s.AddTask(ctx, "planner", NewTask{Title: "shared"})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Update(ctx, fmt.Sprintf("agent%d", i), "1", Change{Assignee: ptr(fmt.Sprintf("agent%d", i))})
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	checkChain(t, s, 20)
}

// checkChain checks the assignee events of task 1: n of them, each one
// starting from where the one before ended, the last one the task's
// assignee, each agent once.
func checkChain(t *testing.T, s *FS, n int) {
	t.Helper()
	log, err := s.Log(context.Background(), "1")
	require.NoError(t, err)
	prev, seen := "", map[string]bool{}
	for _, e := range log {
		if e.Field != "assignee" {
			continue
		}
		assert.Equal(t, prev, e.From, "a change read what the one before wrote")
		assert.Equal(t, e.Actor, e.To)
		assert.False(t, seen[e.To])
		seen[e.To] = true
		prev = e.To
	}
	assert.Len(t, seen, n)
	tk, err := s.Task(context.Background(), "1")
	require.NoError(t, err)
	assert.Equal(t, prev, tk.Assignee)
}

// TestUpdateHelper is not a test: run by TestConcurrentProcesses, it
// updates task 1 of the team in PM_TEST_DIR as PM_TEST_ACTOR.
func TestUpdateHelper(t *testing.T) {
	dir := os.Getenv("PM_TEST_DIR")
	if dir == "" {
		t.Skip("helper process")
	}
	s, err := OpenFS(context.Background(), dir, clock.Real{})
	require.NoError(t, err)
	actor := os.Getenv("PM_TEST_ACTOR")
	_, err = s.Update(context.Background(), actor, "1", Change{Assignee: &actor})
	require.NoError(t, err)
}

func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts 20 processes")
	}
	ctx := context.Background()
	s := newTeam(t)
	_, err := s.AddTask(ctx, "planner", NewTask{Title: "shared"})
	require.NoError(t, err)
	var cmds []*exec.Cmd
	for i := range 20 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestUpdateHelper$")
		cmd.Env = append(os.Environ(), "PM_TEST_DIR="+s.Dir(), fmt.Sprintf("PM_TEST_ACTOR=agent%d", i))
		require.NoError(t, cmd.Start())
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		assert.NoError(t, c.Wait())
	}
	checkChain(t, s, 20)
}

func TestCheckID(t *testing.T) {
	for _, ok := range []string{"1", "M1-2", "fix-it", "ünïcode", "a b", "a.b"} {
		assert.NoError(t, CheckID(ok), ok)
	}
	for _, bad := range []string{"", "/", "a/b", `a\b`, "..", "a..b", ".hidden", "-flag", "a\x00b", "a\tb", "\x7f", strings.Repeat("x", 201), "\xff"} {
		assert.ErrorIs(t, CheckID(bad), ErrInvalid, "%q", bad)
	}
}

func TestInitAndFindLink(t *testing.T) {
	ctx := context.Background()
	root, repo := t.TempDir(), t.TempDir()
	sub := filepath.Join(repo, "a", "b")
	require.NoError(t, os.MkdirAll(sub, 0o755))

	_, err := FindLink(sub)
	assert.ErrorIs(t, err, ErrNoTeam)

	res, err := Init(ctx, InitOptions{Root: root, Dir: repo, Name: "crew", Actor: "human", Clock: fixed{}})
	require.NoError(t, err)
	assert.True(t, res.Created)
	assert.Regexp(t, uuidRE, res.Team.ID)
	b, err := os.ReadFile(filepath.Join(repo, PointerFile))
	require.NoError(t, err)
	var p map[string]any
	require.NoError(t, json.Unmarshal(b, &p))
	assert.Equal(t, map[string]any{"id": res.Team.ID}, p, "the pointer holds only the id")

	link, err := FindLink(sub)
	require.NoError(t, err)
	assert.Equal(t, Link{Dir: repo, Path: filepath.Join(repo, PointerFile), ID: res.Team.ID}, link)

	_, err = Init(ctx, InitOptions{Root: root, Dir: repo, Actor: "human", Clock: fixed{}})
	assert.ErrorIs(t, err, ErrInvalid, "linked already")
	again, err := Init(ctx, InitOptions{Root: root, Dir: repo, Team: res.Team.ID, Clock: fixed{}})
	require.NoError(t, err, "linking the same team again")
	assert.False(t, again.Created)
	assert.Equal(t, "crew", again.Team.Name)

	other := t.TempDir()
	linked, err := Init(ctx, InitOptions{Root: root, Dir: other, Team: res.Team.ID, Clock: fixed{}})
	require.NoError(t, err, "a second clone links the same team")
	assert.Equal(t, res.Team.ID, linked.Team.ID)
	_, err = Init(ctx, InitOptions{Root: root, Dir: t.TempDir(), Team: "0b7f2a6e-0000-4000-8000-000000000000", Clock: fixed{}})
	assert.ErrorIs(t, err, ErrNotFound)

	require.NoError(t, os.WriteFile(filepath.Join(repo, PointerFile), []byte(`{"id": "../x"}`), 0o644))
	_, err = FindLink(sub)
	assert.ErrorIs(t, err, ErrCorrupt)
}

func TestLabelAndEventLine(t *testing.T) {
	assert.Equal(t, "Task 1", Task{ID: "1"}.Label())
	assert.Equal(t, "Task 1 (#42)", Task{ID: "1", Issue: 42}.Label())
	ts := time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)
	assert.Equal(t, "2026-11-23T20:00:00Z  codex  task_updated 1 assignee: - → claude",
		Event{Event: "task_updated", ID: "1", Field: "assignee", To: "claude", Actor: "codex", TS: ts}.String())
	assert.Equal(t, "2026-11-23T20:00:00Z  human  milestone_added M1: v1",
		Event{Event: "milestone_added", ID: "M1", To: "v1", Actor: "human", TS: ts}.String())
}

func TestTaskTextAndMilestoneState(t *testing.T) {
	ts := time.Date(2026, 11, 23, 20, 0, 0, 0, time.FixedZone("CET", 3600))
	assert.Equal(t, "Task 1 (#42): lexer\\x1b[2J\nstatus:    in_progress\nassignee:  codex\nmilestone: -\nupdated:   2026-11-23T19:00:00Z",
		Task{ID: "1", Issue: 42, Title: "lexer\x1b[2J", Status: InProgress, Assignee: "codex", Updated: ts}.Text(),
		"control bytes escaped, no milestone a dash, the time in UTC")
	assert.Equal(t, []string{"1 (#42)", "pending", "-", "M1", "a\\tb"}, Task{ID: "1", Issue: 42, Status: Pending, Milestone: "M1", Title: "a\tb"}.Row())
	assert.Equal(t, []string{"M1", "open", "v1"}, Milestone{ID: "M1", Name: "v1"}.Row())
	assert.Equal(t, "open", Milestone{}.State())
	assert.Equal(t, "done", Milestone{Done: true}.State())
}

func TestConflictAndDiffs(t *testing.T) {
	ds := []FieldDiff{{Field: "status", Cached: "pending", Remote: "done"}, {Field: "assignee", Cached: "", Remote: "codex"}}
	assert.Equal(t, `status "pending" → "done", assignee "" → "codex"`, Diffs(ds))
	assert.Equal(t, `task 3 changed on the remote since party last read it: status "pending" → "done", assignee "" → "codex" (use --force to overwrite)`,
		(&ConflictError{ID: "3", Fields: ds}).Error())
	assert.Equal(t, "task 3 changed on the remote since party last read it (use --force to overwrite)", (&ConflictError{ID: "3"}).Error())
}

func TestInitResultText(t *testing.T) {
	assert.Equal(t, "created team T1 (crew\\n): /x/.party/team.json",
		InitResult{Team: Team{ID: "T1", Name: "crew\n"}, Pointer: "/x/.party/team.json", Created: true}.Text())
	assert.Equal(t, "linked to team T1: /x/.party/team.json", InitResult{Team: Team{ID: "T1"}, Pointer: "/x/.party/team.json"}.Text())
}

// TestAuditBeforeChange: the event is appended before the change it
// records; an event that cannot be appended changes nothing, and a change
// that cannot be written takes its events back off the log.
func TestAuditBeforeChange(t *testing.T) {
	ctx := context.Background()
	s := newTeam(t)
	_, err := s.AddTask(ctx, "planner", NewTask{Title: "lexer"})
	require.NoError(t, err)
	before, err := os.ReadFile(s.EventsPath())
	require.NoError(t, err)

	// The log cannot be appended to (here a directory stands in for it).
	require.NoError(t, os.Rename(s.EventsPath(), s.EventsPath()+".away"))
	require.NoError(t, os.Mkdir(s.EventsPath(), 0o700))
	_, err = s.AddTask(ctx, "planner", NewTask{Title: "parser"})
	require.Error(t, err)
	_, err = s.Update(ctx, "planner", "1", Change{Status: ptr(Done)})
	require.Error(t, err)
	require.NoError(t, os.Remove(s.EventsPath()))
	require.NoError(t, os.Rename(s.EventsPath()+".away", s.EventsPath()))
	_, err = s.Task(ctx, "2")
	assert.ErrorIs(t, err, ErrNotFound, "no task without its event")
	tk, err := s.Task(ctx, "1")
	require.NoError(t, err)
	assert.Equal(t, Pending, tk.Status, "no change without its event")

	// The change cannot be written (a directory where the task's file
	// goes): its events are taken back.
	require.NoError(t, os.Mkdir(s.taskPath("3"), 0o700))
	_, err = s.AddTask(ctx, "planner", NewTask{ID: "3", Title: "blocked"})
	require.Error(t, err)
	after, err := os.ReadFile(s.EventsPath())
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
}

// TestTornLastLineIsRepaired: a last line an append cut short (a crash, a
// full disk) is moved aside, never glued onto: the next event starts its
// own line and the log reads whole.
func TestTornLastLineIsRepaired(t *testing.T) {
	ctx := context.Background()
	s := newTeam(t)
	_, err := s.AddTask(ctx, "planner", NewTask{Title: "lexer"})
	require.NoError(t, err)
	f, err := os.OpenFile(s.EventsPath(), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"event":"task_updated","id":"1","fie`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	_, err = s.Update(ctx, "codex", "1", Change{Status: ptr(InProgress)})
	require.NoError(t, err)
	events, err := s.Log(ctx, "")
	require.NoError(t, err)
	require.Len(t, events, 3)
	assert.Equal(t, "in_progress", events[2].To)
	torn, err := os.ReadFile(s.EventsPath() + ".torn")
	require.NoError(t, err)
	assert.Equal(t, `{"event":"task_updated","id":"1","fie`+"\n", string(torn), "the fragment is kept")
}

func TestSetDocFrom(t *testing.T) {
	ctx := context.Background()
	s := newTeam(t)
	_, err := s.AddTask(ctx, "planner", NewTask{Title: "lexer"})
	require.NoError(t, err)
	require.NoError(t, s.SetDoc(ctx, "human", "1", "# v1\n"))
	require.NoError(t, s.SetDocFrom(ctx, "human", "1", "# v1\n", "# v2\n"))
	err = s.SetDocFrom(ctx, "human", "1", "# v1\n", "# mine\n")
	var conflict *DocConflictError
	require.ErrorAs(t, err, &conflict)
	assert.ErrorIs(t, err, ErrConflict)
	doc, err := s.Doc(ctx, "1")
	require.NoError(t, err)
	assert.Equal(t, "# v2\n", doc, "never saved over a change made meanwhile")
}
