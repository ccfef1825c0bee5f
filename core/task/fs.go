package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/state"
)

// The file store keeps a team under the state root:
//
//	teams/<uuid>/team.json
//	teams/<uuid>/milestones/<id>.json
//	teams/<uuid>/tasks/<id>.json, tasks/<id>.md
//	teams/<uuid>/events.jsonl
//
// The JSON files are the truth, each written atomically (temp file, fsync,
// rename). Every change is a read-modify-write under the team's lock, a
// first-come-first-served queue across processes (state.Locker), and its
// events are appended before the lock goes, so the audit trail is in the
// order of the changes and no concurrent change is lost.

// TeamsDir is the directory of the teams under the state root.
func TeamsDir(root string) string { return filepath.Join(root, "teams") }

// TeamDir is the directory of team id under the state root.
func TeamDir(root, id string) string { return filepath.Join(TeamsDir(root), id) }

// FS is the file store of one team.
type FS struct {
	dir   string
	clock clock.Clock
	lock  state.Locker
}

// OpenFS opens the file store of the team whose directory is dir
// (TeamDir). A missing team is ErrNotFound, an unreadable team.json
// ErrCorrupt.
func OpenFS(ctx context.Context, dir string, clk clock.Clock) (*FS, error) {
	s := newFS(dir, clk)
	if _, err := s.Team(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func newFS(dir string, clk clock.Clock) *FS {
	return &FS{dir: dir, clock: clk, lock: state.Locker{Dir: filepath.Join(dir, "locks"), Clock: clk}}
}

// CreateFS makes a new team in dir with its team.json and its first event.
func CreateFS(ctx context.Context, dir string, t Team, actor string, clk clock.Clock) (*FS, error) {
	if err := state.MkdirPrivate(dir); err != nil {
		return nil, err
	}
	s := newFS(dir, clk)
	err := s.locked(ctx, func() ([]Event, error) {
		path := filepath.Join(dir, "team.json")
		if _, err := os.Stat(path); err == nil {
			return nil, fmt.Errorf("team %s exists already: %w", t.ID, ErrInvalid)
		}
		if err := writeJSON(path, t); err != nil {
			return nil, err
		}
		return []Event{{Event: "team_created", ID: t.ID, To: t.Name, Actor: actor}}, nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Dir is the team's directory.
func (s *FS) Dir() string { return s.dir }

// EventsPath is the team's audit log.
func (s *FS) EventsPath() string { return filepath.Join(s.dir, "events.jsonl") }

func (s *FS) taskPath(id string) string { return filepath.Join(s.dir, "tasks", id+".json") }
func (s *FS) docPath(id string) string  { return filepath.Join(s.dir, "tasks", id+".md") }
func (s *FS) milestonePath(id string) string {
	return filepath.Join(s.dir, "milestones", id+".json")
}

// locked runs change under the team's lock and appends the events it
// returns, stamped with the time, before the lock goes.
func (s *FS) locked(ctx context.Context, change func() ([]Event, error)) error {
	release, err := s.lock.Lock(ctx, "team")
	if err != nil {
		return err
	}
	defer release()
	events, err := change()
	if err != nil {
		return err
	}
	for _, e := range events {
		if e.TS.IsZero() {
			e.TS = s.now()
		}
		if err := state.AppendEvent(s.EventsPath(), e); err != nil {
			return err
		}
	}
	return nil
}

func (s *FS) now() time.Time { return s.clock.Now().UTC() }

// Team returns the team.
func (s *FS) Team(context.Context) (Team, error) {
	var t Team
	path := filepath.Join(s.dir, "team.json")
	if err := readJSON(path, &t); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return t, fmt.Errorf("team %s: %w", filepath.Base(s.dir), ErrNotFound)
		}
		return t, err
	}
	return t, nil
}

// AddMilestone adds a milestone with the next free id (M1, M2, …).
func (s *FS) AddMilestone(ctx context.Context, actor, name string) (Milestone, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return Milestone{}, fmt.Errorf("a milestone needs a name: %w", ErrInvalid)
	}
	var m Milestone
	err := s.locked(ctx, func() ([]Event, error) {
		ids, err := s.ids("milestones")
		if err != nil {
			return nil, err
		}
		now := s.now()
		m = Milestone{ID: "M" + strconv.Itoa(nextNumber(ids, "M")), Name: name, Created: now, Updated: now}
		if err := s.mkdir("milestones"); err != nil {
			return nil, err
		}
		if err := writeJSON(s.milestonePath(m.ID), m); err != nil {
			return nil, err
		}
		return []Event{{Event: "milestone_added", ID: m.ID, To: name, Actor: actor}}, nil
	})
	return m, err
}

// Milestones lists the milestones in id order.
func (s *FS) Milestones(context.Context) ([]Milestone, error) {
	ids, err := s.ids("milestones")
	if err != nil {
		return nil, err
	}
	out := make([]Milestone, 0, len(ids))
	for _, id := range ids {
		var m Milestone
		if err := readJSON(s.milestonePath(id), &m); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func (s *FS) milestone(id string) (Milestone, error) {
	var m Milestone
	if err := CheckID(id); err != nil {
		return m, err
	}
	err := readJSON(s.milestonePath(id), &m)
	if errors.Is(err, os.ErrNotExist) {
		return m, fmt.Errorf("milestone %s: %w", id, ErrNotFound)
	}
	return m, err
}

// DoneMilestone marks a milestone done; one already done stays as it is,
// with no event.
func (s *FS) DoneMilestone(ctx context.Context, actor, id string) (Milestone, error) {
	var m Milestone
	err := s.locked(ctx, func() ([]Event, error) {
		var err error
		if m, err = s.milestone(id); err != nil || m.Done {
			return nil, err
		}
		m.Done, m.Updated = true, s.now()
		if err := writeJSON(s.milestonePath(id), m); err != nil {
			return nil, err
		}
		return []Event{{Event: "milestone_done", ID: id, Field: "done", From: "false", To: "true", Actor: actor}}, nil
	})
	return m, err
}

// milestoneTaskID is a task id of the form <milestone>-<n>.
var milestoneTaskID = regexp.MustCompile(`^(.+)-([1-9][0-9]*)$`)

// AddTask adds a task: with the next free number as its id when t.ID is
// empty. An id <milestone>-<n> of an existing milestone puts the task in
// that milestone; any other id is taken as it is.
func (s *FS) AddTask(ctx context.Context, actor string, nt NewTask) (Task, error) {
	if err := nt.Check(); err != nil {
		return Task{}, err
	}
	title := strings.TrimSpace(nt.Title)
	var t Task
	err := s.locked(ctx, func() ([]Event, error) {
		ms := nt.Milestone
		if m := milestoneTaskID.FindStringSubmatch(nt.ID); m != nil {
			if _, err := s.milestone(m[1]); err == nil {
				if ms != "" && ms != m[1] {
					return nil, fmt.Errorf("task id %s is in milestone %s, not %s: %w", nt.ID, m[1], ms, ErrInvalid)
				}
				ms = m[1]
			} else if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrInvalid) {
				return nil, err
			}
		}
		if ms != "" {
			if _, err := s.milestone(ms); err != nil {
				return nil, err
			}
		}
		id := nt.ID
		if id == "" {
			ids, err := s.ids("tasks")
			if err != nil {
				return nil, err
			}
			id = strconv.Itoa(nextNumber(ids, ""))
		} else if _, err := os.Stat(s.taskPath(id)); err == nil {
			return nil, fmt.Errorf("task %s exists already: %w", id, ErrInvalid)
		}
		now := s.now()
		t = Task{ID: id, Title: title, Status: Pending, Assignee: nt.Assignee, Milestone: ms, Created: now, Updated: now}
		if err := s.mkdir("tasks"); err != nil {
			return nil, err
		}
		if err := writeJSON(s.taskPath(id), t); err != nil {
			return nil, err
		}
		events := []Event{{Event: "task_added", ID: id, To: title, Actor: actor}}
		if t.Assignee != "" {
			events = append(events, Event{Event: "task_updated", ID: id, Field: "assignee", To: t.Assignee, Actor: actor})
		}
		if t.Milestone != "" {
			events = append(events, Event{Event: "task_updated", ID: id, Field: "milestone", To: t.Milestone, Actor: actor})
		}
		return events, nil
	})
	return t, err
}

// Tasks lists the tasks that pass f: numbered ids in number order first,
// then the others in string order.
func (s *FS) Tasks(_ context.Context, f Filter) ([]Task, error) {
	ids, err := s.ids("tasks")
	if err != nil {
		return nil, err
	}
	var out []Task
	for _, id := range ids {
		var t Task
		if err := readJSON(s.taskPath(id), &t); err != nil {
			return nil, err
		}
		if f.Match(t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// Task returns one task.
func (s *FS) Task(_ context.Context, id string) (Task, error) {
	var t Task
	if err := CheckID(id); err != nil {
		return t, err
	}
	err := readJSON(s.taskPath(id), &t)
	if errors.Is(err, os.ErrNotExist) {
		return t, fmt.Errorf("task %s: %w", id, ErrNotFound)
	}
	return t, err
}

// Update applies c to the task under the team's lock: one event per field
// that changed, none when nothing did. The file store has no remote to
// conflict with; Force is not needed.
func (s *FS) Update(ctx context.Context, actor, id string, c Change) (Task, error) {
	var t Task
	if err := c.Check(); err != nil {
		return t, err
	}
	err := s.locked(ctx, func() ([]Event, error) {
		var err error
		if t, err = s.Task(ctx, id); err != nil {
			return nil, err
		}
		var events []Event
		set := func(field string, cur *string, to *string) {
			if to != nil && *to != *cur {
				events = append(events, Event{Event: "task_updated", ID: id, Field: field, From: *cur, To: *to, Actor: actor})
				*cur = *to
			}
		}
		if c.Milestone != nil && *c.Milestone != "" {
			if _, err := s.milestone(*c.Milestone); err != nil {
				return nil, err
			}
		}
		if c.Status != nil {
			st := string(t.Status)
			set("status", &st, (*string)(c.Status))
			t.Status = Status(st)
		}
		set("assignee", &t.Assignee, c.Assignee)
		set("milestone", &t.Milestone, c.Milestone)
		if len(events) == 0 {
			return nil, nil
		}
		t.Updated = s.now()
		return events, writeJSON(s.taskPath(id), t)
	})
	return t, err
}

// Doc returns the task's document, "" when it has none.
func (s *FS) Doc(ctx context.Context, id string) (string, error) {
	if _, err := s.Task(ctx, id); err != nil {
		return "", err
	}
	b, err := os.ReadFile(s.docPath(id))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("task %s doc: %w", id, err)
	}
	return string(b), nil
}

// SetDoc replaces the task's document; the same text again is no change
// and no event.
func (s *FS) SetDoc(ctx context.Context, actor, id, text string) error {
	return s.locked(ctx, func() ([]Event, error) {
		old, err := s.Doc(ctx, id)
		if err != nil || old == text {
			return nil, err
		}
		if err := state.WriteFile(s.docPath(id), []byte(text), 0o600); err != nil {
			return nil, err
		}
		return []Event{{Event: "doc_updated", ID: id, Actor: actor}}, nil
	})
}

// Log returns the audit trail, oldest first: all of it, or task id's (see
// ReadEvents).
func (s *FS) Log(ctx context.Context, id string) ([]Event, error) {
	if id != "" {
		if _, err := s.Task(ctx, id); err != nil {
			return nil, err
		}
	}
	all, err := ReadEvents(s.EventsPath())
	var out []Event
	for _, e := range all {
		if e.OfTask(id) {
			out = append(out, e)
		}
	}
	return out, err
}

func (s *FS) mkdir(sub string) error { return state.MkdirPrivate(filepath.Join(s.dir, sub)) }

// ids lists the ids of the JSON files in sub: numbers (after prefix) in
// number order first, then the rest in string order.
func (s *FS) ids(sub string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(s.dir, sub))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		name := e.Name()
		if id, ok := strings.CutSuffix(name, ".json"); ok && !strings.HasPrefix(name, ".") && !e.IsDir() {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return idLess(ids[i], ids[j]) })
	return ids, nil
}

// idLess orders ids as people count: a leading non-digit prefix, then
// the number, then the rest ("2" before "10", "M2" before "M10").
func idLess(a, b string) bool {
	pa, na, ra := splitID(a)
	pb, nb, rb := splitID(b)
	if pa != pb {
		return pa < pb
	}
	if na != nb {
		return na < nb
	}
	return ra < rb
}

func splitID(id string) (prefix string, n int, rest string) {
	i := strings.IndexFunc(id, unicode.IsDigit)
	if i < 0 {
		return id, -1, ""
	}
	j := i
	for j < len(id) && id[j] >= '0' && id[j] <= '9' {
		j++
	}
	n, err := strconv.Atoi(id[i:j])
	if err != nil {
		return id, -1, ""
	}
	return id[:i], n, id[j:]
}

// nextNumber is one more than the largest id that is prefix and a number.
func nextNumber(ids []string, prefix string) int {
	max := 0
	for _, id := range ids {
		rest, ok := strings.CutPrefix(id, prefix)
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(rest); err == nil && n > max && strconv.Itoa(n) == rest {
			max = n
		}
	}
	return max + 1
}

// CheckID says whether id can name a task or milestone: it becomes a file
// name, so no empty id, no "/", no "..", no leading ".", no control
// characters, valid UTF-8, at most 200 bytes.
func CheckID(id string) error {
	bad := func(why string) error { return fmt.Errorf("id %q: %s: %w", id, why, ErrInvalid) }
	switch {
	case id == "":
		return bad("empty")
	case len(id) > 200:
		return bad("longer than 200 bytes")
	case !utf8.ValidString(id):
		return bad("not UTF-8")
	case strings.Contains(id, "/"), strings.Contains(id, `\`):
		return bad("holds a slash")
	case strings.Contains(id, ".."):
		return bad(`holds ".."`)
	case strings.HasPrefix(id, "."), strings.HasPrefix(id, "-"):
		return bad("starts with . or -")
	case strings.IndexFunc(id, unicode.IsControl) >= 0:
		return bad("holds a control character")
	}
	return nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %v: %w", path, err, ErrCorrupt)
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return state.WriteFile(path, append(b, '\n'), 0o600)
}

var _ Store = (*FS)(nil)
