package review

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/termsafe"
)

// EvidenceRow is one kind of evidence as party evidence list and party
// status show it.
type EvidenceRow struct {
	Kind   Kind       `json:"kind"`
	Status string     `json:"status"` // fresh | stale | missing
	Time   *time.Time `json:"time,omitempty"`
}

// Row is the evidence as party evidence list prints it: kind, status and
// the local time of day it was recorded, or "-".
func (r EvidenceRow) Row() []string {
	at := "-"
	if r.Time != nil && !r.Time.IsZero() {
		at = r.Time.Local().Format(time.TimeOnly)
	}
	return []string{string(r.Kind), r.Status, at}
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

// Label is the state with its phase, if any: "REVIEW (dispatched)".
func Label(st State, ph Phase) string {
	if ph == "" {
		return st.String()
	}
	return st.String() + " (" + string(ph) + ")"
}

// Watch calls show with the status of dir, whether its coordinator runs
// and the time: once when every is 0, else every interval until ctx ends
// (which is no error). A status that cannot be read ends it.
func Watch(ctx context.Context, clk clock.Clock, dir string, every time.Duration, show func(Status, daemon.Proc, time.Time)) error {
	for {
		s, err := Load(dir)
		if err != nil {
			return err
		}
		show(s, daemon.Running(dir), clk.Now())
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

var evidenceMarks = map[string]string{"fresh": "✓", "stale": "~", "missing": "✗"}

// WriteStatus writes the status as party status shows it at now: state,
// evidence, reviews, last edit, coordinator, and what it waits for. What
// agents wrote into it (a note, a session id) is shown terminal-safe
// (termsafe.Text).
func WriteStatus(out io.Writer, s Status, proc daemon.Proc, now time.Time) {
	var w strings.Builder
	defer func() { _, _ = io.WriteString(out, termsafe.Text(w.String())) }()
	fmt.Fprintf(&w, "State: %s for %s\n", Label(s.State, s.Phase), now.Sub(s.Since).Round(time.Second))
	var ev []string
	for _, r := range s.EvidenceRows() {
		ev = append(ev, string(r.Kind)+evidenceMarks[r.Status])
	}
	fmt.Fprintf(&w, "Evidence: %s\n", strings.Join(ev, " "))
	line := fmt.Sprintf("Reviews: %d/%d (%d in all)", s.Iteration, s.MaxIterations, s.Reviews)
	if r := s.Review; r != nil && r.Outcome != Pending {
		line += fmt.Sprintf(" | last: #%d %s", r.N, r.Outcome)
		if r.Outcome == Valid {
			line += fmt.Sprintf(", %d blocking of %d", r.Blocking, r.Total)
		}
	}
	fmt.Fprintln(&w, line)
	edit, sid := "-", s.SessionID
	if !s.LastEdit.IsZero() {
		edit = s.LastEdit.Local().Format(time.TimeOnly)
	}
	if sid == "" {
		sid = "-"
	}
	fmt.Fprintf(&w, "Last edit: %s | Session: %s | Coordinator: %s\n", edit, sid, proc.Describe("stopped"))
	if s.Note != "" {
		fmt.Fprintf(&w, "Note: %s\n", s.Note)
	}
	if len(s.Exchanges) > 0 {
		var q []string
		for _, x := range s.Exchanges {
			to := x.To
			if to == "" {
				to = "reviewer"
			}
			q = append(q, fmt.Sprintf("#%d %s to %s", x.N, x.Kind, to))
		}
		sort.Strings(q)
		fmt.Fprintf(&w, "Waiting for: %s\n", strings.Join(q, ", "))
	}
}
