package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/partyhq/party/core/clock"
)

// A pane's key gate closes the moment between a sender's last look at an
// agent and the agent reading the sender's key. The agent's hooks (party
// hook) hold it while they run and, as they let go, stamp the file with
// the time they ended; a sender holds it from that last look until the
// agent read the key. So no hook starts its work or ends between the
// look and the key, and the look can tell when one last ended. The real
// Claude runs its queue as a turn ends, after its Stop hook: an Enter
// read between the hook and the queue ran that text at once and kept it
// queued too (docs/agents-reference.md).

// GateDir is where, in a session's state dir, the panes' key gates are.
const GateDir = "gates"

// GatePath is the key gate of pane (tmux's "%7") in stateDir.
func GatePath(stateDir, pane string) string {
	return filepath.Join(stateDir, GateDir, strings.TrimPrefix(pane, "%"))
}

// gatePoll is how often a held gate is tried again: flock cannot wait
// for a bounded time.
const gatePoll = 2 * time.Millisecond

// HoldGate takes the key gate at path, waiting at most wait for another
// holder (then ErrHeld), and returns when a hook last let go of it (zero:
// never) and the release. release(true) stamps the file with the time,
// as a hook does; release(false) leaves it as it was.
func HoldGate(ctx context.Context, clk clock.Clock, path string, wait time.Duration) (ended time.Time, release func(stamp bool), err error) {
	if err := MkdirPrivate(filepath.Dir(path)); err != nil {
		return time.Time{}, nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return time.Time{}, nil, fmt.Errorf("key gate %s: %w", path, err)
	}
	deadline := clk.Now().Add(wait)
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return time.Time{}, nil, fmt.Errorf("key gate %s: %w", path, err)
		}
		if !clk.Now().Before(deadline) {
			f.Close()
			return time.Time{}, nil, fmt.Errorf("key gate %s: %w", path, ErrHeld)
		}
		if err := clk.Sleep(ctx, gatePoll); err != nil {
			f.Close()
			return time.Time{}, nil, err
		}
	}
	b := make([]byte, 64)
	n, _ := f.ReadAt(b, 0)
	ended, _ = time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b[:n])))
	return ended, func(stamp bool) {
		if stamp {
			if f.Truncate(0) == nil {
				_, _ = f.WriteAt([]byte(clk.Now().UTC().Format(time.RFC3339Nano)+"\n"), 0)
			}
		}
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
