package party

import (
	"fmt"
	"time"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/notify"
	"github.com/partyhq/party/core/spend"
	"github.com/partyhq/party/core/supervise"
)

// notifiedBudgets are the budgets of the team in stateDir (started in cwd)
// as the notifier tells of them.
func notifiedBudgets(env *Env, team, stateDir, cwd string, warn func(error)) func() []notify.BudgetUse {
	return func() []notify.BudgetUse {
		g, ok := spend.GuardIn(env.Getenv, env.Clock, team, stateDir, cwd)
		if !ok {
			return nil
		}
		limits, err := g.Limits()
		if err != nil {
			warn(fmt.Errorf("budgets: %w", err))
			return nil
		}
		out := make([]notify.BudgetUse, 0, len(limits))
		for _, l := range limits {
			out = append(out, notify.BudgetUse{Key: l.Key, Scope: l.Scope, Role: l.Role, Used: l.Spent / l.Limit, Text: l.String()})
		}
		return out
	}
}

// supervisedUsage is what the agents of the team in stateDir (started in
// cwd) spent, for the supervisor's /metrics: read from the team's ledger
// (what the records gained since the last read) at each scrape, priced
// at the configuration as it is then.
func supervisedUsage(env *Env, stateDir, cwd string, logf func(string, ...any)) func() []supervise.UsageSample {
	return func() []supervise.UsageSample {
		ts, err := teamSpend(env, "", stateDir)
		if err != nil {
			return nil
		}
		if err := ts.Ledger.Scan(); err != nil {
			logf("usage for /metrics: %v", err)
		}
		rs, err := ts.Ledger.Sums(time.Time{})
		if err != nil {
			logf("usage for /metrics: %v", err)
			return nil
		}
		cfg, _, _ := config.Load(env.Getenv, cwd)
		var out []supervise.UsageSample
		for _, c := range spend.Counters(rs, cfg.Prices) {
			out = append(out, supervise.UsageSample{Role: c.Role, Agent: string(c.Agent), Model: c.Model, Cost: c.Cost,
				Tokens: map[string]int64{"input": c.Input, "output": c.Output, "cache_read": c.CacheRead, "cache_write": c.CacheWrite, "reasoning": c.Reasoning}})
		}
		return out
	}
}
