package supervise

import (
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/state"

	"github.com/partyhq/party/core/config"
)

// PolicyOf, LimitsOf and RecoveryOf are the supervisor's numbers from the
// configuration's supervise.* keys.
func PolicyOf(c config.Supervise) Policy {
	return Policy{AckTimeout: c.AckTimeout, Retries: c.Retries, Backoff: c.Backoff,
		QuietWindow: c.QuietWindow, DeferRecheck: c.DeferRecheck, MaxDefer: c.MaxDefer,
		FallbackTries: c.FallbackTries, Spawn: c.Spawn}
}

func LimitsOf(c config.Supervise) Limits {
	return Limits{MaxText: c.MaxText, PerRuntime: c.PerRuntime, PerThread: c.PerThread, Window: c.RateWindow,
		MaxTurns: c.MaxTurns, SameAnswers: c.SameAnswers}
}

func RecoveryOf(c config.Supervise) RecoveryPolicy {
	return RecoveryPolicy{RestartAfter: c.RestartAfter, NotAgentGrace: c.NotAgent, MaxRestarts: c.MaxRestarts,
		RestartWindow: 15 * time.Minute, StaleAfter: c.StaleAfter}
}

// OpenOps opens the store of the supervisor of the session whose state
// dir is stateDir (made on first use, with its directory) and its
// operations under c's policy and limits; Wake, Managed and StopPane are
// the caller's to set, and the store its to close.
func OpenOps(stateDir string, clk clock.Clock, c config.Supervise) (*Ops, error) {
	dir := Dir(stateDir)
	if err := state.MkdirPrivate(dir); err != nil {
		return nil, err
	}
	st, err := Open(filepath.Join(dir, StoreFile))
	if err != nil {
		return nil, err
	}
	return &Ops{Store: st, Clock: clk, Policy: PolicyOf(c), Limits: LimitsOf(c)}, nil
}
