package supervise

import (
	"context"
	"time"
)

// Retention: the closed triggers, their transitions and the audit rows
// older than Loop.Keep are pruned a batch at a time, so that a prune never
// holds the store's writer long, and a pass goes on with its triggers.
const (
	// pruneBatch bounds the rows of each kind one pass deletes.
	pruneBatch = 500
	// pruneEvery is how long the loop waits after a prune that found
	// fewer than a batch: nothing old is left till then.
	pruneEvery = time.Hour
)

// prune deletes a batch of the records older than Keep when one is due:
// at the first pass, again at the next pass while whole batches go, then
// every pruneEvery.
func (l *Loop) prune(ctx context.Context) {
	if l.Keep <= 0 || l.now().Before(l.pruneDue) {
		return
	}
	n, err := l.Store.Prune(ctx, l.now().Add(-l.Keep), pruneBatch)
	if err != nil {
		l.logf("prune: %v", err)
	}
	if err != nil || n < pruneBatch {
		l.pruneDue = l.now().Add(pruneEvery)
	}
	if n > 0 {
		l.logf("pruned %d records older than %s", n, l.Keep)
	}
}
