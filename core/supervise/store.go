package supervise

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// StoreFile is the name of the supervisor's database in the session's
// state directory.
const StoreFile = "supervise.db"

// ErrConflictState is a SaveTrigger whose trigger is no longer in the
// status the caller read it in: another writer moved it first.
var ErrConflictState = errors.New("trigger status changed meanwhile")

// Store is the supervisor's durable store: a SQLite database in WAL mode
// that the daemon, the CLI and the agents' calls write concurrently, from
// as many processes. Each read-modify-write is one BEGIN IMMEDIATE
// transaction, so writers queue on the database's lock (for up to the busy
// timeout) instead of failing or deadlocking.
//
// Times are stored as RFC 3339 text in UTC with nine fractional digits
// (fixed width, so that the text orders as the times do); the zero time is
// stored as "". What is read back is UTC, to the nanosecond.
type Store struct {
	db   *sql.DB
	path string
	// wmu queues this Store's own write transactions, so that they wait
	// on each other here rather than in SQLite's sleeping busy handler.
	wmu sync.Mutex
	// cmu guards changed, closed and replaced by each commit of this
	// Store: what a long-polling reader of the API waits on.
	cmu     sync.Mutex
	changed chan struct{}
}

// Changed is closed at the next commit of this Store (not another
// process's): take it before reading, then wait on it for anything newer.
func (s *Store) Changed() <-chan struct{} {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}

// committed wakes the waiters of Changed.
func (s *Store) committed() {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// migrations are the schema's versions: migrations[i] takes a database
// from PRAGMA user_version i to i+1. Append only: a released one never
// changes.
var migrations = []string{`
CREATE TABLE runtimes (
	id             TEXT PRIMARY KEY,
	role           TEXT NOT NULL UNIQUE,
	workspace      TEXT NOT NULL DEFAULT '',
	agent          TEXT NOT NULL DEFAULT '',
	agent_session  TEXT NOT NULL DEFAULT '',
	tmux_session   TEXT NOT NULL DEFAULT '',
	tmux_window    TEXT NOT NULL DEFAULT '',
	tmux_pane      TEXT NOT NULL DEFAULT '',
	target         TEXT NOT NULL DEFAULT '',
	pid            INTEGER NOT NULL DEFAULT 0,
	status         TEXT NOT NULL DEFAULT '',
	operator_busy  INTEGER NOT NULL DEFAULT 0,
	last_heartbeat TEXT NOT NULL DEFAULT '',
	heartbeat      TEXT NOT NULL DEFAULT '',
	last_trigger   TEXT NOT NULL DEFAULT '',
	token_hash     TEXT NOT NULL DEFAULT '',
	updated        TEXT NOT NULL DEFAULT ''
);
CREATE TABLE triggers (
	seq          INTEGER PRIMARY KEY AUTOINCREMENT,
	id           TEXT NOT NULL UNIQUE,
	role         TEXT NOT NULL,
	thread       TEXT NOT NULL,
	status       TEXT NOT NULL,
	created      TEXT NOT NULL,
	updated      TEXT NOT NULL,
	delivered_at TEXT NOT NULL DEFAULT '',
	body         TEXT NOT NULL
);
CREATE INDEX triggers_status ON triggers(status);
CREATE INDEX triggers_role ON triggers(role, status);
CREATE INDEX triggers_thread ON triggers(thread);
CREATE INDEX triggers_created ON triggers(created);
CREATE INDEX triggers_delivered ON triggers(role, delivered_at);
CREATE TABLE transitions (
	seq         INTEGER PRIMARY KEY AUTOINCREMENT,
	trigger_id  TEXT NOT NULL REFERENCES triggers(id) ON DELETE CASCADE,
	at          TEXT NOT NULL,
	from_status TEXT NOT NULL,
	to_status   TEXT NOT NULL,
	event       TEXT NOT NULL
);
CREATE INDEX transitions_trigger ON transitions(trigger_id, seq);
CREATE TABLE threads (
	id          TEXT PRIMARY KEY,
	created     TEXT NOT NULL,
	turns       INTEGER NOT NULL DEFAULT 0,
	last_answer TEXT NOT NULL DEFAULT '',
	same        INTEGER NOT NULL DEFAULT 0,
	blocked     INTEGER NOT NULL DEFAULT 0,
	blocked_why TEXT NOT NULL DEFAULT ''
);
CREATE TABLE messages (
	seq       INTEGER PRIMARY KEY AUTOINCREMENT,
	thread    TEXT NOT NULL REFERENCES threads(id),
	sender    TEXT NOT NULL,
	recipient TEXT NOT NULL,
	text      TEXT NOT NULL,
	at        TEXT NOT NULL
);
CREATE INDEX messages_thread ON messages(thread, seq);
CREATE INDEX messages_recipient ON messages(recipient, thread, seq);
CREATE TABLE cursors (
	role   TEXT NOT NULL,
	thread TEXT NOT NULL,
	seq    INTEGER NOT NULL,
	at     TEXT NOT NULL,
	PRIMARY KEY (role, thread)
);
CREATE TABLE audit (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT,
	at         TEXT NOT NULL,
	kind       TEXT NOT NULL,
	trigger_id TEXT NOT NULL DEFAULT '',
	agent      TEXT NOT NULL DEFAULT '',
	thread     TEXT NOT NULL DEFAULT '',
	result     TEXT NOT NULL DEFAULT '',
	detail     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_trigger ON audit(trigger_id);
`,
	// 2: a runtime's recovery record (JSON: offline since, restarts).
	`ALTER TABLE runtimes ADD COLUMN recovery TEXT NOT NULL DEFAULT '';`,
	// 3: what is open, and what was delivered lately, each found from an
	// index of its own rows, whatever the history holds (triggersQuery,
	// sentQuery: their WHERE repeats the index's).
	`CREATE INDEX triggers_open ON triggers(seq) WHERE ` + openTerm + `;
CREATE INDEX triggers_sent ON triggers(delivered_at) WHERE delivered_at <> '';`,
	// 4: the audit's column of the role named for it, as everywhere else.
	`ALTER TABLE audit RENAME COLUMN agent TO role;`,
	// 5: what retention prunes, found by its time (Prune).
	`CREATE INDEX triggers_closed ON triggers(updated) WHERE NOT ` + openTerm + `;
CREATE INDEX audit_at ON audit(at);`,
}

// openTerm is the condition of an open trigger, with its statuses as
// literals: SQLite uses the partial index triggers_open only for a query
// whose WHERE holds this very term (a bound parameter would not do).
const openTerm = `status NOT IN ('` + string(Completed) + `', '` + string(TFailed) + `')`

// dsnParams are the connection's settings: a writer waits up to 10 s for
// another's lock; WAL lets readers go on while one writes; synchronous
// FULL makes every commit durable, power loss included (a trigger marked
// Reached must stay so: it is never delivered twice); every transaction
// begins IMMEDIATE, taking the write lock up front, so that two
// read-modify-writes cannot deadlock on upgrading their read locks.
const dsnParams = "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_txlock=immediate"

// Open opens the store at path, creating it (and its directory, 0700; the
// file is 0600) when missing and bringing its schema up to date. A file
// that is not a database, is corrupt, holds tables party did not make or
// was written by a newer party is an error wrapping ErrStore, and is left
// as it is.
func Open(path string) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("supervise store: no path: %w", ErrBadInput)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("supervise store %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("supervise store %s: %w", path, err)
	}
	// SQLite would create the file with the umask's mode: make it first,
	// owner-only (its -wal and -shm files take the same mode). An empty
	// file is an empty database to SQLite.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		if err := f.Close(); err != nil {
			return nil, fmt.Errorf("supervise store %s: %w", path, err)
		}
	case !errors.Is(err, fs.ErrExist):
		return nil, fmt.Errorf("supervise store %s: %w", path, err)
	}
	if err := whileBusy(func() error { return checkOurs(abs, path) }); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", "file:"+uriPath(abs)+"?"+dsnParams)
	if err != nil {
		return nil, fmt.Errorf("supervise store %s: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(2)
	s := &Store{db: db, path: path}
	if err := whileBusy(func() error { return s.migrate(context.Background()) }); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// openBusy bounds how long Open waits for a file another connection is
// setting up, as long as a writer waits for a lock (busy_timeout).
const openBusy = 10 * time.Second

// whileBusy runs f again while it fails SQLITE_BUSY, for at most
// openBusy. SQLite answers BUSY at once, without its busy handler, to a
// connection that opens the file while another switches it to WAL or
// recovers its WAL: TestStoresWriteConcurrently's eight openers met it
// in a loaded make test.
func whileBusy(f func() error) error {
	deadline := time.Now().Add(openBusy)
	for pause := 5 * time.Millisecond; ; pause = min(pause*2, 100*time.Millisecond) {
		err := f()
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		time.Sleep(pause)
	}
}

// OpenRecords opens the store at path to read it only, as a supervisor
// last left it: what party's commands show while none runs. It never
// creates, migrates or writes the file (a write fails). No file is
// ErrNotFound; a file of another schema version than this party's is
// ErrStore.
func OpenRecords(path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("supervise store %s: %w", path, err)
	}
	if _, err := os.Stat(abs); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("supervise store %s: no records: %w", path, ErrNotFound)
		}
		return nil, fmt.Errorf("supervise store %s: %w", path, err)
	}
	if err := checkOurs(abs, path); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", "file:"+uriPath(abs)+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, fmt.Errorf("supervise store %s: %w", path, err)
	}
	s := &Store{db: db, path: path}
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		db.Close()
		return nil, s.storeErr("open", err)
	}
	if v != len(migrations) {
		db.Close()
		return nil, fmt.Errorf("supervise store %s: schema %d, this party reads %d (a supervisor of this party brings it up to date): %w", path, v, len(migrations), ErrStore)
	}
	return s, nil
}

// checkOurs looks at an existing database read-only, before the store's
// own connection switches it to WAL: another program's SQLite file (tables
// party did not make), a newer party's or a file that is no database is
// refused untouched.
func checkOurs(abs, path string) error {
	db, err := sql.Open("sqlite", "file:"+uriPath(abs)+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("supervise store %s: %w", path, err)
	}
	defer db.Close()
	s := &Store{path: path}
	// One statement, one snapshot: another party migrating at once commits
	// its tables and their version together.
	var v, n int
	if err := db.QueryRow("SELECT (SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_master)").Scan(&v, &n); err != nil {
		return s.storeErr("open", err)
	}
	switch {
	case v > len(migrations):
		return s.newerErr(v)
	case v == 0 && n > 0:
		return s.foreignErr()
	}
	return nil
}

// uriPath escapes the characters that a file: URI would read otherwise.
func uriPath(p string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(p))
}

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

// Path is the store's file, as Open was given it.
func (s *Store) Path() string { return s.path }

// migrate brings the schema to the newest version, one migration per
// transaction; another process migrating at the same time waits for the
// lock and then finds the work done.
func (s *Store) migrate(ctx context.Context) error {
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return s.storeErr("open", err)
	}
	if v > len(migrations) {
		return s.newerErr(v)
	}
	for v < len(migrations) {
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
				return err
			}
			if v > len(migrations) {
				return s.newerErr(v)
			}
			if v == len(migrations) {
				return nil
			}
			if v == 0 {
				var n int
				if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
					return err
				}
				if n > 0 {
					return s.foreignErr()
				}
			}
			if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
				return fmt.Errorf("schema %d: %w", v+1, err)
			}
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
				return err
			}
			v++
			return nil
		})
		if err != nil {
			return s.storeErr("migrate", err)
		}
	}
	return nil
}

func (s *Store) foreignErr() error {
	return fmt.Errorf("supervise store %s holds tables party did not make: %w", s.path, ErrStore)
}

func (s *Store) newerErr(v int) error {
	return fmt.Errorf("supervise store %s was written by a newer party (schema %d, this one knows %d): %w", s.path, v, len(migrations), ErrStore)
}

// storeErr is err from opening the database: it makes it unusable.
func (s *Store) storeErr(what string, err error) error {
	if errors.Is(err, ErrStore) {
		return err
	}
	return fmt.Errorf("supervise store %s: %s: %w: %w", s.path, what, ErrStore, err)
}

// fail wraps an error of the database with the store's path and what was
// being done; a corrupt database is also ErrStore. The store's own errors
// (ErrNotFound, ErrConflictState …) pass unchanged.
func (s *Store) fail(what string, err error) error {
	if err == nil {
		return nil
	}
	for _, own := range []error{ErrNotFound, ErrConflictState, ErrIDConflict, ErrToken, ErrBadInput, ErrStore} {
		if errors.Is(err, own) {
			return err
		}
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("supervise store %s: %s: %w: %w", s.path, what, ErrStore, err)
		}
	}
	return fmt.Errorf("supervise store %s: %s: %w", s.path, what, err)
}

// write runs fn in one write transaction, committed when fn returns nil.
func (s *Store) write(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	return s.fail(what, s.inTx(ctx, fn))
}

// inTx runs fn in one write transaction (BEGIN IMMEDIATE, from the DSN's
// _txlock), committed when fn returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.committed()
	return nil
}

// Times: fixed-width RFC 3339 in UTC, "" for the zero time.

const timeText = "2006-01-02T15:04:05.000000000Z07:00"

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeText)
}

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad time %q: %w", s, err)
	}
	return t.UTC(), nil
}

// utc is t in UTC without a monotonic reading, or the zero time.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// timeCol scans a time column.
type timeCol struct{ t *time.Time }

func (c timeCol) Scan(v any) error {
	var s string
	switch v := v.(type) {
	case nil:
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return fmt.Errorf("time column holds %T", v)
	}
	t, err := parseTime(s)
	*c.t = t
	return err
}

type scanner interface{ Scan(dest ...any) error }

// Runtimes

const runtimeCols = `id, role, workspace, agent, agent_session, tmux_session, tmux_window, tmux_pane,
	target, pid, status, operator_busy, last_heartbeat, heartbeat, last_trigger, token_hash, updated, recovery`

func scanRuntime(row scanner) (Runtime, error) {
	var r Runtime
	err := row.Scan(&r.ID, &r.Role, &r.Workspace, &r.Agent, &r.AgentSession, &r.Session, &r.Window, &r.Pane,
		&r.Target, &r.PID, &r.Status, &r.OperatorBusy, timeCol{&r.LastHeartbeat}, &r.Heartbeat, &r.LastTrigger,
		&r.TokenHash, timeCol{&r.Updated}, jsonCol{&r.Recovery})
	return r, err
}

// PutRuntime records r under its ID, replacing what was recorded. A role
// has one runtime: another one recorded for r's role (under an older ID)
// is replaced too. The heartbeat never goes back: a record read before a
// heartbeat (Heartbeat, from another goroutine or process) and put after
// it keeps the newer one.
func (s *Store) PutRuntime(ctx context.Context, r Runtime) error {
	if r.ID == "" || r.Role == "" {
		return fmt.Errorf("runtime %q of role %q: no id or role: %w", r.ID, r.Role, ErrBadInput)
	}
	return s.write(ctx, "put runtime "+r.ID, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM runtimes WHERE role = ? AND id <> ?`, r.Role, r.ID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO runtimes (`+runtimeCols+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET role = excluded.role, workspace = excluded.workspace,
				agent = excluded.agent, agent_session = excluded.agent_session,
				tmux_session = excluded.tmux_session, tmux_window = excluded.tmux_window,
				tmux_pane = excluded.tmux_pane, target = excluded.target, pid = excluded.pid,
				status = excluded.status, operator_busy = excluded.operator_busy,
				last_heartbeat = max(excluded.last_heartbeat, runtimes.last_heartbeat),
				heartbeat = CASE WHEN excluded.last_heartbeat >= runtimes.last_heartbeat
					THEN excluded.heartbeat ELSE runtimes.heartbeat END,
				last_trigger = excluded.last_trigger, token_hash = excluded.token_hash,
				updated = excluded.updated, recovery = excluded.recovery`,
			r.ID, r.Role, r.Workspace, r.Agent, r.AgentSession, r.Session, r.Window, r.Pane,
			r.Target, r.PID, string(r.Status), r.OperatorBusy, fmtTime(r.LastHeartbeat), r.Heartbeat, r.LastTrigger,
			r.TokenHash, fmtTime(r.Updated), recoveryText(r.Recovery))
		return err
	})
}

// Runtimes are the recorded runtimes, by role.
func (s *Store) Runtimes(ctx context.Context) ([]Runtime, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+runtimeCols+` FROM runtimes ORDER BY role`)
	if err != nil {
		return nil, s.fail("runtimes", err)
	}
	rs, err := collect(rows, scanRuntime)
	return rs, s.fail("runtimes", err)
}

// Runtime is the runtime of role (ErrNotFound).
func (s *Store) Runtime(ctx context.Context, role string) (Runtime, error) {
	r, err := scanRuntime(s.db.QueryRowContext(ctx, `SELECT `+runtimeCols+` FROM runtimes WHERE role = ?`, role))
	if errors.Is(err, sql.ErrNoRows) {
		return Runtime{}, fmt.Errorf("runtime %q: %w", role, ErrNotFound)
	}
	return r, s.fail("runtime "+role, err)
}

// RuntimeByToken is the runtime whose TokenHash is the SHA-256 of token;
// ErrToken when token is "" or no runtime holds it. Every runtime's hash
// is compared, in constant time.
func (s *Store) RuntimeByToken(ctx context.Context, token string) (Runtime, error) {
	if token == "" {
		return Runtime{}, fmt.Errorf("no runtime token: %w", ErrToken)
	}
	sum := sha256.Sum256([]byte(token))
	want := []byte(hex.EncodeToString(sum[:]))
	rs, err := s.Runtimes(ctx)
	if err != nil {
		return Runtime{}, err
	}
	found := -1
	for i, r := range rs {
		if subtle.ConstantTimeCompare(want, []byte(strings.ToLower(r.TokenHash))) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Runtime{}, fmt.Errorf("no runtime holds the token: %w", ErrToken)
	}
	return rs[found], nil
}

// DeleteRuntime forgets the runtime id; one not recorded is no error.
func (s *Store) DeleteRuntime(ctx context.Context, id string) error {
	return s.write(ctx, "delete runtime "+id, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM runtimes WHERE id = ?`, id)
		return err
	})
}

// Heartbeat records that role's runtime said status at at (ErrNotFound).
func (s *Store) Heartbeat(ctx context.Context, role, status string, at time.Time) error {
	return s.write(ctx, "heartbeat "+role, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runtimes SET last_heartbeat = ?, heartbeat = ? WHERE role = ?`,
			fmtTime(at), status, role)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return fmt.Errorf("runtime %q: %w", role, ErrNotFound)
		}
		return nil
	})
}

// SetLiveness sets the signs of life of role's runtime (Recovery.Live)
// and nothing else, read and written in one transaction: the loop's stall
// watch runs beside workers that put the whole record (a spawn, a
// restart), and a record it read a moment before would undo theirs.
func (s *Store) SetLiveness(ctx context.Context, role string, live Liveness) error {
	return s.write(ctx, "liveness "+role, func(tx *sql.Tx) error {
		var rec Recovery
		if err := tx.QueryRowContext(ctx, `SELECT recovery FROM runtimes WHERE role = ?`, role).Scan(jsonCol{&rec}); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("runtime %q: %w", role, ErrNotFound)
			}
			return err
		}
		rec.Live = live
		_, err := tx.ExecContext(ctx, `UPDATE runtimes SET recovery = ? WHERE role = ?`, recoveryText(rec), role)
		return err
	})
}

// Triggers

// Transition is one change of a trigger's status.
type Transition struct {
	Seq     int64         `json:"seq"`
	Trigger string        `json:"trigger_id"`
	At      time.Time     `json:"at"`
	From    TriggerStatus `json:"from"`
	To      TriggerStatus `json:"to"`
	Event   string        `json:"event"`
}

// TriggerFilter selects triggers: each field that is set must match.
type TriggerFilter struct {
	Status TriggerStatus
	Role   string
	Thread string
	// Open keeps the triggers not completed nor failed.
	Open bool
	// Involving keeps the triggers to this role or from it (what a
	// runtime may see of the list).
	Involving string
	// Since keeps the triggers created at or after it.
	Since time.Time
	// Before keeps the triggers recorded before the trigger of this id
	// (ErrNotFound when there is none): the page before one that began
	// with it.
	Before string
	// Limit is the most to return, the newest of them (still oldest
	// first); 0 is all.
	Limit int
}

// utcTrigger is t with its times in UTC, as it is stored.
func utcTrigger(t Trigger) Trigger {
	for _, p := range []*time.Time{&t.Created, &t.Updated, &t.DeferredAt, &t.QuietSince, &t.NextAt,
		&t.DeliveredAt, &t.AckBy, &t.AckedAt, &t.CompletedAt} {
		*p = utc(*p)
	}
	return t
}

func scanTrigger(row scanner) (Trigger, error) {
	var body string
	if err := row.Scan(&body); err != nil {
		return Trigger{}, err
	}
	// An older party stored the role as agent_id: read either.
	var t struct {
		Trigger
		AgentID string `json:"agent_id"`
	}
	if err := json.Unmarshal([]byte(body), &t); err != nil {
		return Trigger{}, fmt.Errorf("trigger body: %w", err)
	}
	if t.Role == "" {
		t.Role = t.AgentID
	}
	return utcTrigger(t.Trigger), nil
}

// AddTrigger records a new trigger (Status "" is Queued), its first
// transition (event "created") and the audit events, in one transaction,
// and returns it with created true. A trigger recorded under the same id
// with the same Role, Thread, Reason and Text is returned as it is
// recorded, created false, and nothing is written; with other content it
// is ErrIDConflict.
func (s *Store) AddTrigger(ctx context.Context, t Trigger, audit ...AuditEvent) (Trigger, bool, error) {
	if t.ID == "" {
		return Trigger{}, false, fmt.Errorf("trigger without an id: %w", ErrBadInput)
	}
	t = utcTrigger(t)
	if t.Status == unknownTrg {
		t.Status = Queued
	}
	body, err := json.Marshal(t)
	if err != nil {
		return Trigger{}, false, fmt.Errorf("trigger %s: %w", t.ID, err)
	}
	var stored Trigger
	created := false
	err = s.write(ctx, "add trigger "+t.ID, func(tx *sql.Tx) error {
		old, err := scanTrigger(tx.QueryRowContext(ctx, `SELECT body FROM triggers WHERE id = ?`, t.ID))
		switch {
		case err == nil:
			if old.Role != t.Role || old.Thread != t.Thread || old.Reason != t.Reason || old.Text != t.Text {
				return fmt.Errorf("trigger %s: %w", t.ID, ErrIDConflict)
			}
			stored = old
			return nil
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO triggers (id, role, thread, status, created, updated, delivered_at, body)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			t.ID, t.Role, t.Thread, string(t.Status), fmtTime(t.Created), fmtTime(t.Updated), fmtTime(t.DeliveredAt), string(body)); err != nil {
			return err
		}
		at := t.Created
		if at.IsZero() {
			at = t.Updated
		}
		if err := addTransition(ctx, tx, t.ID, at, unknownTrg, t.Status, "created"); err != nil {
			return err
		}
		if err := addAudit(ctx, tx, audit); err != nil {
			return err
		}
		stored, created = t, true
		return nil
	})
	if err != nil {
		return Trigger{}, false, err
	}
	return stored, created, nil
}

func addTransition(ctx context.Context, tx *sql.Tx, id string, at time.Time, from, to TriggerStatus, event string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO transitions (trigger_id, at, from_status, to_status, event) VALUES (?, ?, ?, ?, ?)`,
		id, fmtTime(at), string(from), string(to), event)
	return err
}

// Trigger is the recorded trigger id (ErrNotFound).
func (s *Store) Trigger(ctx context.Context, id string) (Trigger, error) {
	t, err := scanTrigger(s.db.QueryRowContext(ctx, `SELECT body FROM triggers WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Trigger{}, fmt.Errorf("trigger %s: %w", id, ErrNotFound)
	}
	return t, s.fail("trigger "+id, err)
}

// Triggers are the triggers f selects, oldest first.
func (s *Store) Triggers(ctx context.Context, f TriggerFilter) ([]Trigger, error) {
	q, args := triggersQuery(f)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.fail("triggers", err)
	}
	ts, err := collect(rows, scanTrigger)
	if err != nil {
		return nil, s.fail("triggers", err)
	}
	if f.Before != "" && len(ts) == 0 {
		if _, err := s.Trigger(ctx, f.Before); err != nil {
			return nil, err
		}
	}
	if f.Limit > 0 {
		slices.Reverse(ts) // the newest were taken first
	}
	return ts, nil
}

// triggersQuery is the query of Triggers(f): only the terms f asks for,
// so that SQLite can take the index that fits them.
func triggersQuery(f TriggerFilter) (string, []any) {
	var where []string
	var args []any
	if f.Status != unknownTrg {
		where, args = append(where, "status = ?"), append(args, string(f.Status))
	}
	if f.Role != "" {
		where, args = append(where, "role = ?"), append(args, f.Role)
	}
	if f.Thread != "" {
		where, args = append(where, "thread = ?"), append(args, f.Thread)
	}
	if f.Open {
		where = append(where, openTerm)
	}
	if f.Involving != "" {
		where, args = append(where, "(role = ? OR json_extract(body, '$.from') = ?)"), append(args, f.Involving, f.Involving)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "created >= ?"), append(args, fmtTime(f.Since))
	}
	if f.Before != "" {
		where, args = append(where, "seq < (SELECT seq FROM triggers WHERE id = ?)"), append(args, f.Before)
	}
	q := `SELECT body FROM triggers`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	if f.Limit > 0 {
		return q + ` ORDER BY seq DESC LIMIT ?`, append(args, f.Limit)
	}
	return q + ` ORDER BY seq`, args
}

// SaveTrigger records t if its recorded status is still from (else
// ErrConflictState; ErrNotFound when there is none), with the transition
// from → t.Status at t.Updated for event and the audit events, in one
// transaction.
func (s *Store) SaveTrigger(ctx context.Context, t Trigger, from TriggerStatus, event string, audit ...AuditEvent) error {
	return s.SaveTriggerWith(ctx, t, from, event, nil, audit...)
}

// SaveTriggerWith is SaveTrigger that also records msg (when not nil) in
// its thread, in the same transaction: a fallback's answer is the
// trigger's result and a message of the thread, both or neither.
func (s *Store) SaveTriggerWith(ctx context.Context, t Trigger, from TriggerStatus, event string, msg *Message, audit ...AuditEvent) error {
	t = utcTrigger(t)
	body, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("trigger %s: %w", t.ID, err)
	}
	return s.write(ctx, "save trigger "+t.ID, func(tx *sql.Tx) error {
		if msg != nil {
			if err := insertMessage(ctx, tx, msg); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `UPDATE triggers SET role = ?, thread = ?, status = ?, updated = ?, delivered_at = ?, body = ?
			WHERE id = ? AND status = ?`,
			t.Role, t.Thread, string(t.Status), fmtTime(t.Updated), fmtTime(t.DeliveredAt), string(body), t.ID, string(from))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			var now string
			err := tx.QueryRowContext(ctx, `SELECT status FROM triggers WHERE id = ?`, t.ID).Scan(&now)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("trigger %s: %w", t.ID, ErrNotFound)
			}
			if err != nil {
				return err
			}
			return fmt.Errorf("trigger %s is %s, not %s: %w", t.ID, now, from, ErrConflictState)
		}
		if err := addTransition(ctx, tx, t.ID, t.Updated, from, t.Status, event); err != nil {
			return err
		}
		return addAudit(ctx, tx, audit)
	})
}

// Transitions are trigger id's transitions, in order (ErrNotFound).
func (s *Store) Transitions(ctx context.Context, id string) ([]Transition, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, trigger_id, at, from_status, to_status, event
		FROM transitions WHERE trigger_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, s.fail("transitions "+id, err)
	}
	trs, err := collect(rows, func(row scanner) (Transition, error) {
		var tr Transition
		err := row.Scan(&tr.Seq, &tr.Trigger, timeCol{&tr.At}, &tr.From, &tr.To, &tr.Event)
		return tr, err
	})
	if err != nil {
		return nil, s.fail("transitions "+id, err)
	}
	if len(trs) == 0 {
		if _, err := s.Trigger(ctx, id); err != nil {
			return nil, err
		}
	}
	return trs, nil
}

// CountSent is how many triggers of role (any role when "") in thread (any
// thread when "") were delivered at or after since.
func (s *Store) CountSent(ctx context.Context, role, thread string, since time.Time) (int, error) {
	n, _, err := s.Sent(ctx, role, thread, since)
	return n, err
}

// Sent is how many triggers of role (any role when "") in thread (any
// thread when "") were delivered at or after since, and the oldest of
// those deliveries.
func (s *Store) Sent(ctx context.Context, role, thread string, since time.Time) (int, time.Time, error) {
	var n int
	var oldest sql.NullString
	q, args := sentQuery(role, thread, since)
	if err := s.db.QueryRowContext(ctx, q, args...).Scan(&n, &oldest); err != nil {
		return 0, time.Time{}, s.fail("count sent", err)
	}
	var at time.Time
	if oldest.Valid {
		var err error
		if at, err = parseTime(oldest.String); err != nil {
			return 0, time.Time{}, s.fail("count sent", err)
		}
	}
	return n, at, nil
}

// sentQuery is the query of Sent: the deliveries in the window, found
// from an index of delivery times (with the role's, when it is given),
// never by reading every trigger stored.
func sentQuery(role, thread string, since time.Time) (string, []any) {
	q := `SELECT count(*), min(delivered_at) FROM triggers WHERE delivered_at <> '' AND delivered_at >= ?`
	args := []any{fmtTime(since)}
	if role != "" {
		q, args = q+` AND role = ?`, append(args, role)
	}
	if thread != "" {
		q, args = q+` AND thread = ?`, append(args, thread)
	}
	return q, args
}

// Threads, messages, cursors

const threadCols = `id, created, turns, last_answer, same, blocked, blocked_why`

func scanThread(row scanner) (Thread, error) {
	var th Thread
	err := row.Scan(&th.ID, timeCol{&th.Created}, &th.Turns, &th.LastAnswer, &th.Same, &th.Blocked, &th.BlockedWhy)
	return th, err
}

// Thread is the thread id (ErrNotFound).
func (s *Store) Thread(ctx context.Context, id string) (Thread, error) {
	th, err := scanThread(s.db.QueryRowContext(ctx, `SELECT `+threadCols+` FROM threads WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Thread{}, fmt.Errorf("thread %s: %w", id, ErrNotFound)
	}
	return th, s.fail("thread "+id, err)
}

// Threads are the threads, oldest first.
func (s *Store) Threads(ctx context.Context) ([]Thread, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+threadCols+` FROM threads ORDER BY created, id`)
	if err != nil {
		return nil, s.fail("threads", err)
	}
	ths, err := collect(rows, scanThread)
	return ths, s.fail("threads", err)
}

// PutThread records th, replacing what was recorded under its id.
func (s *Store) PutThread(ctx context.Context, th Thread) error {
	if th.ID == "" {
		return fmt.Errorf("thread without an id: %w", ErrBadInput)
	}
	return s.write(ctx, "put thread "+th.ID, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO threads (`+threadCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET created = excluded.created, turns = excluded.turns,
				last_answer = excluded.last_answer, same = excluded.same, blocked = excluded.blocked,
				blocked_why = excluded.blocked_why`,
			th.ID, fmtTime(th.Created), th.Turns, th.LastAnswer, th.Same, th.Blocked, th.BlockedWhy)
		return err
	})
}

// AddMessage records m in its thread, which it creates (Created m.At)
// when missing, and returns it with its Seq.
func (s *Store) AddMessage(ctx context.Context, m Message) (Message, error) {
	if m.Thread == "" {
		return Message{}, fmt.Errorf("message without a thread: %w", ErrBadInput)
	}
	err := s.write(ctx, "add message to "+m.Thread, func(tx *sql.Tx) error { return insertMessage(ctx, tx, &m) })
	if err != nil {
		return Message{}, err
	}
	return m, nil
}

// insertMessage records m in its thread, creating the thread, and sets
// m's Seq.
func insertMessage(ctx context.Context, tx *sql.Tx, m *Message) error {
	m.At = utc(m.At)
	if _, err := tx.ExecContext(ctx, `INSERT INTO threads (id, created) VALUES (?, ?) ON CONFLICT (id) DO NOTHING`,
		m.Thread, fmtTime(m.At)); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO messages (thread, sender, recipient, text, at) VALUES (?, ?, ?, ?, ?)`,
		m.Thread, m.From, m.To, m.Text, fmtTime(m.At))
	if err != nil {
		return err
	}
	m.Seq, err = res.LastInsertId()
	return err
}

const messageCols = `m.seq, m.thread, m.sender, m.recipient, m.text, m.at`

func scanMessage(row scanner) (Message, error) {
	var m Message
	err := row.Scan(&m.Seq, &m.Thread, &m.From, &m.To, &m.Text, timeCol{&m.At})
	return m, err
}

// Messages are thread's messages after seq afterSeq, in order.
func (s *Store) Messages(ctx context.Context, thread string, afterSeq int64) ([]Message, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+messageCols+` FROM messages m
		WHERE m.thread = ? AND m.seq > ? ORDER BY m.seq`, thread, afterSeq)
	if err != nil {
		return nil, s.fail("messages of "+thread, err)
	}
	ms, err := collect(rows, scanMessage)
	return ms, s.fail("messages of "+thread, err)
}

// Unread are the messages to role after its cursor, in thread ("" is
// every thread), in order.
func (s *Store) Unread(ctx context.Context, role, thread string) ([]Message, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+messageCols+` FROM messages m
		LEFT JOIN cursors c ON c.role = m.recipient AND c.thread = m.thread
		WHERE m.recipient = ? AND (? = '' OR m.thread = ?) AND m.seq > coalesce(c.seq, 0)
		ORDER BY m.seq`, role, thread, thread)
	if err != nil {
		return nil, s.fail("unread of "+role, err)
	}
	ms, err := collect(rows, scanMessage)
	return ms, s.fail("unread of "+role, err)
}

// Prune deletes, oldest first and at most limit of each, the closed
// triggers last updated before before (with their transitions) and the
// audit rows older than that, in one transaction; it returns how many
// rows it deleted. Open triggers, threads, messages and cursors stay. A
// trigger's id is free again once it is pruned.
func (s *Store) Prune(ctx context.Context, before time.Time, limit int) (int, error) {
	n := 0
	err := s.write(ctx, "prune", func(tx *sql.Tx) error {
		cut := fmtTime(before)
		old := `SELECT id FROM triggers WHERE NOT ` + openTerm + ` AND updated < ? ORDER BY updated LIMIT ?`
		if _, err := tx.ExecContext(ctx, `DELETE FROM transitions WHERE trigger_id IN (`+old+`)`, cut, limit); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM triggers WHERE id IN (`+old+`)`, cut, limit)
		if err != nil {
			return err
		}
		triggers, _ := res.RowsAffected()
		res, err = tx.ExecContext(ctx, `DELETE FROM audit WHERE seq IN (SELECT seq FROM audit WHERE at < ? ORDER BY at LIMIT ?)`, cut, limit)
		if err != nil {
			return err
		}
		audit, _ := res.RowsAffected()
		n = int(triggers + audit)
		return nil
	})
	return n, err
}

// InboxMark changes whenever what the inbox's triggers follow from
// changes: the runtimes, the last message, the cursors (which only move
// forward), the open triggers. Each part is read from a small table or an
// index: it costs what is open, not what is stored.
func (s *Store) InboxMark(ctx context.Context) (string, error) {
	var mark string
	err := s.db.QueryRowContext(ctx, `SELECT
		(SELECT coalesce(group_concat(role, ','), '') FROM runtimes) || '|' ||
		(SELECT coalesce(max(seq), 0) FROM messages) || '|' ||
		(SELECT count(*) || ':' || coalesce(sum(seq), 0) FROM cursors) || '|' ||
		(SELECT coalesce(group_concat(seq, ','), '') FROM (SELECT seq FROM triggers WHERE `+openTerm+` ORDER BY seq))`).Scan(&mark)
	return mark, s.fail("the inbox's mark", err)
}

// Cursor is how far a role has read a thread.
type Cursor struct {
	Role   string    `json:"role"`
	Thread string    `json:"thread_id"`
	Seq    int64     `json:"seq"`
	At     time.Time `json:"at"`
}

// Advance moves role's cursor in thread to seq, at at, if that is
// forward; moved says whether it was.
func (s *Store) Advance(ctx context.Context, role, thread string, seq int64, at time.Time) (moved bool, err error) {
	if seq <= 0 {
		return false, nil
	}
	err = s.write(ctx, "advance "+role+" in "+thread, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO cursors (role, thread, seq, at) VALUES (?, ?, ?, ?)
			ON CONFLICT (role, thread) DO UPDATE SET seq = excluded.seq, at = excluded.at
			WHERE excluded.seq > cursors.seq`, role, thread, seq, fmtTime(at))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		moved = n > 0
		return err
	})
	return moved, err
}

// Cursors are role's cursors, by thread.
func (s *Store) Cursors(ctx context.Context, role string) ([]Cursor, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT role, thread, seq, at FROM cursors WHERE role = ? ORDER BY thread`, role)
	if err != nil {
		return nil, s.fail("cursors of "+role, err)
	}
	cs, err := collect(rows, func(row scanner) (Cursor, error) {
		var c Cursor
		err := row.Scan(&c.Role, &c.Thread, &c.Seq, timeCol{&c.At})
		return c, err
	})
	return cs, s.fail("cursors of "+role, err)
}

// Audit trail

// Audit appends evs to the audit trail, in one transaction.
func (s *Store) Audit(ctx context.Context, evs ...AuditEvent) error {
	if len(evs) == 0 {
		return nil
	}
	return s.write(ctx, "audit", func(tx *sql.Tx) error { return addAudit(ctx, tx, evs) })
}

func addAudit(ctx context.Context, tx *sql.Tx, evs []AuditEvent) error {
	for _, e := range evs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO audit (at, kind, trigger_id, role, thread, result, detail)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, fmtTime(e.At), e.Kind, e.Trigger, e.Role, e.Thread, e.Result, e.Detail); err != nil {
			return err
		}
	}
	return nil
}

// Events are the audit events after seq afterSeq, in order, at most limit
// of them (0: all).
func (s *Store) Events(ctx context.Context, afterSeq int64, limit int) ([]AuditEvent, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.db.QueryContext(ctx, `SELECT seq, at, kind, trigger_id, role, thread, result, detail
		FROM audit WHERE seq > ? ORDER BY seq LIMIT ?`, afterSeq, limit)
	if err != nil {
		return nil, s.fail("events", err)
	}
	evs, err := collect(rows, func(row scanner) (AuditEvent, error) {
		var e AuditEvent
		err := row.Scan(&e.Seq, timeCol{&e.At}, &e.Kind, &e.Trigger, &e.Role, &e.Thread, &e.Result, &e.Detail)
		return e, err
	})
	return evs, s.fail("events", err)
}

// collect scans every row with scan; never nil without an error.
func collect[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// recoveryText is a runtime's recovery record as stored: JSON, "" for none.
func recoveryText(r Recovery) string {
	if r.zero() {
		return ""
	}
	b, _ := json.Marshal(r)
	return string(b)
}

// jsonCol scans a JSON text column ("" is the zero value) into v.
type jsonCol struct{ v any }

func (c jsonCol) Scan(src any) error {
	var b []byte
	switch x := src.(type) {
	case nil:
		return nil
	case string:
		b = []byte(x)
	case []byte:
		b = x
	default:
		return fmt.Errorf("json column: %T", src)
	}
	if len(b) == 0 {
		return nil
	}
	return json.Unmarshal(b, c.v)
}
