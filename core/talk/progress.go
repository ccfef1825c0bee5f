package talk

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/partyhq/party/core/clock"
)

// Progress shows on w that a talk waits for the agents of roles: a
// spinner line on a terminal (tty), else a line every 5 seconds. The
// returned func stops it (and clears the spinner) once the goroutine has
// ended.
func Progress(ctx context.Context, c clock.Clock, w io.Writer, tty bool, roles []string) (stop func()) {
	who := strings.Join(roles, ", ")
	every := 5 * time.Second
	if tty {
		every = 100 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	start := c.Now()
	go func() {
		defer close(done)
		frames := []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
		for i := 0; ; i++ {
			if c.Sleep(ctx, every) != nil {
				if tty {
					fmt.Fprint(w, "\r\033[K")
				}
				return
			}
			secs := int(c.Now().Sub(start).Seconds())
			if tty {
				fmt.Fprintf(w, "\r\033[K%c Waiting for %s… %ds", frames[i%len(frames)], who, secs)
			} else {
				fmt.Fprintf(w, "party: waiting for %s… %ds\n", who, secs)
			}
		}
	}()
	return func() { cancel(); <-done }
}
