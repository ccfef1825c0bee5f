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

	"github.com/partyhq/party/core/deliver"
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
		fh, err := record.Create(filepath.Join(out, name+".cast"))
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
		defer func() {
			// A recording whose tail was not written is an error.
			if err := c.Flush(); err != nil && rerr == nil {
				rerr = err
			}
		}()
		// The recording starts from what the pane shows now.
		if screen, err := tc.Capture(ctx, p.ID, 0); err == nil {
			if err := c.Output(start, []byte("\x1b[H\x1b[2J"+strings.ReplaceAll(screen, "\n", "\r\n")+"\r\n")); err != nil {
				return err
			}
		}
	}
	events := filepath.Join(sc.Info.StateDir, state.EventLog)
	offset := state.Size(events)
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
		case <-waker.C: // an input was logged
			offset = recordSide(ctx, f, tc, sc.Session, casts, sizes, events, offset)
		case <-tick.C:
			offset = recordSide(ctx, f, tc, sc.Session, casts, sizes, events, offset)
		case <-ctx.Done():
			recordSide(context.WithoutCancel(ctx), f, tc, sc.Session, casts, sizes, events, offset)
			return finishRecording(f, events, out, redactor)
		}
	}
}

// recorderLock is held by a recorder of the session once it records.
const recorderLock = "recorder.lock"

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
		if err := record.WriteFile(filepath.Join(out, "events.jsonl"), []byte(r.Redact(string(b)))); err != nil {
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
