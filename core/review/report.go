package review

import (
	"context"
	"errors"
	"time"

	"github.com/partyhq/party/core/clock"
)

// EvidenceRow is one kind of evidence as party evidence list and party
// status show it.
type EvidenceRow struct {
	Kind   Kind       `json:"kind"`
	Status string     `json:"status"` // fresh | stale | missing
	Time   *time.Time `json:"time,omitempty"`
}

// EvidenceRows is every kind of evidence, in Kinds order, with whether it
// is fresh, stale (older than the last code edit) or missing.
func (s Status) EvidenceRows() []EvidenceRow {
	rows := make([]EvidenceRow, 0, len(Kinds))
	for _, k := range Kinds {
		r := EvidenceRow{Kind: k, Status: "missing"}
		if t, ok := s.Evidence[k]; ok {
			r.Time = &t
			r.Status = "stale"
			if s.Fresh(k) {
				r.Status = "fresh"
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// Label is the state with its phase, if any: "CODEX_REVIEW (waiting)".
func Label(st State, ph Phase) string {
	if ph == "" {
		return st.String()
	}
	return st.String() + " (" + string(ph) + ")"
}

// Watch calls show with the status of dir, whether its coordinator runs
// and the time: once when every is 0, else every interval until ctx ends
// (which is no error). A status that cannot be read ends it.
func Watch(ctx context.Context, clk clock.Clock, dir string, every time.Duration, show func(Status, Proc, time.Time)) error {
	for {
		s, err := Load(dir)
		if err != nil {
			return err
		}
		show(s, Running(dir), clk.Now())
		if every == 0 {
			return nil
		}
		if err := clk.Sleep(ctx, every); err != nil {
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		}
	}
}
