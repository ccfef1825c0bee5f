package spend

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/dbfile"
)

// dbFile is the ledger's database in its Dir.
const dbFile = "ledger.db"

// schemaVersion is the ledger's schema (PRAGMA user_version).
const schemaVersion = 1

// schema is the ledger's tables:
//   - responses, each response read once, keyed by its agent, session and
//     id (a Claude message by its id alone: a forked session repeats its
//     messages under another session id), at its time in Unix
//     nanoseconds;
//   - sums, the responses summed by quarter hour (its start, Unix
//     seconds), role, agent and model: what party usage reads, so that
//     its cost follows the number of groups, not of responses;
//   - sources, each record file and how far it was read (offsets.Files),
//     and progress, how far the event log was read and the Codex threads
//     whose rollout was not found yet.
const schema = `
CREATE TABLE responses (
	agent TEXT NOT NULL, key_session TEXT NOT NULL, id TEXT NOT NULL,
	session TEXT NOT NULL, at INTEGER NOT NULL, role TEXT NOT NULL, model TEXT NOT NULL, more INTEGER NOT NULL,
	input INTEGER NOT NULL, output INTEGER NOT NULL, cache_read INTEGER NOT NULL, cache_write INTEGER NOT NULL, reasoning INTEGER NOT NULL,
	PRIMARY KEY (agent, key_session, id)) WITHOUT ROWID;
CREATE INDEX responses_at ON responses(at);
CREATE TABLE sums (
	bucket INTEGER NOT NULL, role TEXT NOT NULL, agent TEXT NOT NULL, model TEXT NOT NULL, responses INTEGER NOT NULL,
	input INTEGER NOT NULL, output INTEGER NOT NULL, cache_read INTEGER NOT NULL, cache_write INTEGER NOT NULL, reasoning INTEGER NOT NULL,
	PRIMARY KEY (bucket, role, agent, model)) WITHOUT ROWID;
CREATE TABLE sources (path TEXT PRIMARY KEY, state TEXT NOT NULL);
CREATE TABLE progress (id INTEGER PRIMARY KEY CHECK (id = 1), events INTEGER NOT NULL, pending TEXT NOT NULL);`

// ErrLedger is a ledger file party cannot use: not a database, corrupt,
// or written by a newer party. It is left as it is.
var ErrLedger = errors.New("spend ledger unusable")

// quarter is the span of the running sums' buckets. Every time zone's
// offset is a whole number of quarter hours, so a local day is whole
// buckets.
const quarter = 15 * time.Minute

// open opens the ledger's database, made (0600) and brought to the
// schema when new.
func (l Ledger) open() (*sql.DB, error) {
	abs, err := filepath.Abs(filepath.Join(l.Dir, dbFile))
	if err != nil {
		return nil, err
	}
	if err := dbfile.Create(abs); err != nil {
		return nil, fmt.Errorf("spend ledger %s: %w", abs, err)
	}
	db, err := dbfile.Open(abs)
	if err != nil {
		return nil, fmt.Errorf("spend ledger %s: %w", abs, err)
	}
	db.SetMaxOpenConns(1)
	if err := dbfile.WhileBusy(func() error { return migrate(db) }); err != nil {
		db.Close()
		return nil, fmt.Errorf("spend ledger %s: %w", abs, err)
	}
	return db, nil
}

// migrate makes the schema of a new ledger; a ledger of a newer party is
// ErrLedger.
func migrate(db *sql.DB) error {
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("%w: %v", ErrLedger, err)
	}
	switch {
	case v == schemaVersion:
		return nil
	case v > schemaVersion:
		return fmt.Errorf("%w: schema %d, this party knows %d: a newer party wrote it", ErrLedger, v, schemaVersion)
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback() // after Commit, a no-op
	// Another process may have made it while this one waited for the lock.
	if err := tx.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v == schemaVersion {
		return err
	}
	if _, err := tx.Exec(schema); err != nil {
		return err
	}
	if _, err := tx.Exec(fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// fail names the ledger in err.
func (l Ledger) fail(err error) error {
	return fmt.Errorf("spend ledger %s: %w", filepath.Join(l.Dir, dbFile), err)
}

// loadOffsets reads how far the ledger read; fresh says it never read (a
// new ledger).
func loadOffsets(tx *sql.Tx) (off offsets, fresh bool, err error) {
	off.Files = map[string]*source{}
	var pending string
	err = tx.QueryRow("SELECT events, pending FROM progress WHERE id = 1").Scan(&off.Events, &pending)
	if errors.Is(err, sql.ErrNoRows) {
		return off, true, nil
	}
	if err != nil {
		return off, false, err
	}
	if err := json.Unmarshal([]byte(pending), &off.Pending); err != nil {
		return off, false, fmt.Errorf("%w: progress: %v", ErrLedger, err)
	}
	rows, err := tx.Query("SELECT path, state FROM sources")
	if err != nil {
		return off, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var path, state string
		if err := rows.Scan(&path, &state); err != nil {
			return off, false, err
		}
		src := &source{}
		if err := json.Unmarshal([]byte(state), src); err != nil {
			return off, false, fmt.Errorf("%w: source %s: %v", ErrLedger, path, err)
		}
		off.Files[path] = src
	}
	return off, false, rows.Err()
}

// saveOffsets writes how far the ledger read.
func saveOffsets(tx *sql.Tx, off offsets) error {
	pending, err := json.Marshal(off.Pending)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(`INSERT INTO progress (id, events, pending) VALUES (1, ?, ?)
		ON CONFLICT (id) DO UPDATE SET events = excluded.events, pending = excluded.pending`, off.Events, string(pending)); err != nil {
		return err
	}
	for path, src := range off.Files {
		state, err := json.Marshal(src)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO sources (path, state) VALUES (?, ?)
			ON CONFLICT (path) DO UPDATE SET state = excluded.state`, path, string(state)); err != nil {
			return err
		}
	}
	return nil
}

// keySession is the session part of r's key: none for a Claude message,
// whose id is Claude's alone.
func keySession(r Response) string {
	if r.Agent == agent.Claude {
		return ""
	}
	return r.Session
}

// bucketOf is the start of the quarter hour of t, in Unix seconds.
func bucketOf(t time.Time) int64 { return t.Truncate(quarter).Unix() }

// addResponses adds rs to the ledger, each once: a response it holds
// already stays as it is, unless rs has a larger reading of it (Claude
// writes a message's usage with each of its content blocks), which takes
// its place, in the sums too. The sums change once per group, however
// many responses fall in it.
func addResponses(tx *sql.Tx, rs []Response) error {
	type key struct {
		agent       agent.Kind
		session, id string
	}
	// The largest reading of each response in rs, in the order first read.
	at := map[key]int{}
	var batch []Response
	for _, r := range rs {
		k := key{r.Agent, keySession(r), r.ID}
		if i, ok := at[k]; ok {
			if r.Total() > batch[i].Total() {
				batch[i] = r
			}
			continue
		}
		at[k] = len(batch)
		batch = append(batch, r)
	}
	sel, err := tx.Prepare(`SELECT ` + responseCols + ` FROM responses WHERE agent = ? AND key_session = ? AND id = ?`)
	if err != nil {
		return err
	}
	defer sel.Close()
	ins, err := tx.Prepare(`INSERT INTO responses (agent, key_session, id, session, at, role, model, more,
		input, output, cache_read, cache_write, reasoning) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (agent, key_session, id) DO UPDATE SET session = excluded.session, at = excluded.at, role = excluded.role,
		model = excluded.model, more = excluded.more, input = excluded.input, output = excluded.output,
		cache_read = excluded.cache_read, cache_write = excluded.cache_write, reasoning = excluded.reasoning`)
	if err != nil {
		return err
	}
	defer ins.Close()
	sums := deltas{}
	for _, r := range batch {
		ks := keySession(r)
		old, err := scanResponse(sel.QueryRow(string(r.Agent), ks, r.ID))
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		case r.Total() <= old.Total():
			continue
		default:
			sums.add(old, -1)
		}
		if _, err := ins.Exec(string(r.Agent), ks, r.ID, r.Session, r.Time.UnixNano(), r.Role, r.Model, r.More,
			r.Input, r.Output, r.CacheRead, r.CacheWrite, r.Reasoning); err != nil {
			return err
		}
		sums.add(r, 1)
	}
	return sums.save(tx)
}

// sumKey is a group of the running sums.
type sumKey struct {
	bucket             int64
	role, agent, model string
}

// delta is a change to one group's sum: responses and tokens.
type delta struct {
	n int64
	Tokens
}

// deltas are changes to the running sums, by group.
type deltas map[sumKey]*delta

// add adds r (sign 1) to its quarter hour's group, or takes it off (sign
// -1).
func (d deltas) add(r Response, sign int64) {
	k := sumKey{bucketOf(r.Time), r.Role, string(r.Agent), r.Model}
	g := d[k]
	if g == nil {
		g = &delta{}
		d[k] = g
	}
	g.n += sign
	g.Tokens.Add(Tokens{Input: sign * r.Input, Output: sign * r.Output, CacheRead: sign * r.CacheRead,
		CacheWrite: sign * r.CacheWrite, Reasoning: sign * r.Reasoning})
}

// save adds d to the sums.
func (d deltas) save(tx *sql.Tx) error {
	if len(d) == 0 {
		return nil
	}
	up, err := tx.Prepare(`INSERT INTO sums (bucket, role, agent, model, responses, input, output, cache_read, cache_write, reasoning)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (bucket, role, agent, model) DO UPDATE SET responses = responses + excluded.responses,
		input = input + excluded.input, output = output + excluded.output, cache_read = cache_read + excluded.cache_read,
		cache_write = cache_write + excluded.cache_write, reasoning = reasoning + excluded.reasoning`)
	if err != nil {
		return err
	}
	defer up.Close()
	for k, g := range d {
		if _, err := up.Exec(k.bucket, k.role, k.agent, k.model, g.n, g.Input, g.Output, g.CacheRead, g.CacheWrite, g.Reasoning); err != nil {
			return err
		}
	}
	return nil
}

// responseCols are a response's columns, in scanResponse's order.
const responseCols = `agent, session, id, at, role, model, more, input, output, cache_read, cache_write, reasoning`

type scanner interface{ Scan(...any) error }

func scanResponse(s scanner) (Response, error) {
	var r Response
	var kind string
	var at int64
	err := s.Scan(&kind, &r.Session, &r.ID, &at, &r.Role, &r.Model, &r.More,
		&r.Input, &r.Output, &r.CacheRead, &r.CacheWrite, &r.Reasoning)
	r.Agent, r.Time = agent.Kind(kind), time.Unix(0, at).UTC()
	return r, err
}

// Responses are the ledger's responses at or after since (zero: all), each
// once, oldest first: what a turn spent (TurnOf).
func (l Ledger) Responses(since time.Time) ([]Response, error) {
	db, err := l.open()
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return queryResponses(db, since, time.Time{})
}

// queryResponses are the responses at or after from and, unless to is
// zero, before to.
func queryResponses(db *sql.DB, from, to time.Time) ([]Response, error) {
	q, args := `SELECT `+responseCols+` FROM responses WHERE at >= ?`, []any{unixNano(from)}
	if !to.IsZero() {
		q, args = q+` AND at < ?`, append(args, to.UnixNano())
	}
	rows, err := db.Query(q+` ORDER BY at`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Response
	for rows.Next() {
		r, err := scanResponse(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// Sums are the ledger's responses at or after since (zero: all), summed:
// one Response per quarter hour, role, agent and model, its Count the
// responses it stands for, its Time the quarter hour's start; the
// responses of the quarter hour since falls in, after since, come one by
// one. Totals, Budgets and Counters take them as they take responses.
func (l Ledger) Sums(since time.Time) ([]Response, error) {
	db, err := l.open()
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return l.sums(db, since)
}

func (l Ledger) sums(db *sql.DB, since time.Time) ([]Response, error) {
	var out []Response
	var err error
	first := int64(0)
	if !since.IsZero() {
		whole := since.Truncate(quarter)
		if whole.Before(since) {
			whole = whole.Add(quarter)
		}
		if out, err = queryResponses(db, since, whole); err != nil {
			return nil, l.fail(err)
		}
		first = whole.Unix()
	}
	rows, err := db.Query(`SELECT bucket, role, agent, model, responses, input, output, cache_read, cache_write, reasoning
		FROM sums WHERE bucket >= ? AND responses > 0 ORDER BY bucket, role, agent, model`, first)
	if err != nil {
		return nil, l.fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var r Response
		var bucket int64
		var kind string
		if err := rows.Scan(&bucket, &r.Role, &kind, &r.Model, &r.Count,
			&r.Input, &r.Output, &r.CacheRead, &r.CacheWrite, &r.Reasoning); err != nil {
			return nil, l.fail(err)
		}
		r.Time, r.Agent = time.Unix(bucket, 0).UTC(), agent.Kind(kind)
		out = append(out, r)
	}
	return out, rows.Err()
}
