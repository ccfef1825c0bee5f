package party

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/spend"
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
			if len(p.Argv) > 0 && p.Agent != agent.Shell && !readable(p.Agent, p.Hooks) {
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
		rs, err := t.Ledger.Responses()
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

// BudgetRow is l as party usage prints it.
func BudgetRow(l spend.Limit) []string {
	pct := "-"
	if l.Limit > 0 {
		pct = fmt.Sprintf("%.0f%%", 100*l.Spent/l.Limit)
	}
	f := func(v float64) string {
		if l.Unit == "usd" {
			return fmt.Sprintf("%.4f", v)
		}
		return fmt.Sprintf("%.0f", v)
	}
	return []string{l.Key, l.Scope, f(l.Spent), f(l.Limit), f(l.Left), pct}
}

// BudgetHeader is the header of party usage's table of budgets.
func BudgetHeader() []string { return []string{"BUDGET", "FOR", "SPENT", "LIMIT", "LEFT", "USED"} }

// UsageRow is s as party usage prints it: the cost in USD, or "no price"
// when a model of its responses has none.
func UsageRow(s UsageSum) []string {
	if s.Unknown {
		return []string{s.Key, "-", "unknown", "unknown", "unknown", "unknown", "unknown", "unknown", "unknown"}
	}
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	cost := "no price"
	if s.Cost != nil {
		cost = fmt.Sprintf("%.4f", *s.Cost)
	}
	return []string{s.Key, strconv.Itoa(s.Responses), n(s.Input), n(s.Output), n(s.CacheRead), n(s.CacheWrite), n(s.Reasoning), n(s.Total), cost}
}

// UsageHeader is the header of party usage's table.
func UsageHeader(by string) []string {
	if by == "" {
		by = "role"
	}
	return []string{strings.ToUpper(by), "RESPONSES", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "REASONING", "TOTAL", "COST USD"}
}

// ledgerOf is the spend ledger of the team in stateDir.
func ledgerOf(env *Env, stateDir string, rec session.Record) spend.Ledger {
	return spend.TeamLedger(stateDir, hook.CodexHome(env.Getenv), rec.PaneRoles())
}

// readable says whether party finds the usage of an agent of kind whose
// hooks are wired as hooks says: Gemini's chat file is named only by its
// hooks' events (a gemini pane on the marker has none).
func readable(kind agent.Kind, hooks string) bool {
	return spend.Keeps(kind) && (kind != agent.Gemini || hooks != "")
}

// usageLag bounds how long turnUsage waits for an agent's record of a
// turn that already ended: Claude Code writes its transcript a moment
// after its Stop hook (100-150 ms measured on 2.1.197).
const usageLag = 3 * time.Second

// turnUsage fills in each answered turn's usage (spend.TurnOf), waiting
// up to usageLag for agents that keep usage whose record does not show
// the turn's end yet (a last response that asked for no tool).
func turnUsage(ctx context.Context, env *Env, stateDir string, targets []mux.Pane, results []talk.Result, out []TalkOutcome) {
	rec, err := session.ReadRecord(stateDir)
	if err != nil {
		return
	}
	l := ledgerOf(env, stateDir, rec)
	for deadline := env.Clock.Now().Add(usageLag); ; {
		err := l.Scan()
		var rs []spend.Response
		if err == nil {
			rs, err = l.Responses()
		}
		if err != nil {
			env.Warnf("the turns' usage: %v", err)
			return
		}
		missing := false
		for i, r := range results {
			if r.Err == nil && r.Answer != nil {
				out[i].Usage = spend.TurnOf(rs, r.Role, r.Turn)
				whole := out[i].Usage != nil && out[i].Usage.Ended
				missing = missing || (!whole && readable(agent.Kind(targets[i].Agent), targets[i].Hooks))
			}
		}
		if !missing || !env.Clock.Now().Before(deadline) || env.Clock.Sleep(ctx, 100*time.Millisecond) != nil {
			return
		}
	}
}
