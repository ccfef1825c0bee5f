package party

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/spend"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
)

// ErrBudget is a send or talk to an agent whose budget is spent.
var ErrBudget = errors.New("budget reached")

// checkBudget refuses role of the team in stateDir (named team) when a
// budget that bounds it is spent, unless force with why: then the
// override goes to the team's event log.
func checkBudget(env *Env, team, stateDir, role string, force bool, why string) error {
	cfg, err := env.Config()
	if err != nil || cfg.Budget == (config.Budget{}) {
		return err
	}
	limit, reached, err := spentBudget(env, cfg, team, stateDir, role)
	switch {
	case err != nil || !reached:
		return err
	case !force || strings.TrimSpace(why) == "":
		return fmt.Errorf("%s: %s (--force --why TEXT sends all the same, and says so in the event log): %w", role, limit, ErrBudget)
	}
	return state.AppendEvent(filepath.Join(stateDir, state.EventLog), hook.Event{Time: env.Clock.Now().UTC(), Role: role,
		Agent: "party", Kind: "budget_override", Message: limit.String() + ": " + why})
}

// spentBudget is the first budget of cfg that bounds role of the team in
// stateDir and is spent, from what the agents recorded by now.
func spentBudget(env *Env, cfg config.Config, team, stateDir, role string) (spend.Limit, bool, error) {
	rec, err := session.ReadRecord(stateDir)
	if err != nil {
		return spend.Limit{}, false, nil // a session party did not start: no team, no budget
	}
	l := ledgerOf(env, stateDir, rec)
	if err := l.Scan(); err != nil {
		return spend.Limit{}, false, err
	}
	rs, err := l.Responses()
	if err != nil {
		return spend.Limit{}, false, err
	}
	limit, reached := spend.Reached(spend.Budgets(rs, team, agentRoles(rec), cfg.Budget, cfg.Prices, env.Clock.Now()), role)
	return limit, reached, nil
}

// supervisedBudget is the supervisor's look at the budgets of the team in
// stateDir (started in cwd) before a delivery to role: the configuration
// is read each time, so a limit raised lets held triggers go.
func supervisedBudget(env *Env, team, stateDir, cwd string, logf func(string, ...any)) func(context.Context, string) string {
	return func(_ context.Context, role string) string {
		cfg, _, err := config.Load(env.Getenv, cwd)
		if err != nil || cfg.Budget == (config.Budget{}) {
			return ""
		}
		limit, reached, err := spentBudget(env, cfg, team, stateDir, role)
		if err != nil {
			logf("budget of %s: %v", role, err)
			return ""
		}
		if !reached {
			return ""
		}
		return limit.String()
	}
}

// supervisedUsage is what the agents of the team in stateDir (started in
// cwd) spent, for the supervisor's /metrics: read from the team's ledger
// (what the records gained since the last read) at each scrape, priced
// at the configuration as it is then.
func supervisedUsage(env *Env, stateDir, cwd string, logf func(string, ...any)) func() []supervise.UsageSample {
	return func() []supervise.UsageSample {
		rec, err := session.ReadRecord(stateDir)
		if err != nil {
			return nil
		}
		l := ledgerOf(env, stateDir, rec)
		if err := l.Scan(); err != nil {
			logf("usage for /metrics: %v", err)
		}
		rs, err := l.Responses()
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
