// Package dbfile opens party's SQLite files (modernc.org/sqlite, no cgo):
// owner-only files, WAL, a busy timeout, writes that take the lock at
// BEGIN, and the retry that opening a file another connection is setting
// up needs. The supervisor's store and the spend ledger use it.
package dbfile

import (
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// params are the connection's settings: a writer waits up to 10 s for
// another's lock; WAL lets readers go on while one writes; synchronous
// FULL makes every commit durable, power loss included (a trigger marked
// Reached must stay so: it is never delivered twice; the supervisor's
// store lowers it for the writes it works out again, supervise.Lazy);
// every transaction
// begins IMMEDIATE, taking the write lock up front, so that two
// read-modify-writes cannot deadlock on upgrading their read locks.
const params = "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_txlock=immediate"

// Create makes the file at abs (and its directory, 0700) when missing,
// owner-only: SQLite would create it with the umask's mode, and its -wal
// and -shm files take the file's. An empty file is an empty database.
func Create(abs string) error {
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		return f.Close()
	case errors.Is(err, fs.ErrExist):
		return nil
	}
	return err
}

// Open opens the database file at abs to read and write (Create it
// first).
func Open(abs string) (*sql.DB, error) {
	return sql.Open("sqlite", "file:"+uriPath(abs)+"?"+params)
}

// OpenReadOnly opens the database file at abs to read only: a write
// fails.
func OpenReadOnly(abs string) (*sql.DB, error) {
	return sql.Open("sqlite", "file:"+uriPath(abs)+"?mode=ro&_pragma=busy_timeout(10000)")
}

// uriPath escapes the characters that a file: URI would read otherwise.
func uriPath(p string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(p))
}

// openBusy bounds how long WhileBusy retries, as long as a writer waits
// for a lock (busy_timeout).
const openBusy = 10 * time.Second

// WhileBusy runs f again while it fails SQLITE_BUSY, for at most
// openBusy. SQLite answers BUSY at once, without its busy handler, to a
// connection that opens the file while another switches it to WAL or
// recovers its WAL (eight openers at once met it in a loaded make test).
//
// Its pauses are the wall clock's (time.Sleep), the one wait in core not
// through a clock.Clock: it waits for another process to let go of the
// file, which it does in real time, as the driver's own busy_timeout
// waits for it (in SQLite, on the wall clock) once the file is open; the
// stores it opens (supervise.Open, spend's ledger) take no clock.
func WhileBusy(f func() error) error {
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
