package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/state"
)

// SignalOptions are the inputs of the commands that send the coordinator
// a signal: party review ..., party evidence add|clear, party ask.
type SignalOptions struct {
	Event review.Event
	// Wait is how long to wait for the coordinator to apply the signal.
	Wait time.Duration
}

// signalWait is how long a signal command waits for the coordinator.
const signalWait = 10 * time.Second

func newReviewCmd(f *Factory, runF func(context.Context, *SignalOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "review",
		Short: "Signal the review coordinator (what the agents run)",
		Long: `Send the review coordinator a signal. Each command writes one JSON signal
atomically into the session's review directory; the coordinator applies it
exactly once and the command prints the state that follows. A signal that
is illegal in the current state is refused and changes nothing. When the
coordinator is not running the signal waits for it ("queued").

The verdict is the implementer's alone: approve, re-review or
needs-discussion after reading the findings.`,
	}
	signal := func(use, short string, args cobra.PositionalArgs, fill func(*SignalOptions, []string) error) *cobra.Command {
		opts := &SignalOptions{Wait: signalWait}
		c := &cobra.Command{
			Use: use, Short: short, Args: args,
			RunE: func(c *cobra.Command, a []string) error {
				if err := fill(opts, a); err != nil {
					return err
				}
				if runF != nil {
					return runF(c.Context(), opts)
				}
				return signalRun(c.Context(), f, opts)
			},
		}
		return c
	}
	var base, title, to string
	request := signal("request", "Ask the reviewer for a review of the work", argsBetween(0, 0), func(o *SignalOptions, _ []string) error {
		o.Event = review.Event{Kind: review.EvRequest, Base: base, Title: title}
		return nil
	})
	request.Flags().StringVar(&base, "base", "", "branch the work is compared with (default: review.base, main)")
	request.Flags().StringVar(&title, "title", "", "title of the review")
	resume := signal("resume", "Leave NEEDS_DISCUSSION (or PR_READY) for a state", argsBetween(0, 0), func(o *SignalOptions, _ []string) error {
		o.Event = review.Event{Kind: review.EvResume, To: to}
		if to != "" {
			if _, err := review.ParseState(to); err != nil {
				return fmt.Errorf("%w: --to: %w", errUsage, err)
			}
		}
		return nil
	})
	resume.Flags().StringVar(&to, "to", "", "state to resume in (default IMPLEMENT)")
	reason := func(kind review.EventKind) func(*SignalOptions, []string) error {
		return func(o *SignalOptions, a []string) error {
			o.Event = review.Event{Kind: kind, Reason: strings.Join(a, " ")}
			return nil
		}
	}
	cmd.AddCommand(
		request,
		signal("prompt TEXT", "Ask the reviewer a free question through the coordinator", argsBetween(1, 1), func(o *SignalOptions, a []string) error {
			o.Event = review.Event{Kind: review.EvPrompt, Text: a[0], From: f.Getenv("PARTY_ROLE")}
			return nonEmpty("prompt", a[0])
		}),
		signal("self-review", "Say the implementer is reviewing its own work", argsBetween(0, 0), reason(review.EvSelfReview)),
		signal("approve", "Approve the review (the implementer's verdict)", argsBetween(0, 0), reason(review.EvApprove)),
		signal("re-review [REASON]", "Fix the findings and ask for another review", cobra.ArbitraryArgs, reason(review.EvReReview)),
		signal("needs-discussion [REASON]", "Stop the loop until the user has decided", cobra.ArbitraryArgs, reason(review.EvNeedsDiscussion)),
		resume,
		newStatusCmd(f, nil, "status"),
	)
	return cmd
}

func nonEmpty(what, s string) error {
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("%w: %s: empty text", errUsage, what)
	}
	return nil
}

func newAskCmd(f *Factory, runF func(context.Context, *SignalOptions) error) *cobra.Command {
	opts := &SignalOptions{Wait: signalWait}
	return &cobra.Command{
		Use:   "ask ROLE QUESTION",
		Short: "Ask another agent a planning question through the coordinator",
		Long: `Ask the agent of ROLE a question. The coordinator writes it to a file, types a
one-line pointer into that agent's pane, waits for the answer file, and
points the asker to it with "[COORDINATOR] dialogue result ready. Read: PATH".
Questions and answers are logged in the review directory's dialogue.jsonl.`,
		Args: argsBetween(2, 2),
		RunE: func(c *cobra.Command, a []string) error {
			if err := nonEmpty("question", a[1]); err != nil {
				return err
			}
			opts.Event = review.Event{Kind: review.EvAsk, Role: a[0], Text: a[1], From: f.Getenv("PARTY_ROLE")}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return signalRun(c.Context(), f, opts)
		},
	}
}

func newEvidenceCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "evidence",
		Short: "Record, list or clear review evidence",
		Long: `Evidence records say that a step of the review ran: critic, minimizer,
tests-passed, checks-passed, security-scanned, pr-verified (recorded by the
agents) and codex-ran, codex (recorded by the coordinator when a review ran
and the implementer approved it). Each is stale when older than the last
code edit. VERIFY becomes PR_READY when all are present and fresh.`,
	}
	add := &cobra.Command{
		Use:   "add KIND",
		Short: "Record evidence of KIND",
		Args:  argsBetween(1, 1),
		RunE: func(c *cobra.Command, a []string) error {
			k, err := review.ParseKind(a[0])
			if err != nil {
				return err
			}
			return signalRun(c.Context(), f, &SignalOptions{Wait: signalWait, Event: review.Event{Kind: review.EvEvidence, Evidence: k}})
		},
	}
	clr := &cobra.Command{
		Use:   "clear",
		Short: "Forget all evidence",
		Args:  argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			return signalRun(c.Context(), f, &SignalOptions{Wait: signalWait, Event: review.Event{Kind: review.EvClearEvidence}})
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List evidence with its freshness",
		Args:  argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			dir, err := reviewDir(c.Context(), f)
			if err != nil {
				return err
			}
			s, err := review.Load(dir)
			if err != nil {
				return err
			}
			rows := evidenceRows(s)
			if f.JSON {
				writeJSON(f.IO.Out, map[string]any{"evidence": rows, "last_edit": s.LastEdit})
				return nil
			}
			t := newTable(f.IO.Out, "KIND", "STATUS", "TIME")
			for _, r := range rows {
				at := "-"
				if r.Time != nil {
					at = r.Time.Local().Format(time.TimeOnly)
				}
				t.row(string(r.Kind), r.Status, at)
			}
			return t.flush()
		},
	}
	cmd.AddCommand(add, list, clr)
	return cmd
}

type evidenceRow struct {
	Kind   review.Kind `json:"kind"`
	Status string      `json:"status"` // fresh | stale | missing
	Time   *time.Time  `json:"time,omitempty"`
}

func evidenceRows(s review.Status) []evidenceRow {
	var rows []evidenceRow
	for _, k := range review.Kinds {
		r := evidenceRow{Kind: k, Status: "missing"}
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

// reviewDir is the review directory of the session: $PARTY_STATE_DIR's
// inside an agent's pane, else the session's that the flags select.
func reviewDir(ctx context.Context, f *Factory) (string, error) {
	if d := f.Getenv("PARTY_STATE_DIR"); d != "" && f.Session == "" {
		return review.Dir(d), nil
	}
	sc, err := openPartyScope(ctx, f, f.Tmux())
	if err != nil {
		return "", err
	}
	return review.Dir(sc.Info.StateDir), nil
}

type signalJSON struct {
	Signal string       `json:"signal"`
	Event  string       `json:"event"`
	State  string       `json:"state"`
	Phase  review.Phase `json:"phase,omitempty"`
	Queued bool         `json:"queued"`
}

// signalRun sends the signal (see review.Submit) and prints what became
// of it.
func signalRun(ctx context.Context, f *Factory, opts *SignalOptions) error {
	dir, err := reviewDir(ctx, f)
	if err != nil {
		return err
	}
	ev := opts.Event
	res, err := review.Submit(ctx, f.Clock, dir, ev, opts.Wait, func() { state.WakeSession(f.Getenv, filepath.Dir(dir)) })
	if err != nil {
		return err
	}
	id := res.ID
	out := signalJSON{Signal: id, Event: string(ev.Kind), State: res.State.String(), Phase: res.Phase, Queued: res.Queued}
	switch {
	case f.JSON:
		writeJSON(f.IO.Out, out)
	case out.Queued:
		fmt.Fprintf(f.IO.Out, "%s: queued (signal %s)\n", ev.Kind, id)
		fmt.Fprintf(f.IO.ErrOut, "party: the coordinator did not take the signal within %s; it will when it runs ('party coordinator status')\n", opts.Wait)
	default:
		st := out.State
		if out.Phase != "" {
			st += " (" + string(out.Phase) + ")"
		}
		fmt.Fprintf(f.IO.Out, "%s: %s\n", ev.Kind, st)
	}
	return nil
}

// StatusOptions are the inputs of party status.
type StatusOptions struct {
	Watch bool
}

func newStatusCmd(f *Factory, runF func(context.Context, *StatusOptions) error, use string) *cobra.Command {
	opts := &StatusOptions{}
	cmd := &cobra.Command{
		Use:   use,
		Short: "Show the review coordinator's state, evidence and reviews",
		Args:  argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return statusRun(c.Context(), f, opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Watch, "watch", "w", false, "redraw every second until interrupted")
	return cmd
}

type statusJSON struct {
	review.Status
	Evidence    []evidenceRow `json:"evidence"`
	InStateSecs int64         `json:"in_state_seconds"`
	Coordinator *review.Proc  `json:"coordinator"`
}

func statusRun(ctx context.Context, f *Factory, opts *StatusOptions) error {
	dir, err := reviewDir(ctx, f)
	if err != nil {
		return err
	}
	for {
		s, err := review.Load(dir)
		if err != nil {
			return err
		}
		now := f.Clock.Now()
		proc := review.Running(dir)
		if f.JSON {
			writeJSON(f.IO.Out, statusJSON{Status: s, Evidence: evidenceRows(s), InStateSecs: int64(now.Sub(s.Since).Seconds()), Coordinator: &proc})
		} else {
			if opts.Watch && f.IO.OutTTY {
				fmt.Fprint(f.IO.Out, "\x1b[H\x1b[2J")
			}
			printStatus(f.IO.Out, s, proc, now)
		}
		if !opts.Watch {
			return nil
		}
		if err := f.Clock.Sleep(ctx, time.Second); err != nil {
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		}
		if !f.IO.OutTTY && !f.JSON {
			fmt.Fprintln(f.IO.Out)
		}
	}
}

func printStatus(w io.Writer, s review.Status, proc review.Proc, now time.Time) {
	st := s.State.String()
	if s.Phase != "" {
		st += " (" + string(s.Phase) + ")"
	}
	fmt.Fprintf(w, "State: %s for %s\n", st, now.Sub(s.Since).Round(time.Second))
	var ev []string
	for _, r := range evidenceRows(s) {
		mark := "✗"
		switch r.Status {
		case "fresh":
			mark = "✓"
		case "stale":
			mark = "~"
		}
		ev = append(ev, string(r.Kind)+mark)
	}
	fmt.Fprintf(w, "Evidence: %s\n", strings.Join(ev, " "))
	line := fmt.Sprintf("Reviews: %d/%d (%d in all)", s.Iteration, s.MaxIterations, s.Reviews)
	if r := s.Review; r != nil && r.Outcome != review.Pending {
		line += fmt.Sprintf(" | last: #%d %s", r.N, r.Outcome)
		if r.Outcome == review.Valid {
			line += fmt.Sprintf(", %d blocking of %d", r.Blocking, r.Total)
		}
	}
	fmt.Fprintln(w, line)
	edit := "-"
	if !s.LastEdit.IsZero() {
		edit = s.LastEdit.Local().Format(time.TimeOnly)
	}
	sid := s.SessionID
	if sid == "" {
		sid = "-"
	}
	coord := "stopped"
	if proc.Running {
		coord = "running (pid " + strconv.Itoa(proc.PID) + ")"
	}
	fmt.Fprintf(w, "Last edit: %s | Session: %s | Coordinator: %s\n", edit, sid, coord)
	if s.Note != "" {
		fmt.Fprintf(w, "Note: %s\n", s.Note)
	}
	if len(s.Exchanges) > 0 {
		var q []string
		for _, x := range s.Exchanges {
			q = append(q, fmt.Sprintf("#%d %s to %s", x.N, x.Kind, orDefault(x.To, "reviewer")))
		}
		sort.Strings(q)
		fmt.Fprintf(w, "Waiting for: %s\n", strings.Join(q, ", "))
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
