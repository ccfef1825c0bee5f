package party

import (
	"context"
	"fmt"
	"time"

	"github.com/partyhq/party/core/supervise"
)

// TriggerListOptions select the triggers party trigger list shows.
type TriggerListOptions struct {
	Status string
	// Since is a duration back from now ("2h") or an RFC 3339 time.
	Since string
	// Before is the id of a trigger: only those recorded before it (the
	// page before one that began with it).
	Before string
	// Limit is the most to show, the newest; 0 is all.
	Limit int
}

// DefaultTriggerLimit is what trigger list shows without --limit: a
// screen.
const DefaultTriggerLimit = 50

// TriggerPage is a page of the trigger list (supervise.TriggerPage).
type TriggerPage = supervise.TriggerPage

// TriggerList lists the recorded triggers that opts select.
func TriggerList(ctx context.Context, env *Env, opts TriggerListOptions) (TriggerPage, error) {
	if opts.Limit < 0 {
		return TriggerPage{}, fmt.Errorf("%w: --limit %d: want 0 (all) or more", ErrUsage, opts.Limit)
	}
	f := supervise.TriggerFilter{Before: opts.Before}
	if opts.Status != "" {
		st, err := supervise.ParseTriggerStatus(opts.Status)
		if err != nil {
			return TriggerPage{}, fmt.Errorf("%w: %w", ErrUsage, err)
		}
		f.Status = st
	}
	if opts.Since != "" {
		t, err := sinceTime(env.Clock.Now(), opts.Since)
		if err != nil {
			return TriggerPage{}, err
		}
		f.Since = t
	}
	d, err := openDoor(ctx, env)
	if err != nil {
		return TriggerPage{}, err
	}
	return supervise.ListTriggers(ctx, d, f, opts.Limit)
}

// sinceTime is the time --since names: a duration back from now, or an
// RFC 3339 time.
func sinceTime(now time.Time, v string) (time.Time, error) {
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%w: --since %q: want a duration back from now (90m, 24h) or an RFC 3339 time (2026-11-29T08:00:00Z)", ErrUsage, v)
}
