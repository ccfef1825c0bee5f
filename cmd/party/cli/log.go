package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/wait"
)

func newLogCmd(f *Factory) *cobra.Command {
	var (
		follow bool
		kind   string
	)
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Show the session's event log (hook events, relay blocks and routing)",
		Args:  argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			return logRun(c.Context(), f, follow, kind)
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new events until Ctrl-C")
	cmd.Flags().StringVar(&kind, "kind", "", "only events whose kind starts with this (relay., route., input, turn-)")
	return cmd
}

func logRun(ctx context.Context, f *Factory, follow bool, kind string) error {
	tc := f.Tmux()
	sc, err := openPartyScope(ctx, f, tc)
	if err != nil {
		return err
	}
	info := sc.Info
	path := filepath.Join(info.StateDir, state.EventLog)
	var wake <-chan struct{}
	if follow {
		w, err := state.ListenSession(f.Getenv, info.StateDir)
		if err != nil {
			return err
		}
		defer w.Close()
		wake = w.C
	}
	var offset int64
	for {
		lines, next, err := state.ReadFrom(path, offset)
		if err != nil {
			return err
		}
		offset = next
		for _, l := range lines {
			var ev struct{ Kind string }
			if kind == "" || (json.Unmarshal(l, &ev) == nil && strings.HasPrefix(ev.Kind, kind)) {
				printEvent(f, l)
			}
		}
		if !follow {
			return nil
		}
		if err := (&wait.Waiter{Clock: f.Clock, Wake: wake}).Sleep(ctx, time.Second); err != nil {
			if ctx.Err() != nil {
				return nil // Ctrl-C ends a follow
			}
			return err
		}
	}
}

// printEvent prints one event line: as is with --json, else as
// "TIME KIND key=value …".
func printEvent(f *Factory, line []byte) {
	if f.JSON {
		fmt.Fprintln(f.IO.Out, string(line))
		return
	}
	var m map[string]any
	if json.Unmarshal(line, &m) != nil {
		return
	}
	ts, _ := m["time"].(string)
	if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
		ts = t.Local().Format("15:04:05.000")
	}
	kind, _ := m["kind"].(string)
	delete(m, "time")
	delete(m, "kind")
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := []string{ts, kind}
	for _, k := range keys {
		v, _ := json.Marshal(m[k])
		parts = append(parts, k+"="+clipText(string(v), 120))
	}
	fmt.Fprintln(f.IO.Out, strings.Join(parts, " "))
}

func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
