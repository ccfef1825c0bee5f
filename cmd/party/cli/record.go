package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

func newRecordCmd(f *Factory, runF func(context.Context, *party.RecordOptions) error) *cobra.Command {
	opts := &party.RecordOptions{}
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

func recordRun(ctx context.Context, f *Factory, opts *party.RecordOptions) error {
	out, err := party.Record(ctx, f.env(), *opts)
	return f.show(err, map[string]string{"recording": out}, "recorded into %s", out)
}
