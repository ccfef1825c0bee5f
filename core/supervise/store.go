package supervise

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/partyhq/party/core/dbfile"
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
	// synced counts the Durable commits (a test's measure of the syncs).
	synced atomic.Int64
	// cmu guards changed, closed and replaced by each commit of this
	// Store: what a long-polling reader of the API waits on; gen, which
	// counts the commits; keep and reads.
	cmu     sync.Mutex
	changed chan struct{}
	gen     uint64
	// reads is what the Store read since its last commit, kept until the
	// next one when keep is set (keepReads: the Store of a running Loop,
	// which asks the same several times a pass). Only the daemon writes
	// the database, through the Store its loop and API share, so nothing
	// else can change what it read (the API is the one door); a Store of
	// another kind keeps nothing.
	keep  bool
	reads reads
}

// reads are what a Store read at its generation gen (Store.reads).
type reads struct {
	gen       uint64
	runtimes  []Runtime // nil: not read
	inboxMark string
	marked    bool // inboxMark was read
	noneOpen  bool // Triggers found no open trigger
}

// kept is what s read at its current generation, if it keeps its reads.
// The caller holds cmu.
func (s *Store) kept() (*reads, bool) {
	return &s.reads, s.keep && s.reads.gen == s.gen
}

// keepRead keeps, with f, what s read at generation gen, unless a commit
// came since (what it read may be old).
func (s *Store) keepRead(gen uint64, f func(r *reads)) {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	if !s.keep || gen != s.gen {
		return
	}
	if s.reads.gen != gen {
		s.reads = reads{gen: gen}
	}
	f(&s.reads)
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

// keepReads makes s keep what it read until its next commit: s is the
// one writer of its database (the Store of a running Loop).
func (s *Store) keepReads() {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	s.keep = true
}

// generation counts the commits of s: a read of s is as good as new
// while it stays the same. Take it before the read.
func (s *Store) generation() uint64 {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	return s.gen
}

// committed counts a commit and wakes the waiters of Changed.
func (s *Store) committed() {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	s.gen++
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
	// 6: whether a runtime's agent has party's MCP tools.
	`ALTER TABLE runtimes ADD COLUMN tools INTEGER NOT NULL DEFAULT 0;`,
	// 7: a message's idempotency key, taken once (a message another
	// host's outbox forwards again after a lost answer), and the outbox of
	// the messages to other hosts (store_outbox.go).
	`ALTER TABLE messages ADD COLUMN msg_id TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX messages_id ON messages(msg_id) WHERE msg_id <> '';
CREATE TABLE outbox (
	seq          INTEGER PRIMARY KEY AUTOINCREMENT,
	id           TEXT NOT NULL UNIQUE,
	thread       TEXT NOT NULL,
	sender       TEXT NOT NULL,
	origin       TEXT NOT NULL,
	host         TEXT NOT NULL,
	session      TEXT NOT NULL DEFAULT '',
	recipient    TEXT NOT NULL,
	text         TEXT NOT NULL,
	at           TEXT NOT NULL,
	state        TEXT NOT NULL,
	attempts     INTEGER NOT NULL DEFAULT 0,
	next_at      TEXT NOT NULL DEFAULT '',
	code         TEXT NOT NULL DEFAULT '',
	error        TEXT NOT NULL DEFAULT '',
	forwarded_at TEXT NOT NULL DEFAULT '',
	remote_seq   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX outbox_pending ON outbox(seq) WHERE state = '` + string(FwdPending) + `';
CREATE INDEX outbox_thread ON outbox(thread, seq);`,
}

// openTerm is the condition of an open trigger, with its statuses as
// literals: SQLite uses the partial index triggers_open only for a query
// whose WHERE holds this very term (a bound parameter would not do).
const openTerm = `status NOT IN ('` + string(Completed) + `', '` + string(TFailed) + `')`

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
	if err := dbfile.Create(abs); err != nil {
		return nil, fmt.Errorf("supervise store %s: %w", path, err)
	}
	if err := dbfile.WhileBusy(func() error { return checkOurs(abs, path) }); err != nil {
		return nil, err
	}
	db, err := dbfile.Open(abs)
	if err != nil {
		return nil, fmt.Errorf("supervise store %s: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(2)
	s := &Store{db: db, path: path}
	if err := dbfile.WhileBusy(func() error { return s.migrate(context.Background()) }); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
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
	db, err := dbfile.OpenReadOnly(abs)
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
	db, err := dbfile.OpenReadOnly(abs)
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
		err := s.inTx(ctx, Durable, func(tx *sql.Tx) error {
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

// write runs fn in one durable write transaction, committed when fn
// returns nil: what a client was told is kept, and the steps that decide
// whether a text goes to an agent (see Durable).
func (s *Store) write(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	return s.fail(what, s.inTx(ctx, Durable, fn))
}

// writeLazy is write for a record the supervisor works out again after a
// crash (a runtime's status, a heartbeat, an audit line): not synced.
func (s *Store) writeLazy(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	return s.fail(what, s.inTx(ctx, Lazy, fn))
}

// Durability is how a write transaction is committed. Every commit
// survives the supervisor's crash (a kill -9: SQLite's WAL is written
// before the commit returns); a Durable one survives the machine's too
// (power loss: synchronous FULL syncs the WAL at each commit), a Lazy one
// is synced with the next Durable commit or checkpoint (synchronous
// NORMAL), and one the machine's crash takes back is worked out again.
type Durability int

// The Durability of a write.
const (
	Durable Durability = iota
	Lazy
)

// synchronous sets a connection's SQLite synchronous level for d.
var synchronous = map[Durability]string{Durable: "PRAGMA synchronous = FULL", Lazy: "PRAGMA synchronous = NORMAL"}

// inTx runs fn in one write transaction (BEGIN IMMEDIATE, from the DSN's
// _txlock) committed with d when fn returns nil.
func (s *Store) inTx(ctx context.Context, d Durability, fn func(tx *sql.Tx) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	// A pool's connection keeps the level it was last given: each write
	// says its own (an in-memory setting, no I/O).
	if _, err := conn.ExecContext(ctx, synchronous[d]); err != nil {
		return err
	}
	tx, err := conn.BeginTx(ctx, nil)
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
	if d == Durable {
		s.synced.Add(1)
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
