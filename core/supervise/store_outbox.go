package supervise

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

const outboxCols = `id, thread, sender, origin, host, session, recipient, text, at, state, attempts, next_at, code, error, forwarded_at, remote_seq`

func scanOutbound(row scanner) (Outbound, error) {
	var o Outbound
	err := row.Scan(&o.ID, &o.Thread, &o.From, &o.Origin, &o.Host, &o.Session, &o.Role, &o.Text, timeCol{&o.At},
		&o.State, &o.Attempts, timeCol{&o.NextAt}, &o.Code, &o.Error, timeCol{&o.ForwardedAt}, &o.Seq)
	return o, err
}

// AddOutbound records o in the outbox, once: when an entry of its id is
// recorded already, it returns that one and created false.
func (s *Store) AddOutbound(ctx context.Context, o Outbound) (_ Outbound, created bool, err error) {
	if o.ID == "" || o.Host == "" || o.Role == "" || o.Thread == "" {
		return Outbound{}, false, fmt.Errorf("outbox entry without an id, host, role or thread: %w", ErrBadInput)
	}
	o.At = utc(o.At)
	err = s.write(ctx, "add to the outbox "+o.ID, func(tx *sql.Tx) error {
		old, err := scanOutbound(tx.QueryRowContext(ctx, `SELECT `+outboxCols+` FROM outbox WHERE id = ?`, o.ID))
		if err == nil {
			o = old
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		created = true
		_, err = tx.ExecContext(ctx, `INSERT INTO outbox (`+outboxCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			o.ID, o.Thread, o.From, o.Origin, o.Host, o.Session, o.Role, o.Text, fmtTime(o.At),
			string(o.State), o.Attempts, fmtTime(o.NextAt), o.Code, o.Error, fmtTime(o.ForwardedAt), o.Seq)
		return err
	})
	if err != nil {
		return Outbound{}, false, err
	}
	return o, created, nil
}

// SaveOutbound records how o's forwarding stands (its state, attempts,
// next try, last failure, where it went), with evs in the audit trail,
// in one durable transaction: a try is saved before it is made.
// ErrConflictState when o is no longer pending as recorded; ErrNotFound
// when there is no such entry.
func (s *Store) SaveOutbound(ctx context.Context, o Outbound, evs ...AuditEvent) error {
	return s.write(ctx, "save outbox entry "+o.ID, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE outbox SET state = ?, attempts = ?, next_at = ?, code = ?, error = ?,
			forwarded_at = ?, remote_seq = ? WHERE id = ? AND state = ?`,
			string(o.State), o.Attempts, fmtTime(o.NextAt), o.Code, o.Error, fmtTime(o.ForwardedAt), o.Seq, o.ID, string(FwdPending))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			var st string
			if err := tx.QueryRowContext(ctx, `SELECT state FROM outbox WHERE id = ?`, o.ID).Scan(&st); errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("outbox entry %s: %w", o.ID, ErrNotFound)
			}
			return fmt.Errorf("outbox entry %s is %s: %w", o.ID, st, ErrConflictState)
		}
		return addAudit(ctx, tx, evs)
	})
}

// Outbound is the outbox entry id (ErrNotFound).
func (s *Store) Outbound(ctx context.Context, id string) (Outbound, error) {
	o, err := scanOutbound(s.db.QueryRowContext(ctx, `SELECT `+outboxCols+` FROM outbox WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Outbound{}, fmt.Errorf("outbox entry %s: %w", id, ErrNotFound)
	}
	return o, s.fail("outbox entry "+id, err)
}

// Outbox are the outbox's entries of thread ("": every thread), oldest
// first.
func (s *Store) Outbox(ctx context.Context, thread string) ([]Outbound, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+outboxCols+` FROM outbox WHERE ? = '' OR thread = ? ORDER BY seq`, thread, thread)
	if err != nil {
		return nil, s.fail("the outbox", err)
	}
	out, err := collect(rows, scanOutbound)
	return out, s.fail("the outbox", err)
}

// Pending are the outbox's pending entries, oldest first (an index of
// their own: what was forwarded costs nothing).
func (s *Store) Pending(ctx context.Context) ([]Outbound, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+outboxCols+` FROM outbox WHERE state = '`+string(FwdPending)+`' ORDER BY seq`)
	if err != nil {
		return nil, s.fail("the outbox", err)
	}
	out, err := collect(rows, scanOutbound)
	return out, s.fail("the outbox", err)
}
