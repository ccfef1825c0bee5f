package supervise

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

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
	return s.writeLazy(ctx, "put thread "+th.ID, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO threads (`+threadCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET created = excluded.created, turns = excluded.turns,
				last_answer = excluded.last_answer, same = excluded.same, blocked = excluded.blocked,
				blocked_why = excluded.blocked_why`,
			th.ID, fmtTime(th.Created), th.Turns, th.LastAnswer, th.Same, th.Blocked, th.BlockedWhy)
		return err
	})
}

// AddMessage records m in its thread, which it creates (Created m.At)
// when missing, and returns it with its Seq (AddMessageOnce).
func (s *Store) AddMessage(ctx context.Context, m Message) (Message, error) {
	m, _, err := s.AddMessageOnce(ctx, m)
	return m, err
}

// AddMessageOnce is AddMessage, once for an m with an ID: when a message
// of that id is recorded already, it returns that one and created false,
// and records nothing.
func (s *Store) AddMessageOnce(ctx context.Context, m Message) (_ Message, created bool, err error) {
	if m.Thread == "" {
		return Message{}, false, fmt.Errorf("message without a thread: %w", ErrBadInput)
	}
	err = s.write(ctx, "add message to "+m.Thread, func(tx *sql.Tx) error {
		if m.ID != "" {
			old, err := scanMessage(tx.QueryRowContext(ctx, `SELECT `+messageCols+` FROM messages m WHERE m.msg_id = ?`, m.ID))
			if err == nil {
				m = old
				return nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		created = true
		return insertMessage(ctx, tx, &m)
	})
	if err != nil {
		return Message{}, false, err
	}
	return m, created, nil
}

// insertMessage records m in its thread, creating the thread, and sets
// m's Seq. An m whose ID is recorded already is a constraint error (the
// unique index messages_id).
func insertMessage(ctx context.Context, tx *sql.Tx, m *Message) error {
	m.At = utc(m.At)
	if _, err := tx.ExecContext(ctx, `INSERT INTO threads (id, created) VALUES (?, ?) ON CONFLICT (id) DO NOTHING`,
		m.Thread, fmtTime(m.At)); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO messages (msg_id, thread, sender, recipient, text, at) VALUES (?, ?, ?, ?, ?, ?)`,
		m.ID, m.Thread, m.From, m.To, m.Text, fmtTime(m.At))
	if err != nil {
		return err
	}
	m.Seq, err = res.LastInsertId()
	return err
}

const messageCols = `m.seq, m.msg_id, m.thread, m.sender, m.recipient, m.text, m.at`

func scanMessage(row scanner) (Message, error) {
	var m Message
	err := row.Scan(&m.Seq, &m.ID, &m.Thread, &m.From, &m.To, &m.Text, timeCol{&m.At})
	return m, err
}

// MessageByID is the message recorded with id (ErrNotFound).
func (s *Store) MessageByID(ctx context.Context, id string) (Message, error) {
	m, err := scanMessage(s.db.QueryRowContext(ctx, `SELECT `+messageCols+` FROM messages m WHERE m.msg_id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Message{}, fmt.Errorf("message %s: %w", id, ErrNotFound)
	}
	return m, s.fail("message "+id, err)
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

// InboxMark changes whenever what the inbox's triggers follow from
// changes: the runtimes, the last message, the cursors (which only move
// forward), the open triggers. Each part is read from a small table or an
// index: it costs what is open, not what is stored. The Store of a
// running loop reads it once between two of its commits (Store.reads).
func (s *Store) InboxMark(ctx context.Context) (string, error) {
	s.cmu.Lock()
	if r, ok := s.kept(); ok && r.marked {
		defer s.cmu.Unlock()
		return r.inboxMark, nil
	}
	gen := s.gen
	s.cmu.Unlock()
	var mark string
	err := s.db.QueryRowContext(ctx, `SELECT
		(SELECT coalesce(group_concat(role, ','), '') FROM runtimes) || '|' ||
		(SELECT coalesce(max(seq), 0) FROM messages) || '|' ||
		(SELECT count(*) || ':' || coalesce(sum(seq), 0) FROM cursors) || '|' ||
		(SELECT coalesce(group_concat(seq, ','), '') FROM (SELECT seq FROM triggers WHERE `+openTerm+` ORDER BY seq))`).Scan(&mark)
	if err != nil {
		return "", s.fail("the inbox's mark", err)
	}
	s.keepRead(gen, func(r *reads) { r.inboxMark, r.marked = mark, true })
	return mark, nil
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
