package party

import (
	"context"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/spend"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/talk"
)

// UsageOptions are the inputs of Usage (party usage).
type UsageOptions struct {
	By    string // a spend.Groups entry; "" is role
	Since string // a duration back from now or an RFC 3339 time
	All   bool   // every folder's teams, not only this one's
}

// UsageSum is one row of party usage; TurnUsage what a turn spent;
// UsageReport what party usage prints.
type (
	UsageSum    = spend.Sum
	TurnUsage   = spend.Turn
	UsageReport = spend.Report
)

// UsageGroups are the ways party usage groups (--by).
var UsageGroups = spend.Groups

// Usage sums what the agents of the teams party keeps here (every
// folder's with All) spent, from their own records, and says where each
// team stands against its budgets (budget.*): spend.Tally.
func Usage(ctx context.Context, env *Env, opts UsageOptions) (UsageReport, error) {
	rep := UsageReport{Usage: []UsageSum{}, Budgets: []spend.Limit{}}
	var since time.Time
	if opts.Since != "" {
		var err error
		if since, err = sinceTime(env.Clock.Now(), opts.Since); err != nil {
			return rep, err
		}
	}
	cfg, err := env.Config()
	if err != nil {
		return rep, err
	}
	stored, err := Teams(ctx, env, opts.All)
	if err != nil {
		return rep, err
	}
	var teams []spend.TeamSpend
	for _, t := range stored {
		if ts, err := teamSpend(env, t.Name, t.StateDir); err == nil {
			teams = append(teams, ts)
		}
	}
	return spend.Tally(teams, opts.By, since, cfg, env.Clock.Now())
}

// UsageRow and BudgetRow are a sum and a budget as party usage prints
// them, under UsageHeader and BudgetHeader.
var (
	UsageRow     = spend.Sum.Row
	UsageHeader  = spend.Header
	BudgetRow    = spend.Limit.Row
	BudgetHeader = spend.LimitHeader
)

// teamSpend is the spending of the team name in stateDir (spend.ReadTeam).
func teamSpend(env *Env, name, stateDir string) (spend.TeamSpend, error) {
	return spend.ReadTeam(name, stateDir, hook.CodexHome(env.Getenv))
}

// checkBudget refuses role of the team in stateDir (named team) when a
// budget that bounds it is spent, unless force with why: then the
// override goes to the team's event log (spend.Guard). A session party
// did not start has no team, and so no budget.
func checkBudget(env *Env, team, stateDir, role string, force bool, why string) error {
	cfg, err := env.Config()
	if err != nil || cfg.Budget.None() {
		return err
	}
	ts, err := teamSpend(env, team, stateDir)
	if err != nil {
		return nil
	}
	g, _ := ts.Guard(cfg, env.Clock)
	return g.Check(role, force, why)
}

// turnUsage fills in each answered turn's usage (spend.AwaitTurns); a
// record it cannot read is a warning.
func turnUsage(ctx context.Context, env *Env, stateDir string, targets []mux.Pane, results []talk.Result, out []TalkOutcome) {
	ts, err := teamSpend(env, "", stateDir)
	if err != nil {
		return
	}
	wants := make([]spend.TurnWant, len(results))
	for i, r := range results {
		wants[i] = spend.TurnWant{Role: r.Role, Start: r.Turn, Answered: r.Err == nil && r.Answer != nil,
			Readable: spend.Readable(agent.Kind(targets[i].Agent), targets[i].Hooks)}
	}
	turns, err := spend.AwaitTurns(ctx, env.Clock, ts.Ledger, wants)
	for i, w := range wants {
		if w.Answered {
			out[i].Usage = turns[i]
		}
	}
	if err != nil {
		env.Warnf("the turns' usage: %v", err)
	}
}

// triggerUsage is what the turn an answered trigger of the team in
// stateDir started spent: its agent's responses since its delivery began
// (spend.TeamSpend.AnsweredTurn); nil when the session's records cannot tell.
func triggerUsage(ctx context.Context, env *Env, stateDir string, t supervise.Trigger) *spend.Turn {
	ts, err := teamSpend(env, "", stateDir)
	if err != nil {
		return nil
	}
	start := t.DeliveredAt
	if t.Turn != nil && !t.Turn.Since.IsZero() {
		start = t.Turn.Since // just before the send
	}
	turn, err := ts.AnsweredTurn(ctx, env.Clock, t.Role, start)
	if err != nil {
		env.Warnf("the trigger's usage: %v", err)
	}
	return turn
}
