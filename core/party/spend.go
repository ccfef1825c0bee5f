package party

import (
	"context"
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/spend"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/talk"
)

// UsageOptions are the inputs of Usage (party usage).
type UsageOptions struct {
	By    string // a spend.Groups entry; "" is role
	Since string // a duration back from now or an RFC 3339 time
	All   bool   // every folder's teams, not only this one's
}

// UsageSum is one row of party usage; TurnUsage what a turn spent.
type (
	UsageSum  = spend.Sum
	TurnUsage = spend.Turn
)

// UsageGroups are the ways party usage groups (--by).
var UsageGroups = spend.Groups

// UsageReport is what party usage prints: the sums, and each budget set
// with what was spent against it.
type UsageReport struct {
	Usage   []UsageSum    `json:"usage"`
	Budgets []spend.Limit `json:"budgets"`
}

// Usage sums what the agents of the teams party keeps here (every
// folder's with All) spent, from their own records (spend.Usage), and
// says where each team stands against its budgets (budget.*).
func Usage(ctx context.Context, env *Env, opts UsageOptions) (UsageReport, error) {
	rep := UsageReport{Usage: []UsageSum{}, Budgets: []spend.Limit{}}
	by := opts.By
	if by == "" {
		by = "role"
	}
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
	var teams []spend.Team
	var roles [][]string // each team's agent roles, for its budgets
	for _, t := range stored {
		rec, err := session.ReadRecord(t.StateDir)
		if err != nil {
			continue
		}
		team := spend.Team{Name: t.Name, Ledger: ledgerOf(env, t.StateDir, rec)}
		for _, p := range rec.Panes {
			if len(p.Argv) > 0 && p.Agent != agent.Shell && !spend.Readable(p.Agent, p.Hooks) {
				team.Unread = append(team.Unread, p.Role)
			}
		}
		teams = append(teams, team)
		roles = append(roles, agentRoles(rec))
	}
	sums, err := spend.Usage(teams, by, since, cfg.Prices)
	if err != nil {
		return rep, err
	}
	if sums != nil {
		rep.Usage = sums
	}
	for i, t := range teams {
		rs, err := t.Ledger.Sums(time.Time{})
		if err != nil {
			return rep, err
		}
		rep.Budgets = append(rep.Budgets, spend.Budgets(rs, t.Name, roles[i], cfg.Budget, cfg.Prices, env.Clock.Now())...)
	}
	return rep, nil
}

// agentRoles are the roles of rec's panes that run a program.
func agentRoles(rec session.Record) []string {
	var out []string
	for _, p := range rec.Panes {
		if len(p.Argv) > 0 && p.Agent != agent.Shell {
			out = append(out, p.Role)
		}
	}
	return out
}

// UsageRow and BudgetRow are a sum and a budget as party usage prints
// them, under UsageHeader and BudgetHeader.
var (
	UsageRow     = spend.Sum.Row
	UsageHeader  = spend.Header
	BudgetRow    = spend.Limit.Row
	BudgetHeader = spend.LimitHeader
)

// checkBudget refuses role of the team in stateDir (named team) when a
// budget that bounds it is spent, unless force with why: then the
// override goes to the team's event log (spend.Guard).
func checkBudget(env *Env, team, stateDir, role string, force bool, why string) error {
	cfg, err := env.Config()
	if err != nil {
		return err
	}
	g, ok := guardOf(env, cfg, team, stateDir)
	if !ok {
		return nil
	}
	return g.Check(role, force, why)
}

// guardOf is cfg's budgets of the team in stateDir (named team): ok false
// when cfg sets none or the team has no record (a session party did not
// start: no team, no budget).
func guardOf(env *Env, cfg config.Config, team, stateDir string) (spend.Guard, bool) {
	if cfg.Budget.None() {
		return spend.Guard{}, false
	}
	rec, err := session.ReadRecord(stateDir)
	if err != nil {
		return spend.Guard{}, false
	}
	return spend.Guard{Team: team, Ledger: ledgerOf(env, stateDir, rec), Roles: agentRoles(rec), Budget: cfg.Budget,
		Prices: cfg.Prices, Clock: env.Clock, EventLog: filepath.Join(stateDir, state.EventLog)}, true
}

// ledgerOf is the spend ledger of the team in stateDir.
func ledgerOf(env *Env, stateDir string, rec session.Record) spend.Ledger {
	return spend.TeamLedger(stateDir, hook.CodexHome(env.Getenv), rec.PaneRoles())
}

// turnUsage fills in each answered turn's usage (spend.AwaitTurns); a
// record it cannot read is a warning.
func turnUsage(ctx context.Context, env *Env, stateDir string, targets []mux.Pane, results []talk.Result, out []TalkOutcome) {
	rec, err := session.ReadRecord(stateDir)
	if err != nil {
		return
	}
	wants := make([]spend.TurnWant, len(results))
	for i, r := range results {
		wants[i] = spend.TurnWant{Role: r.Role, Start: r.Turn, Answered: r.Err == nil && r.Answer != nil,
			Readable: spend.Readable(agent.Kind(targets[i].Agent), targets[i].Hooks)}
	}
	turns, err := spend.AwaitTurns(ctx, env.Clock, ledgerOf(env, stateDir, rec), wants)
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
// (spend.AwaitTurns); nil when the session's records cannot tell.
func triggerUsage(ctx context.Context, env *Env, stateDir string, t supervise.Trigger) *spend.Turn {
	rec, err := session.ReadRecord(stateDir)
	if err != nil {
		return nil
	}
	start := t.DeliveredAt
	if t.Turn != nil && !t.Turn.Since.IsZero() {
		start = t.Turn.Since // just before the send
	}
	want := spend.TurnWant{Role: t.Role, Start: start, Answered: true}
	for _, p := range rec.Panes {
		if p.Role == t.Role {
			want.Readable = spend.Readable(p.Agent, p.Hooks)
		}
	}
	turns, err := spend.AwaitTurns(ctx, env.Clock, ledgerOf(env, stateDir, rec), []spend.TurnWant{want})
	if err != nil {
		env.Warnf("the trigger's usage: %v", err)
	}
	return turns[0]
}
