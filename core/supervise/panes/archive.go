package panes

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
)

var _ supervise.AuditArchive = (*Effects)(nil)

// AuditLine is an audit event of the supervisor as the session's event
// log keeps it once retention deleted its row: kind is "supervise." and
// the event's name, time its time.
type AuditLine struct {
	Time  time.Time            `json:"time"`
	Kind  string               `json:"kind"`
	Audit supervise.AuditEvent `json:"audit"`
}

// auditKind is how an AuditLine starts its kind.
const auditKind = "supervise."

// Archive (supervise.AuditArchive) appends evs to the session's event log
// as AuditLines, leaving out those it holds already: lines a prune wrote
// before it failed, or before a kill -9, whose rows were not deleted and
// come again. It reads the log for them from where the last prune that
// deleted its rows left it (e.archived; the whole log after a start).
func (e *Effects) Archive(_ context.Context, evs []supervise.AuditEvent) (func(), error) {
	path := filepath.Join(e.Info.StateDir, state.EventLog)
	from := e.archived
	if state.Size(path) < from {
		from = 0 // a new log
	}
	have, err := archivedSeqs(path, from)
	if err != nil {
		return nil, err
	}
	for _, ev := range evs {
		if have[ev.Seq] {
			continue
		}
		if err := state.AppendEvent(path, AuditLine{Time: ev.At, Kind: auditKind + ev.Kind, Audit: ev}); err != nil {
			return nil, err
		}
	}
	end := state.Size(path)
	return func() { e.archived = end }, nil
}

// archivedSeqs are the audit seqs of the AuditLines in the log at path
// after offset from.
func archivedSeqs(path string, from int64) (map[int64]bool, error) {
	have := map[int64]bool{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return have, nil
	}
	if err != nil {
		return nil, fmt.Errorf("event log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, fmt.Errorf("event log: %w", err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	mark := []byte(`"kind":"` + auditKind)
	for sc.Scan() {
		if !bytes.Contains(sc.Bytes(), mark) {
			continue // a hook's event, a delivery's: most of the log
		}
		var l AuditLine
		if json.Unmarshal(sc.Bytes(), &l) == nil && strings.HasPrefix(l.Kind, auditKind) && l.Audit.Seq > 0 {
			have[l.Audit.Seq] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("event log: %w", err)
	}
	return have, nil
}
