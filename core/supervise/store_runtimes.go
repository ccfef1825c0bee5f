package supervise

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/partyhq/party/core/state"
)

type scanner interface{ Scan(dest ...any) error }

// Runtimes

const runtimeCols = `id, role, workspace, agent, agent_session, tmux_session, tmux_window, tmux_pane,
	target, pid, status, operator_busy, last_heartbeat, heartbeat, last_trigger, token_hash, updated, recovery, tools`

func scanRuntime(row scanner) (Runtime, error) {
	var r Runtime
	err := row.Scan(&r.ID, &r.Role, &r.Workspace, &r.Agent, &r.AgentSession, &r.Session, &r.Window, &r.Pane,
		&r.Target, &r.PID, &r.Status, &r.OperatorBusy, timeCol{&r.LastHeartbeat}, &r.Heartbeat, &r.LastTrigger,
		&r.TokenHash, timeCol{&r.Updated}, jsonCol{&r.Recovery}, &r.Tools)
	return r, err
}

// PutRuntime records r under its ID, replacing what was recorded. A role
// has one runtime: another one recorded for r's role (under an older ID)
// is replaced too. The heartbeat never goes back: a record read before a
// heartbeat (Heartbeat, from another goroutine or process) and put after
// it keeps the newer one.
func (s *Store) PutRuntime(ctx context.Context, r Runtime) error {
	return s.putRuntime(ctx, r, Durable)
}

// putStatus is PutRuntime for a runtime's status as a pass of the loop
// works it out (Lazy: the next pass works it out again).
func (s *Store) putStatus(ctx context.Context, r Runtime) error {
	return s.putRuntime(ctx, r, Lazy)
}

func (s *Store) putRuntime(ctx context.Context, r Runtime, d Durability) error {
	if r.ID == "" || r.Role == "" {
		return fmt.Errorf("runtime %q of role %q: no id or role: %w", r.ID, r.Role, ErrBadInput)
	}
	return s.fail("put runtime "+r.ID, s.inTx(ctx, d, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM runtimes WHERE role = ? AND id <> ?`, r.Role, r.ID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO runtimes (`+runtimeCols+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET role = excluded.role, workspace = excluded.workspace,
				agent = excluded.agent, agent_session = excluded.agent_session,
				tmux_session = excluded.tmux_session, tmux_window = excluded.tmux_window,
				tmux_pane = excluded.tmux_pane, target = excluded.target, pid = excluded.pid,
				status = excluded.status, operator_busy = excluded.operator_busy,
				last_heartbeat = max(excluded.last_heartbeat, runtimes.last_heartbeat),
				heartbeat = CASE WHEN excluded.last_heartbeat >= runtimes.last_heartbeat
					THEN excluded.heartbeat ELSE runtimes.heartbeat END,
				last_trigger = excluded.last_trigger, token_hash = excluded.token_hash,
				updated = excluded.updated, recovery = excluded.recovery, tools = excluded.tools`,
			r.ID, r.Role, r.Workspace, r.Agent, r.AgentSession, r.Session, r.Window, r.Pane,
			r.Target, r.PID, string(r.Status), r.OperatorBusy, fmtTime(r.LastHeartbeat), r.Heartbeat, r.LastTrigger,
			r.TokenHash, fmtTime(r.Updated), recoveryText(r.Recovery), r.Tools)
		return err
	}))
}

// Runtimes are the recorded runtimes, by role. The Store of a running
// loop reads them once between two of its commits (Store.reads).
func (s *Store) Runtimes(ctx context.Context) ([]Runtime, error) {
	s.cmu.Lock()
	if r, ok := s.kept(); ok && r.runtimes != nil {
		defer s.cmu.Unlock()
		return cloneRuntimes(r.runtimes), nil
	}
	gen := s.gen
	s.cmu.Unlock()
	rows, err := s.db.QueryContext(ctx, `SELECT `+runtimeCols+` FROM runtimes ORDER BY role`)
	if err != nil {
		return nil, s.fail("runtimes", err)
	}
	rs, err := collect(rows, scanRuntime)
	if err != nil {
		return nil, s.fail("runtimes", err)
	}
	s.keepRead(gen, func(r *reads) { r.runtimes = cloneRuntimes(rs) })
	return rs, nil
}

// sharedRuntimes is Runtimes without a copy for the caller when the
// Store kept them: the caller reads it, and copies what it keeps (a
// runtime's slices with it). What a Store keeps is never changed, only
// replaced.
func (s *Store) sharedRuntimes(ctx context.Context) ([]Runtime, error) {
	s.cmu.Lock()
	if r, ok := s.kept(); ok && r.runtimes != nil {
		rs := r.runtimes
		s.cmu.Unlock()
		return rs, nil
	}
	s.cmu.Unlock()
	return s.Runtimes(ctx)
}

// keptRuntime is role's runtime from what Runtimes kept: found false when
// there is no such runtime, kept false when nothing is kept.
func (s *Store) keptRuntime(role string) (rt Runtime, found, kept bool) {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	r, ok := s.kept()
	if !ok || r.runtimes == nil {
		return Runtime{}, false, false
	}
	i := slices.IndexFunc(r.runtimes, func(rt Runtime) bool { return rt.Role == role })
	if i < 0 {
		return Runtime{}, false, true
	}
	return cloneRuntimes(r.runtimes[i : i+1])[0], true, true
}

// cloneRuntimes copies rs, down to the slices a runtime holds: a caller
// may change what it was given.
func cloneRuntimes(rs []Runtime) []Runtime {
	out := slices.Clone(rs)
	for i := range out {
		out[i].Recovery.Restarts = slices.Clone(out[i].Recovery.Restarts)
	}
	return out
}

// Runtime is the runtime of role (ErrNotFound).
func (s *Store) Runtime(ctx context.Context, role string) (Runtime, error) {
	if r, found, kept := s.keptRuntime(role); kept {
		if !found {
			return Runtime{}, fmt.Errorf("runtime %q: %w", role, ErrNotFound)
		}
		return r, nil
	}
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
	want := []byte(state.HashToken(token))
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
	return s.writeLazy(ctx, "heartbeat "+role, func(tx *sql.Tx) error {
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
	return s.writeLazy(ctx, "liveness "+role, func(tx *sql.Tx) error {
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
