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

// Lasting says whether an audit event outlives the store's retention
// (AuditArchive): a trigger's acknowledgement and its end (completed, or
// failed with its class), a thread blocked or unblocked, an operator's
// override. The steps on the way (queued, sent, deferred, retried, a
// fallback's), messages, cursors and the runtimes' comings and goings
// are pruned with their rows.
func Lasting(kind string) bool {
	switch kind {
	case AuditAck, AuditCompleted, AuditFailed, AuditBlocked, AuditUnblocked, AuditOverride:
		return true
	}
	return false
}

// prune deletes a batch of the records older than Keep when one is due:
// at the first pass, again at the next pass while whole batches go, then
// every pruneEvery. The audit events that last go to the Effects'
// archive first (AuditArchive); none is deleted that it could not keep.
func (l *Loop) prune(ctx context.Context) {
	if l.Keep <= 0 || l.now().Before(l.pruneDue) {
		return
	}
	var kept func()
	n, err := l.Store.Prune(ctx, l.now().Add(-l.Keep), pruneBatch, func(evs []AuditEvent) (err error) {
		kept, err = l.archive(ctx, evs)
		return err
	})
	if err != nil {
		l.logf("prune: %v", err)
	} else if kept != nil {
		kept()
	}
	if err != nil || n < pruneBatch {
		l.pruneDue = l.now().Add(pruneEvery)
	}
	if n > 0 {
		l.logf("pruned %d records older than %s", n, l.Keep)
	}
}

// archive gives the lasting ones of evs to the Effects' archive, if they
// have one.
func (l *Loop) archive(ctx context.Context, evs []AuditEvent) (func(), error) {
	a, ok := l.Effects.(AuditArchive)
	if !ok {
		return nil, nil
	}
	var lasting []AuditEvent
	for _, ev := range evs {
		if Lasting(ev.Kind) {
			lasting = append(lasting, ev)
		}
	}
	if len(lasting) == 0 {
		return nil, nil
	}
	return a.Archive(ctx, lasting)
}
