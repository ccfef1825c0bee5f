package supervise

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

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
	// The loop asks for the open ones several times a pass: the Store of
	// a running loop keeps, until its next commit, that there are none
	// (Store.reads).
	allOpen := f == TriggerFilter{Open: true}
	s.cmu.Lock()
	if r, ok := s.kept(); ok && allOpen && r.noneOpen {
		s.cmu.Unlock()
		return []Trigger{}, nil
	}
	gen := s.gen
	s.cmu.Unlock()
	q, args := triggersQuery(f)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.fail("triggers", err)
	}
	ts, err := collect(rows, scanTrigger)
	if err != nil {
		return nil, s.fail("triggers", err)
	}
	if allOpen && len(ts) == 0 {
		s.keepRead(gen, func(r *reads) { r.noneOpen = true })
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
	return s.fail("save trigger "+t.ID, s.inTx(ctx, stepDurability(from, t, msg), func(tx *sql.Tx) error {
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
	}))
}

// stepDurability is how the step of a trigger from status from to t is
// committed. The steps that decide whether its text goes to the agent are
// Durable: the record of a delivery before its paste (triggering), the
// delivery's report (the text reached the agent: never again), a failure,
// a fallback's answer (a message of its thread). The others (acked,
// completed; deferred or queued again, as a deferral is looked at again)
// are Lazy: taken back by a machine's crash, the restart finds the
// trigger where it stood before and works it out again from what the
// agent shows, never sending it twice.
func stepDurability(from TriggerStatus, t Trigger, msg *Message) Durability {
	if msg != nil || from == TTriggering {
		return Durable
	}
	switch t.Status {
	case Acked, Completed, TDeferred, Queued:
		return Lazy
	}
	return Durable
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
