package wait

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/state"
)

// LogOptions say what ReadLog reads of a session's event log.
type LogOptions struct {
	StateDir string
	Kind     string // only events whose kind starts with this
	// Follow keeps reading new events, woken by the session's wake-ups
	// (or every second), until ctx ends.
	Follow bool
	Getenv func(string) string // the wake dir
	Clock  clock.Clock
}

// ReadLog calls emit with each line of the event log of opts.StateDir
// (state.EventLog) whose kind matches. Following, it returns nil when ctx
// ends (Ctrl-C ends a follow).
func ReadLog(ctx context.Context, opts LogOptions, emit func(line []byte)) error {
	path := filepath.Join(opts.StateDir, state.EventLog)
	w := &Waiter{Clock: opts.Clock}
	if opts.Follow {
		l, err := state.ListenSession(opts.Getenv, opts.StateDir)
		if err != nil {
			return err
		}
		defer l.Close()
		w.Wake = l.C
	}
	var offset int64
	for {
		lines, next, err := state.ReadFrom(path, offset)
		if err != nil {
			return err
		}
		offset = next
		for _, l := range lines {
			if opts.Kind == "" || strings.HasPrefix(state.EventKind(l), opts.Kind) {
				emit(l)
			}
		}
		if !opts.Follow {
			return nil
		}
		if err := w.Sleep(ctx, time.Second); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}
