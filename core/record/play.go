package record

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/partyhq/party/core/clock"
)

// Play writes the output events of a cast to w with their recorded
// pacing, speed times faster; noDelay writes them at once.
func Play(ctx context.Context, c clock.Clock, w io.Writer, events []Event, speed float64, noDelay bool) error {
	var at float64
	for _, e := range events {
		if e.Kind != "o" {
			continue
		}
		if !noDelay && e.Time > at {
			if err := c.Sleep(ctx, time.Duration((e.Time-at)/speed*float64(time.Second))); err != nil {
				return err
			}
		}
		at = e.Time
		if _, err := fmt.Fprint(w, e.Data); err != nil {
			return err
		}
	}
	return nil
}
