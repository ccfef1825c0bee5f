package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/observe"
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

func recordRun(ctx context.Context, f *Factory, opts *RecordOptions) (rerr error) {
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
	if err := record.MkdirPrivate(out); err != nil {
		return err
	}
	cc, err := tc.Control(ctx, sc.Session, true)
	if err != nil {
		return err
	}
	defer cc.Close()
	var panes []mux.Pane
	for _, p := range sc.Panes {
		if p.ID != f.Getenv("TMUX_PANE") { // not the recorder's own pane
			panes = append(panes, p)
		}
	}
	rec := &record.Recorder{Mux: tc, Clock: f.Clock, Session: sc.Session, Panes: panes, Out: out,
		Events: filepath.Join(sc.Info.StateDir, state.EventLog), Redactor: redactor}
	defer func() {
		if err := rec.Close(); err != nil && rerr == nil {
			rerr = err
		}
	}()
	if err := rec.Start(ctx); err != nil {
		return err
	}
	waker, err := state.ListenSession(f.Getenv, sc.Info.StateDir)
	if err != nil {
		return err
	}
	defer waker.Close()
	// Recording has begun: party start --record waits for this lock. A
	// second recorder of the session records all the same.
	if release, err := state.Hold(ctx, f.Clock, filepath.Join(sc.Info.StateDir, recorderLock)); err == nil {
		defer release()
	}
	fmt.Fprintf(f.IO.ErrOut, "party: recording %d panes of %s into %s (Ctrl-C stops)\n", rec.Recording(), sc.Session, out)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	if err := rec.Run(ctx, record.Sources{Output: cc.Output(), Wake: waker.C, Tick: tick.C}); err != nil {
		return err
	}
	if f.JSON {
		writeJSON(f.IO.Out, map[string]string{"recording": out})
	} else {
		fmt.Fprintf(f.IO.Out, "recorded into %s\n", out)
	}
	return nil
}

// recorderLock is held by a recorder of the session once it records.
const recorderLock = "recorder.lock"

// deliverer is the delivery protocol on tmux for a session: it notes in
// the session's event log what it pastes into a pane (as soon as it is in,
// before Enter) and wakes a recorder, so a recording shows it as input at
// the right moment.
func deliverer(f *Factory, tc *tmux.Client, root string, info tmux.SessionInfo, roles map[string]string) *deliver.Deliverer {
	d := &deliver.Deliverer{Mux: tc, Clock: f.Clock, Locker: state.Locker{Dir: lockDir(root, info.SocketPath), Clock: f.Clock}}
	if info.StateDir != "" {
		d.Events = observe.Events{Path: filepath.Join(info.StateDir, state.EventLog)}
		d.Pasted = func(pane, text string) {
			_ = state.AppendEvent(filepath.Join(info.StateDir, state.EventLog),
				map[string]any{"time": f.Clock.Now().UTC(), "kind": "input", "pane": pane, "role": roles[pane], "text": text})
			state.WakeSession(f.Getenv, info.StateDir)
		}
	}
	return d
}
