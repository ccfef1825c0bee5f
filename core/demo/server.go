package demo

import (
	"context"
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/tmux"
)

// StopServer kills the demo's tmux server (where session runs), waits up
// to 5 s for its process to exit and removes its socket.
func StopServer(ctx context.Context, tc *tmux.Client, clk clock.Clock, session string) {
	rows, err := tc.Query(ctx, []string{"#{pid}", "#{socket_path}"}, "display-message", "-p", "-t", tmux.SessionTarget(session))
	_, _ = tc.Run(ctx, "kill-server")
	if err != nil || len(rows) != 1 {
		return
	}
	pid, _ := strconv.Atoi(rows[0][0])
	for i := 0; i < 500 && pid > 0; i++ {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			break
		}
		if clk.Sleep(ctx, 10*time.Millisecond) != nil {
			break
		}
	}
	_ = os.Remove(rows[0][1])
}
