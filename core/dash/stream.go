package dash

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/partyhq/party/core/tmux"
)

// Stream writes the model of sessions to out as a line of JSON at once,
// then each time it changed (at most every every) and at least every
// beat, so that the reader knows this host answers, until out fails or
// ctx ends (party dash --stream, the other end of a dashboard on another
// host). The goroutine that watches the sessions (Watch) ends before it
// returns.
func (f Feed) Stream(ctx context.Context, sessions []tmux.SessionInfo, out io.Writer, every, beat time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m, err := f.Snapshot(ctx, sessions)
	if err != nil {
		return err
	}
	events := make(chan Event, 64)
	var wg sync.WaitGroup
	wg.Go(func() { f.Watch(ctx, events) }) // ends with ctx
	defer wg.Wait()
	defer cancel()
	enc := json.NewEncoder(out)
	last := f.Clock.Now()
	if err := enc.Encode(m); err != nil {
		return err
	}
	dirty := false
	look := f.Clock.NewTimer(every)
	defer look.Stop()
	for {
		look.Reset(every)
		select {
		case <-ctx.Done():
			return nil
		case ev := <-events:
			m, dirty = Update(m, ev), true
		case <-look.C():
		}
		now := f.Clock.Now()
		if since := now.Sub(last); (dirty && since >= every) || since >= beat {
			m = Update(m, Tick{Now: now})
			if err := enc.Encode(m); err != nil {
				return err
			}
			last, dirty = now, false
		}
	}
}
