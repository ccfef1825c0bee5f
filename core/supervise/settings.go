package supervise

import (
	"time"

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
