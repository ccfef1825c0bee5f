package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/record"
	"github.com/partyhq/party/core/tmux"
)

// RecordOptions are the inputs of party record.
type RecordOptions struct {
	Out    string
	Redact []string
}

func newRecordCmd(f *Factory, runF func(context.Context, *RecordOptions) error) *cobra.Command {
	opts := &RecordOptions{}
	cmd := &cobra.Command{
		Use:   "record",
		Short: "Record every pane of a session as asciinema casts",
		Long: `Record each pane as an asciicast v2 file in --out, named by role: its output,
what party delivered to it and size changes, plus the session's event log.
Secrets matching the redaction patterns (API keys and tokens, and --redact)
are replaced before anything is written. Follows agent restarts; stops on
Ctrl-C or when the session ends.`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, recordRun) },
	}
	cmd.Flags().StringVar(&opts.Out, "out", "", "directory for the casts (default: recordings/<session>-<time>)")
	cmd.Flags().StringArrayVar(&opts.Redact, "redact", nil, "another regexp whose matches are redacted (repeatable)")
	return cmd
}

func recordRun(ctx context.Context, f *Factory, opts *RecordOptions) error {
	tc := f.Tmux()
	sc, err := f.env().OpenParty(ctx)
	if err != nil {
		return err
	}
	redactor, err := record.NewRedactor(append(append([]string{}, record.DefaultRedactions...), opts.Redact...))
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	s := &record.Session{Mux: tc, Clock: f.Clock, Getenv: f.Getenv, Name: sc.Session, StateDir: sc.Info.StateDir,
		Panes: sc.Panes, Out: opts.Out, Redactor: redactor,
		Output: func(ctx context.Context) (<-chan tmux.Output, func() error, error) {
			cc, err := tc.Control(ctx, sc.Session, true)
			if err != nil {
				return nil, nil, err
			}
			return cc.Output(), cc.Close, nil
		},
		Started: func(out string, n int) {
			fmt.Fprintf(f.IO.ErrOut, "party: recording %d panes of %s into %s (Ctrl-C stops)\n", n, sc.Session, out)
		}}
	out, err := s.Run(ctx)
	if err != nil {
		return err
	}
	return f.show(map[string]string{"recording": out}, "recorded into %s", out)
}
