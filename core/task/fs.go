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
	return &FS{dir: dir, clock: clk, lock: state.Locker{Dir: filepath.Join(dir, "locks")}}
}

// CreateFS makes a new team in dir with its team.json and its first event.
func CreateFS(ctx context.Context, dir string, t Team, actor string, clk clock.Clock) (*FS, error) {
	if err := state.MkdirPrivate(dir); err != nil {
		return nil, err
	}
	s := newFS(dir, clk)
	err := s.locked(ctx, func() ([]Event, func() error, error) {
		path := filepath.Join(dir, "team.json")
		if _, err := os.Stat(path); err == nil {
			return nil, nil, fmt.Errorf("team %s exists already: %w", t.ID, ErrInvalid)
		}
		return []Event{{Event: "team_created", ID: t.ID, To: t.Name, Actor: actor}}, func() error { return writeJSON(path, t) }, nil
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

// locked runs change under the team's lock: change reads what it needs
// and returns the events of the change and commit, which writes it. The
// events are appended first, in one write, stamped with the time; only
// then does commit run, and should it fail the log is cut back to where it
// was: the audit trail never misses a change that was made, nor lists one
// that was not (short of a crash between the two).
func (s *FS) locked(ctx context.Context, change func() ([]Event, func() error, error)) error {
	release, err := s.lock.Lock(ctx, "team")
	if err != nil {
		return err
	}
	defer release()
	events, commit, err := change()
	if err != nil || len(events) == 0 {
		return err
	}
	for i := range events {
		if events[i].TS.IsZero() {
			events[i].TS = s.now()
		}
	}
	undo, err := AppendEvents(s.EventsPath(), events)
	if err != nil {
		return err
	}
	if commit != nil {
		if err := commit(); err != nil {
			if uerr := undo(); uerr != nil {
				return fmt.Errorf("%w (and its events stay in %s: %v)", err, s.EventsPath(), uerr)
			}
			return err
		}
	}
	return nil
}

// AppendEvents appends events to the log at path in one write, after
// repairing a torn last line (repairLog). A failed write (a full disk)
// is cut back off, so the next append never lands after half a line.
// undo cuts the appended lines off again.
func AppendEvents(path string, events []Event) (undo func() error, err error) {
	var b []byte
	for _, e := range events {
		line, err := json.Marshal(e)
		if err != nil {
			return nil, fmt.Errorf("event: %w", err)
		}
		b = append(append(b, line...), '\n')
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	size, err := repairLog(f, path)
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteAt(b, size); err != nil {
		_ = f.Truncate(size)
		return nil, fmt.Errorf("audit log %s: %w (nothing was changed)", path, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Truncate(size)
		return nil, fmt.Errorf("audit log %s: %w (nothing was changed)", path, err)
	}
	return func() error { return os.Truncate(path, size) }, nil
}

// repairLog returns the size of the log f (at path) up to its last whole
// line: a last line without its newline (an append a crash cut short) is
// moved to path+".torn", where it is kept, and cut off the log, so the
// next event starts a line of its own.
func repairLog(f *os.File, path string) (int64, error) {
	whole, torn, err := state.TornTail(f)
	if err != nil {
		return 0, fmt.Errorf("audit log %s: %w", path, err)
	}
	if len(torn) == 0 {
		return whole, nil
	}
	kept, err := os.OpenFile(path+".torn", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err == nil {
		_, err = kept.Write(append(torn, '\n'))
		if cerr := kept.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return 0, fmt.Errorf("audit log %s ends in a torn line that could not be kept aside (%v): %w", path, err, ErrCorrupt)
	}
	if err := f.Truncate(whole); err != nil {
		return 0, fmt.Errorf("audit log %s: %w", path, err)
	}
	return whole, nil
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
	err := s.locked(ctx, func() ([]Event, func() error, error) {
		ids, err := s.ids("milestones")
		if err != nil {
			return nil, nil, err
		}
		now := s.now()
		m = Milestone{ID: "M" + strconv.Itoa(NextNumber(ids, "M")), Name: name, Created: now, Updated: now}
		if err := s.mkdir("milestones"); err != nil {
			return nil, nil, err
		}
		return []Event{{Event: "milestone_added", ID: m.ID, To: name, Actor: actor}},
			func() error { return writeJSON(s.milestonePath(m.ID), m) }, nil
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
	err := s.locked(ctx, func() ([]Event, func() error, error) {
		var err error
		if m, err = s.milestone(id); err != nil || m.Done {
			return nil, nil, err
		}
		m.Done, m.Updated = true, s.now()
		return []Event{{Event: "milestone_done", ID: id, Field: "done", From: "false", To: "true", Actor: actor}},
			func() error { return writeJSON(s.milestonePath(id), m) }, nil
	})
	return m, err
}

// milestoneTaskID is a task id of the form <milestone>-<n>.
var milestoneTaskID = regexp.MustCompile(`^(.+)-([1-9][0-9]*)$`)

// AddTask adds a task: with the next free number as its id when t.ID is
// empty. An id <milestone>-<n> of an existing milestone puts the task in
// that milestone, and one of party's form (M3-1) needs its milestone; any
// other id is taken as it is.
func (s *FS) AddTask(ctx context.Context, actor string, nt NewTask) (Task, error) {
	if err := nt.Check(); err != nil {
		return Task{}, err
	}
	title := strings.TrimSpace(nt.Title)
	var t Task
	err := s.locked(ctx, func() ([]Event, func() error, error) {
		ms := nt.Milestone
		if of, must := MilestoneOfID(nt.ID); of != "" {
			switch _, err := s.milestone(of); {
			case err == nil:
				if ms != "" && ms != of {
					return nil, nil, fmt.Errorf("task id %s is in milestone %s, not %s: %w", nt.ID, of, ms, ErrInvalid)
				}
				ms = of
			case must && errors.Is(err, ErrNotFound):
				return nil, nil, fmt.Errorf("task id %s puts the task in milestone %s, which does not exist (party pm milestone add makes it; or choose another id): %w", nt.ID, of, ErrNotFound)
			case !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrInvalid):
				return nil, nil, err
			}
		}
		if ms != "" {
			if _, err := s.milestone(ms); err != nil {
				return nil, nil, err
			}
		}
		id := nt.ID
		if id == "" {
			ids, err := s.ids("tasks")
			if err != nil {
				return nil, nil, err
			}
			id = strconv.Itoa(NextNumber(ids, ""))
		} else if _, err := os.Stat(s.taskPath(id)); err == nil {
			return nil, nil, fmt.Errorf("task %s exists already: %w", id, ErrInvalid)
		}
		now := s.now()
		t = Task{ID: id, Title: title, Status: Pending, Assignee: nt.Assignee, Milestone: ms, Created: now, Updated: now}
		if err := s.mkdir("tasks"); err != nil {
			return nil, nil, err
		}
		events := []Event{{Event: "task_added", ID: id, To: title, Actor: actor}}
		if t.Assignee != "" {
			events = append(events, Event{Event: "task_updated", ID: id, Field: "assignee", To: t.Assignee, Actor: actor})
		}
		if t.Milestone != "" {
			events = append(events, Event{Event: "task_updated", ID: id, Field: "milestone", To: t.Milestone, Actor: actor})
		}
		return events, func() error { return writeJSON(s.taskPath(id), t) }, nil
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
	err := s.locked(ctx, func() ([]Event, func() error, error) {
		var err error
		if t, err = s.Task(ctx, id); err != nil {
			return nil, nil, err
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
				return nil, nil, err
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
			return nil, nil, nil
		}
		t.Updated = s.now()
		return events, func() error { return writeJSON(s.taskPath(id), t) }, nil
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
	return s.setDoc(ctx, actor, id, nil, text)
}

// SetDocFrom replaces the task's document with text if it is still base,
// the document text was made from; else it changes nothing and returns a
// *DocConflictError.
func (s *FS) SetDocFrom(ctx context.Context, actor, id, base, text string) error {
	return s.setDoc(ctx, actor, id, &base, text)
}

func (s *FS) setDoc(ctx context.Context, actor, id string, base *string, text string) error {
	return s.locked(ctx, func() ([]Event, func() error, error) {
		old, err := s.Doc(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		if base != nil && old != *base {
			return nil, nil, &DocConflictError{ID: id}
		}
		if old == text {
			return nil, nil, nil
		}
		return []Event{{Event: "doc_updated", ID: id, Actor: actor}},
			func() error { return state.WriteFile(s.docPath(id), []byte(text), 0o600) }, nil
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

// CompareIDs orders ids as idLess does, for slices.SortFunc (the GitHub
// store lists in the file store's order).
func CompareIDs(a, b string) int {
	switch {
	case idLess(a, b):
		return -1
	case idLess(b, a):
		return 1
	}
	return 0
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

// NextNumber is one more than the largest id that is prefix and a number.
func NextNumber(ids []string, prefix string) int {
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
