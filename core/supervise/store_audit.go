package supervise

import (
	"context"
	"database/sql"
	"time"
)

// Prune deletes, oldest first and at most limit of each, the closed
// triggers last updated before before (with their transitions) and the
// audit rows older than that, in one transaction; it returns how many
// rows it deleted. Open triggers, threads, messages and cursors stay. A
// trigger's id is free again once it is pruned. keep, when set, is given
// the audit rows first, in the transaction: when it fails, nothing is
// deleted.
func (s *Store) Prune(ctx context.Context, before time.Time, limit int, keep func([]AuditEvent) error) (int, error) {
	n := 0
	err := s.writeLazy(ctx, "prune", func(tx *sql.Tx) error {
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
		oldAudit := `SELECT seq FROM audit WHERE at < ? ORDER BY at, seq LIMIT ?`
		if keep != nil {
			rows, err := tx.QueryContext(ctx, `SELECT seq, at, kind, trigger_id, role, thread, result, detail
				FROM audit WHERE seq IN (`+oldAudit+`) ORDER BY seq`, cut, limit)
			if err != nil {
				return err
			}
			evs, err := collect(rows, scanAudit)
			if err != nil {
				return err
			}
			if err := keep(evs); err != nil {
				return err
			}
		}
		res, err = tx.ExecContext(ctx, `DELETE FROM audit WHERE seq IN (`+oldAudit+`)`, cut, limit)
		if err != nil {
			return err
		}
		audit, _ := res.RowsAffected()
		n = int(triggers + audit)
		return nil
	})
	return n, err
}

// Audit appends evs to the audit trail, in one transaction.
func (s *Store) Audit(ctx context.Context, evs ...AuditEvent) error {
	if len(evs) == 0 {
		return nil
	}
	return s.writeLazy(ctx, "audit", func(tx *sql.Tx) error { return addAudit(ctx, tx, evs) })
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
	evs, err := collect(rows, scanAudit)
	return evs, s.fail("events", err)
}

func scanAudit(row scanner) (AuditEvent, error) {
	var e AuditEvent
	err := row.Scan(&e.Seq, timeCol{&e.At}, &e.Kind, &e.Trigger, &e.Role, &e.Thread, &e.Result, &e.Detail)
	return e, err
}
