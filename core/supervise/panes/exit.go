package panes

import (
	"context"
	"sync"
)

// exits tells of the ends of the runtimes' processes, which tmux itself
// may not see: a process tmux did not reap (tmux #4559) leaves its pane
// alive in every listing, and only a Scan finds it (tmux.ListPanes reaps
// it). A process that ended is counted; PanesMark says the count, so that
// the loop scans after an end its listing cannot show.
type exits struct {
	mu      sync.Mutex
	watched map[int]bool // the pids watched, until they end
	ended   int
}

// watch watches each of pids not watched yet until it ends or ctx ends,
// and says whether every one of them is watched (false: a process could
// end unseen, see watchExit).
func (x *exits) watch(ctx context.Context, pids []int) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.watched == nil {
		x.watched = map[int]bool{}
	}
	all := true
	for _, pid := range pids {
		if x.watched[pid] {
			continue
		}
		if !watchExit(ctx, pid, func() { x.end(pid) }) {
			all = false
			continue
		}
		x.watched[pid] = true
	}
	return all
}

// end counts the end of pid, which is no longer watched.
func (x *exits) end(pid int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.watched, pid)
	x.ended++
}

// count is how many watched processes ended so far.
func (x *exits) count() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.ended
}
