package spend

import (
	"context"
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
)

// TeamSpend is what spending needs of a team party keeps, read from its
// record (core/session): its ledger, the roles of its agents, and whose
// records party can read.
type TeamSpend struct {
	Name, StateDir string
	// Cwd is the folder the team started in: its configuration sets the
	// team's budgets.
	Cwd    string
	Ledger Ledger
	// Roles are the roles of the panes that run a program other than a
	// shell.
	Roles    []string
	readable map[string]bool
}

// ReadTeam reads the record of the team name in stateDir; codexHome is
// where Codex keeps its rollouts.
func ReadTeam(name, stateDir, codexHome string) (TeamSpend, error) {
	rec, err := session.ReadRecord(stateDir)
	if err != nil {
		return TeamSpend{}, err
	}
	t := TeamSpend{Name: name, StateDir: stateDir, Cwd: rec.Cwd, Ledger: TeamLedger(stateDir, codexHome, rec.PaneRoles()),
		readable: map[string]bool{}}
	for _, p := range rec.Panes {
		if len(p.Argv) > 0 && p.Agent != agent.Shell {
			t.Roles = append(t.Roles, p.Role)
		}
		t.readable[p.Role] = Readable(p.Agent, p.Hooks)
	}
	return t, nil
}

// Guard is cfg's budgets of the team; false when cfg sets none.
func (t TeamSpend) Guard(cfg config.Config, clk clock.Clock) (Guard, bool) {
	if cfg.Budget.None() {
		return Guard{}, false
	}
	return Guard{Team: t.Name, Ledger: t.Ledger, Roles: t.Roles, Budget: cfg.Budget, Prices: cfg.Prices, Clock: clk,
		EventLog: filepath.Join(t.StateDir, state.EventLog)}, true
}

// AnsweredTurn is what the answered turn of role that began at start spent
// (AwaitTurns); nil when the agent's records cannot tell.
func (t TeamSpend) AnsweredTurn(ctx context.Context, clk clock.Clock, role string, start time.Time) (*Turn, error) {
	want := TurnWant{Role: role, Start: start, Answered: true, Readable: t.readable[role]}
	turns, err := AwaitTurns(ctx, clk, t.Ledger, []TurnWant{want})
	return turns[0], err
}

// Report is what party usage prints: the sums, and each budget set with
// what was spent against it.
type Report struct {
	Usage   []Sum   `json:"usage"`
	Budgets []Limit `json:"budgets"`
}

// Tally sums what the agents of teams spent since since, grouped by (a
// Groups entry; "" is role), from their own records (Usage), and says
// where each team stands against cfg's budgets at now.
func Tally(teams []TeamSpend, by string, since time.Time, cfg config.Config, now time.Time) (Report, error) {
	rep := Report{Usage: []Sum{}, Budgets: []Limit{}}
	if by == "" {
		by = "role"
	}
	sums := make([]Team, len(teams))
	for i, t := range teams {
		sums[i] = Team{Name: t.Name, Ledger: t.Ledger}
		for _, r := range t.Roles {
			if !t.readable[r] {
				sums[i].Unread = append(sums[i].Unread, r)
			}
		}
	}
	usage, err := Usage(sums, by, since, cfg.Prices)
	if err != nil {
		return rep, err
	}
	if usage != nil {
		rep.Usage = usage
	}
	for _, t := range teams {
		rs, err := t.Ledger.Sums(time.Time{})
		if err != nil {
			return rep, err
		}
		rep.Budgets = append(rep.Budgets, Budgets(rs, t.Name, t.Roles, cfg.Budget, cfg.Prices, now)...)
	}
	return rep, nil
}

// GuardIn is the budgets of the team in stateDir (named team, started in
// cwd) with cwd's configuration as it is now; false when it sets none or
// either cannot be read.
func GuardIn(getenv func(string) string, clk clock.Clock, team, stateDir, cwd string) (Guard, bool) {
	cfg, _, err := config.Load(getenv, cwd)
	if err != nil || cfg.Budget.None() {
		return Guard{}, false
	}
	ts, err := ReadTeam(team, stateDir, hook.CodexHome(getenv))
	if err != nil {
		return Guard{}, false
	}
	return ts.Guard(cfg, clk)
}

// Held is the supervisor's look at the budgets of the team in stateDir
// (started in cwd) before a delivery to a role: the budget it reached, as
// a Limit says it, else "". The configuration is read each time
// (GuardIn), so a limit raised lets held triggers go; logf is told what
// could not be read.
func Held(getenv func(string) string, clk clock.Clock, team, stateDir, cwd string, logf func(string, ...any)) func(context.Context, string) string {
	return func(_ context.Context, role string) string {
		g, ok := GuardIn(getenv, clk, team, stateDir, cwd)
		if !ok {
			return ""
		}
		limit, reached, err := g.Spent(role)
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
