package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

// signalWait is how long a signal command waits for the coordinator.
const signalWait = 10 * time.Second

// signalCmd is a command that sends the signal fill makes of its args.
func signalCmd(f *Factory, runF func(context.Context, *party.SignalOptions) error, use, short string, args cobra.PositionalArgs, fill func(*party.SignalOptions, []string) error) *cobra.Command {
	opts := &party.SignalOptions{Wait: signalWait}
	return &cobra.Command{Use: use, Short: short, Args: args,
		RunE: func(c *cobra.Command, a []string) error {
			if err := fill(opts, a); err != nil {
				return err
			}
			return run(c, f, opts, runF, signalRun)
		}}
}

// event is a fill func for a signal of kind with the args as reason.
func event(kind party.ReviewEventKind) func(*party.SignalOptions, []string) error {
	return func(o *party.SignalOptions, a []string) error {
		o.Event = party.ReviewEvent{Kind: kind, Reason: strings.Join(a, " ")}
		return nil
	}
}

func newReviewCmd(f *Factory, runF func(context.Context, *party.SignalOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "review",
		Short: "Signal the review coordinator (what the agents run)",
		Long: `Send the review coordinator a signal: it applies it exactly once and the
command prints the state that follows. A signal illegal in the current
state is refused; with no coordinator running it is queued. The verdict
(approve, re-review, needs-discussion) is the implementer's alone.`,
	}
	var base, title, to string
	request := signalCmd(f, runF, "request", "Ask the reviewer for a review of the work", argsBetween(0, 0), func(o *party.SignalOptions, _ []string) error {
		o.Event = party.ReviewEvent{Kind: party.ReviewRequest, Base: base, Title: title}
		return nil
	})
	request.Flags().StringVar(&base, "base", "", "branch the work is compared with (default: review.base, main)")
	request.Flags().StringVar(&title, "title", "", "title of the review")
	resume := signalCmd(f, runF, "resume", "Leave NEEDS_DISCUSSION (or PR_READY) for a state", argsBetween(0, 0), func(o *party.SignalOptions, _ []string) error {
		o.Event = party.ReviewEvent{Kind: party.ReviewResume, To: to}
		if to != "" {
			if err := party.ParseReviewState(to); err != nil {
				return fmt.Errorf("%w: --to: %w", party.ErrUsage, err)
			}
		}
		return nil
	})
	resume.Flags().StringVar(&to, "to", "", "state to resume in (default IMPLEMENT)")
	cmd.AddCommand(
		request,
		signalCmd(f, runF, "prompt TEXT", "Ask the reviewer a free question through the coordinator", argsBetween(1, 1), func(o *party.SignalOptions, a []string) error {
			o.Event = party.ReviewEvent{Kind: party.ReviewPrompt, Text: a[0], From: f.Getenv("PARTY_ROLE")}
			return nonEmpty("prompt", a[0])
		}),
		signalCmd(f, runF, "self-review", "Say the implementer is reviewing its own work", argsBetween(0, 0), event(party.ReviewSelfReview)),
		signalCmd(f, runF, "approve", "Approve the review (the implementer's verdict)", argsBetween(0, 0), event(party.ReviewApprove)),
		signalCmd(f, runF, "re-review [REASON]", "Fix the findings and ask for another review", cobra.ArbitraryArgs, event(party.ReviewReReview)),
		signalCmd(f, runF, "needs-discussion [REASON]", "Stop the loop until the user has decided", cobra.ArbitraryArgs, event(party.ReviewNeedsDiscussion)),
		resume,
		newStatusCmd(f, nil, "status"),
		newFindingsCmd(f, nil),
		newAnswerCmd(f, nil),
	)
	return cmd
}

// FindingsOptions are the inputs of party review findings.
type FindingsOptions struct {
	JSON string // the findings document; "-" reads it from stdin
}

func newFindingsCmd(f *Factory, runF func(context.Context, *FindingsOptions) error) *cobra.Command {
	opts := &FindingsOptions{}
	return &cobra.Command{
		Use:   "findings JSON|-",
		Short: "Write the reviewer's findings of the review requested last (what the reviewer runs)",
		Long: `Check JSON (or stdin, for -) against the findings schema and write it
atomically as the findings of the review the coordinator dispatched last;
the coordinator delivers it to the implementer. Refused when it does not
follow the schema (exit 2, nothing written) and when that review has its
findings already. Writing the findings file itself works too; this is one
command the agents' permission rules can allow (party review …).`,
		Args: argsBetween(1, 1),
		RunE: func(c *cobra.Command, a []string) error {
			opts.JSON = a[0]
			return run(c, f, opts, runF, findingsRun)
		},
	}
}

func findingsRun(ctx context.Context, f *Factory, opts *FindingsOptions) error {
	b := []byte(opts.JSON)
	if opts.JSON == "-" {
		var err error
		if b, err = io.ReadAll(f.IO.In); err != nil {
			return err
		}
	}
	path, err := party.WriteFindings(ctx, f.env(), b)
	return f.show(err, map[string]string{"path": path}, "findings: %s\n", path)
}

// AnswerOptions are the inputs of party review answer.
type AnswerOptions struct {
	N    int
	Text string
}

func newAnswerCmd(f *Factory, runF func(context.Context, *AnswerOptions) error) *cobra.Command {
	opts := &AnswerOptions{}
	return &cobra.Command{
		Use:   "answer N TEXT",
		Short: "Answer question N the coordinator brought you (what the asked agent runs)",
		Long: `Write TEXT atomically as the answer to question N ("[COORDINATOR] question N
from ROLE. Read: PATH"); the coordinator brings it to the asker. Writing the
answer file itself works too; this is one command the agents' permission
rules can allow (party review …).`,
		Args: argsBetween(2, 2),
		RunE: func(c *cobra.Command, a []string) error {
			n, err := strconv.Atoi(a[0])
			if err != nil || n < 1 {
				return fmt.Errorf("%w: N: want a question number, got %q", party.ErrUsage, a[0])
			}
			opts.N, opts.Text = n, a[1]
			if err := nonEmpty("answer", a[1]); err != nil {
				return err
			}
			return run(c, f, opts, runF, answerRun)
		},
	}
}

func answerRun(ctx context.Context, f *Factory, opts *AnswerOptions) error {
	path, err := party.WriteAnswer(ctx, f.env(), opts.N, opts.Text)
	return f.show(err, map[string]string{"path": path}, "answer: %s\n", path)
}

func nonEmpty(what, s string) error {
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("%w: %s: empty text", party.ErrUsage, what)
	}
	return nil
}

func newAskCmd(f *Factory, runF func(context.Context, *party.SignalOptions) error) *cobra.Command {
	cmd := signalCmd(f, runF, "ask ROLE QUESTION", "Ask another agent a planning question through the coordinator", argsBetween(2, 2), func(o *party.SignalOptions, a []string) error {
		o.Event = party.ReviewEvent{Kind: party.ReviewAsk, Role: a[0], Text: a[1], From: f.Getenv("PARTY_ROLE")}
		return nonEmpty("question", a[1])
	})
	cmd.Long = `Ask the agent of ROLE a question: the coordinator writes it to a file, types
a pointer into that agent's pane, waits for the answer file and points the
asker to it ("[COORDINATOR] dialogue result ready. Read: PATH").`
	return cmd
}

func newEvidenceCmd(f *Factory, runF func(context.Context, *party.SignalOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "evidence",
		Short: "Record, list or clear review evidence",
		Long: `Evidence says that a step of the review ran: critic, minimizer, tests-passed,
checks-passed, security-scanned, pr-verified (by the agents), reviewer-ran and
review-approved (by the coordinator; codex-ran and codex, their old names, are
still read for one release). It is stale when older than the last code edit;
VERIFY becomes PR_READY when all are present and fresh.`,
	}
	add := signalCmd(f, runF, "add KIND", "Record evidence of KIND", argsBetween(1, 1), func(o *party.SignalOptions, a []string) error {
		k, err := party.ParseEvidenceKind(a[0])
		o.Event = party.ReviewEvent{Kind: party.ReviewEvidence, Evidence: k}
		return err
	})
	clr := signalCmd(f, runF, "clear", "Forget all evidence", argsBetween(0, 0), func(o *party.SignalOptions, _ []string) error {
		o.Event = party.ReviewEvent{Kind: party.ReviewClearEvidence}
		return nil
	})
	cmd.AddCommand(add, newEvidenceListCmd(f, nil), clr)
	return cmd
}

// EvidenceListOptions are the inputs of party evidence list (none).
type EvidenceListOptions struct{}

func newEvidenceListCmd(f *Factory, runF func(context.Context, *EvidenceListOptions) error) *cobra.Command {
	return noArgsCmd(f, "list", "List evidence with its freshness", &EvidenceListOptions{}, runF,
		func(ctx context.Context, f *Factory, _ *EvidenceListOptions) error {
			s, err := party.ReviewStatus(ctx, f.env())
			rows := s.EvidenceRows()
			return showRows(f, err, map[string]any{"evidence": rows, "last_edit": s.LastEdit}, rows, "KIND", "STATUS", "TIME")
		})
}

// signalRun sends the signal (see review.Submit) and prints what became
// of it.
func signalRun(ctx context.Context, f *Factory, opts *party.SignalOptions) error {
	ev := opts.Event
	res, err := party.Signal(ctx, f.env(), *opts)
	if err != nil {
		return err
	}
	switch {
	case f.JSON:
		writeJSON(f.IO.Out, struct {
			Signal string            `json:"signal"`
			Event  string            `json:"event"`
			State  string            `json:"state"`
			Phase  party.ReviewPhase `json:"phase,omitempty"`
			Queued bool              `json:"queued"`
		}{res.ID, string(ev.Kind), res.State.String(), res.Phase, res.Queued})
	case res.Queued:
		fmt.Fprintf(f.IO.Out, "%s: queued (signal %s)\n", ev.Kind, res.ID)
		fmt.Fprintf(f.IO.ErrOut, "party: the coordinator did not take the signal within %s; it will when it runs ('party coordinator status')\n", opts.Wait)
	default:
		fmt.Fprintf(f.IO.Out, "%s: %s\n", ev.Kind, party.ReviewLabel(res.State, res.Phase))
	}
	return nil
}

func newStatusCmd(f *Factory, runF func(context.Context, *party.StatusOptions) error, use string) *cobra.Command {
	opts := &party.StatusOptions{}
	cmd := &cobra.Command{
		Use:   use,
		Short: "Show the review coordinator's state, evidence and reviews",
		Args:  argsBetween(0, 0),
		RunE:  func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, statusRun) },
	}
	cmd.Flags().BoolVarP(&opts.Watch, "watch", "w", false, "redraw every second until interrupted")
	return cmd
}

func statusRun(ctx context.Context, f *Factory, opts *party.StatusOptions) error {
	shown := false
	return party.Status(ctx, f.env(), *opts, func(s party.ReviewState, proc party.ReviewProc, now time.Time) {
		switch {
		case f.JSON:
			writeJSON(f.IO.Out, struct {
				party.ReviewState
				Evidence    []party.ReviewEvidenceRow `json:"evidence"`
				InStateSecs int64                     `json:"in_state_seconds"`
				Coordinator *party.ReviewProc         `json:"coordinator"`
			}{s, s.EvidenceRows(), int64(now.Sub(s.Since).Seconds()), &proc})
		case opts.Watch && f.IO.OutTTY:
			fmt.Fprint(f.IO.Out, "\x1b[H\x1b[2J")
		case shown:
			fmt.Fprintln(f.IO.Out)
		}
		if !f.JSON {
			party.WriteReviewStatus(f.IO.Out, s, proc, now)
		}
		shown = true
	})
}
