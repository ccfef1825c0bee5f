package spend

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/state"
)

// Row is s as party usage prints it: the cost in USD, or "no price" when
// a model of its responses has none.
func (s Sum) Row() []string {
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

// Header is the header of party usage's table of sums grouped by by ("":
// role).
func Header(by string) []string {
	if by == "" {
		by = "role"
	}
	return []string{strings.ToUpper(by), "RESPONSES", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "REASONING", "TOTAL", "COST USD"}
}

// Row is l as party usage prints it.
func (l Limit) Row() []string {
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

// LimitHeader is the header of party usage's table of budgets.
func LimitHeader() []string { return []string{"BUDGET", "FOR", "SPENT", "LIMIT", "LEFT", "USED"} }

// Readable says whether party finds the usage of an agent of kind whose
// hooks are wired as hooks says: Gemini's chat file is named only by its
// hooks' events (a gemini pane on the marker has none).
func Readable(kind agent.Kind, hooks string) bool {
	return Keeps(kind) && (kind != agent.Gemini || hooks != "")
}

// ErrBudget is a send or talk to an agent whose budget is spent.
var ErrBudget = errors.New("budget reached")

// Guard is the budgets of one team, as a send or talk checks them.
type Guard struct {
	Team   string
	Ledger Ledger
	Roles  []string // the team's agent roles
	Budget config.Budget
	Prices Prices
	Clock  clock.Clock
	// EventLog is the team's event log, where an override is written.
	EventLog string
}

// Limits are the team's budgets and what was spent against them, from
// what the agents recorded by now.
func (g Guard) Limits() ([]Limit, error) {
	rs, err := g.Ledger.ScanSums(time.Time{})
	if err != nil {
		return nil, err
	}
	return Budgets(rs, g.Team, g.Roles, g.Budget, g.Prices, g.Clock.Now()), nil
}

// Spent is the first budget that bounds role and is spent (reached
// false: none).
func (g Guard) Spent(role string) (limit Limit, reached bool, err error) {
	limits, err := g.Limits()
	if err != nil {
		return Limit{}, false, err
	}
	limit, reached = Reached(limits, role)
	return limit, reached, nil
}

// Check refuses role when a budget that bounds it is spent (ErrBudget),
// unless force with why: then the override goes to the event log.
func (g Guard) Check(role string, force bool, why string) error {
	limit, reached, err := g.Spent(role)
	switch {
	case err != nil || !reached:
		return err
	case !force || strings.TrimSpace(why) == "":
		return fmt.Errorf("%s: %s (--force --why TEXT sends all the same, and says so in the event log): %w", role, limit, ErrBudget)
	}
	return state.AppendEvent(g.EventLog, hook.Event{Time: g.Clock.Now().UTC(), Role: role,
		Agent: "party", Kind: "budget_override", Message: limit.String() + ": " + why})
}

// TurnWant is a turn whose usage AwaitTurns reads: its role and start,
// whether it was answered (else it is left out) and whether its agent's
// usage is Readable.
type TurnWant struct {
	Role     string
	Start    time.Time
	Answered bool
	Readable bool
}

// recordLag bounds how long AwaitTurns waits for an agent's record of a
// turn that already ended: Claude Code writes its transcript a moment
// after its Stop hook (100-150 ms measured on 2.1.197).
const recordLag = 3 * time.Second

// AwaitTurns is each answered turn's usage (TurnOf; nil for the others),
// waiting up to recordLag for readable agents whose record does not
// show the turn's end yet (a last response that asked for no tool).
func AwaitTurns(ctx context.Context, clk clock.Clock, l Ledger, wants []TurnWant) ([]*Turn, error) {
	turns := make([]*Turn, len(wants))
	var first time.Time // the earliest start: the responses read are those after it
	for i, w := range wants {
		if i == 0 || w.Start.Before(first) {
			first = w.Start
		}
	}
	for deadline := clk.Now().Add(recordLag); ; {
		err := l.Scan()
		var rs []Response
		if err == nil {
			rs, err = l.Responses(first.Truncate(time.Millisecond))
		}
		if err != nil {
			return turns, err
		}
		missing := false
		for i, w := range wants {
			if w.Answered {
				turns[i] = TurnOf(rs, w.Role, w.Start)
				whole := turns[i] != nil && turns[i].Ended
				missing = missing || (!whole && w.Readable)
			}
		}
		if !missing || !clk.Now().Before(deadline) || clk.Sleep(ctx, 100*time.Millisecond) != nil {
			return turns, nil
		}
	}
}
