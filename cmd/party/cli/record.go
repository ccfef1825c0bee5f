package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/record"
	"github.com/partyhq/party/core/state"
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
		Long: `Record each pane of the session as an asciicast v2 file in --out (one per
pane, named by role): what the pane printed ("o"), what party delivered to
it ("i") and size changes ("r"), plus the session's event log. Secrets that
match the redaction patterns (API keys and tokens by default; add more with
--redact) are replaced before anything is written. Recording follows agent
restarts in the same pane and stops on Ctrl-C or when the session ends.`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return recordRun(c.Context(), f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Out, "out", "", "directory for the casts (default: recordings/<session>-<time>)")
	cmd.Flags().StringArrayVar(&opts.Redact, "redact", nil, "another regexp whose matches are redacted (repeatable)")
	return cmd
}

func recordRun(ctx context.Context, f *Factory, opts *RecordOptions) error {
	tc := f.Tmux()
	sc, err := openPartyScope(ctx, f, tc)
	if err != nil {
		return err
	}
	redactor, err := record.NewRedactor(append(append([]string{}, record.DefaultRedactions...), opts.Redact...))
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	out := opts.Out
	if out == "" {
		out = filepath.Join("recordings", sc.Session+"-"+f.Clock.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	cc, err := tc.Control(ctx, sc.Session, true)
	if err != nil {
		return err
	}
	defer cc.Close()
	start := f.Clock.Now()
	casts := map[string]*record.Cast{}
	sizes := map[string][2]int{}
	for _, p := range sc.Panes {
		if p.ID == f.Getenv("TMUX_PANE") {
			continue // the recorder's own pane
		}
		name := p.Role
		if name == "" {
			name = strings.TrimPrefix(p.ID, "%")
		}
		fh, err := os.Create(filepath.Join(out, name+".cast"))
		if err != nil {
			return err
		}
		defer fh.Close()
		c, err := record.NewCast(fh, record.Header{Width: p.Width, Height: p.Height, Title: sc.Session + " " + name,
			Party: record.PaneInfo{Pane: p.ID, Role: p.Role, Agent: p.Agent}}, start, redactor)
		if err != nil {
			return err
		}
		casts[p.ID], sizes[p.ID] = c, [2]int{p.Width, p.Height}
		defer c.Flush()
	}
	events := filepath.Join(sc.Info.StateDir, state.EventLog)
	offset := state.Size(events)
	fmt.Fprintf(f.IO.ErrOut, "party: recording %d panes of %s into %s (Ctrl-C stops)\n", len(casts), sc.Session, out)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case o, ok := <-cc.Output():
			if !ok {
				return finishRecording(f, events, out, redactor) // the session ended
			}
			if c := casts[o.Pane]; c != nil {
				if err := c.Output(f.Clock.Now(), o.Data); err != nil {
					return err
				}
			}
		case <-tick.C:
			offset = recordSide(ctx, f, tc, sc.Session, casts, sizes, events, offset)
		case <-ctx.Done():
			recordSide(context.WithoutCancel(ctx), f, tc, sc.Session, casts, sizes, events, offset)
			return finishRecording(f, events, out, redactor)
		}
	}
}

// recordSide adds what party delivered (from the event log) and pane size
// changes to the casts, and returns the new event log offset.
func recordSide(ctx context.Context, f *Factory, tc *tmux.Client, session string, casts map[string]*record.Cast, sizes map[string][2]int, events string, offset int64) int64 {
	now := f.Clock.Now()
	lines, next, err := state.ReadFrom(events, offset)
	if err == nil {
		for _, l := range lines {
			var ev struct {
				Kind, Pane, Text string
			}
			if json.Unmarshal(l, &ev) == nil && ev.Kind == "input" && casts[ev.Pane] != nil {
				_ = casts[ev.Pane].Input(now, ev.Text)
			}
		}
		offset = next
	}
	panes, err := tc.ListPanes(ctx, session)
	if err != nil {
		return offset
	}
	for _, p := range panes {
		if c := casts[p.ID]; c != nil && sizes[p.ID] != [2]int{p.Width, p.Height} {
			sizes[p.ID] = [2]int{p.Width, p.Height}
			_ = c.Resize(now, p.Width, p.Height)
		}
	}
	return offset
}

// finishRecording copies the session's event log, redacted, beside the
// casts.
func finishRecording(f *Factory, events, out string, r *record.Redactor) error {
	if b, err := os.ReadFile(events); err == nil {
		if err := os.WriteFile(filepath.Join(out, "events.jsonl"), []byte(r.Redact(string(b))), 0o644); err != nil {
			return err
		}
	}
	if f.JSON {
		writeJSON(f.IO.Out, map[string]string{"recording": out})
	} else {
		fmt.Fprintf(f.IO.Out, "recorded into %s\n", out)
	}
	return nil
}

// logInput notes in the session's event log what party delivered to a
// pane, so a recording can show it as input.
func logInput(f *Factory, info tmux.SessionInfo, p mux.Pane, text string) {
	if info.StateDir == "" {
		return
	}
	_ = state.AppendEvent(filepath.Join(info.StateDir, state.EventLog),
		map[string]any{"time": f.Clock.Now().UTC(), "kind": "input", "pane": p.ID, "role": p.Role, "text": text})
}
