package spend

import (
	"fmt"
	"time"

	"github.com/partyhq/party/core/config"
)

// Limit is one budget of a team and what was spent against it.
type Limit struct {
	// Key is the budget's config key; Scope what it bounds: a role
	// (TEAM/ROLE), the team (TEAM) or the team's day (TEAM DATE).
	Key   string  `json:"key"`
	Scope string  `json:"scope"`
	Role  string  `json:"role,omitempty"` // a role's budget's role
	Unit  string  `json:"unit"`           // tokens or usd
	Limit float64 `json:"limit"`
	Spent float64 `json:"spent"`
	Left  float64 `json:"left"`
}

// Reached says the budget is spent.
func (l Limit) Reached() bool { return l.Spent >= l.Limit }

// String is the limit as a refusal or party usage says it.
func (l Limit) String() string {
	return fmt.Sprintf("%s spent %s of its %s %s (%s)", l.Scope, amount(l.Spent, l.Unit), amount(l.Limit, l.Unit), l.Unit, l.Key)
}

func amount(v float64, unit string) string {
	if unit == "usd" {
		return fmt.Sprintf("%.4f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// Budgets are team's budgets that b sets (none at 0) and what its
// responses rs spent against them by now: each of roles, the team, and
// the team's day (the local date of now). In USD, a response whose model
// has no price for the tokens it used counts nothing (party usage says
// which models have none).
func Budgets(rs []Response, team string, roles []string, b config.Budget, prices Prices, now time.Time) []Limit {
	type spent struct{ tokens, usd float64 }
	add := func(s *spent, r Response) {
		s.tokens += float64(r.Total())
		if c, ok := cost(r.Tokens, prices[r.Model]); ok {
			s.usd += c
		}
	}
	byRole := map[string]*spent{}
	for _, role := range roles {
		byRole[role] = &spent{}
	}
	var all, day spent
	today := now.Local().Format(time.DateOnly)
	for _, r := range rs {
		if s := byRole[r.Role]; s != nil {
			add(s, r)
		}
		add(&all, r)
		if r.Time.Local().Format(time.DateOnly) == today {
			add(&day, r)
		}
	}
	var out []Limit
	limit := func(key, scope, role, unit string, max, used float64) {
		if max > 0 {
			out = append(out, Limit{Key: key, Scope: scope, Role: role, Unit: unit, Limit: max, Spent: used, Left: max - used})
		}
	}
	for _, role := range roles {
		s, own, rb := byRole[role], b.Roles[role], b.Of(role)
		tokensKey, usdKey := "budget.roleTokens", "budget.roleUSD"
		if own.Tokens > 0 {
			tokensKey = "roleBudget." + role + ".tokens"
		}
		if own.USD > 0 {
			usdKey = "roleBudget." + role + ".usd"
		}
		limit(tokensKey, team+"/"+role, role, "tokens", float64(rb.Tokens), s.tokens)
		limit(usdKey, team+"/"+role, role, "usd", rb.USD, s.usd)
	}
	limit("budget.sessionTokens", team, "", "tokens", float64(b.SessionTokens), all.tokens)
	limit("budget.sessionUSD", team, "", "usd", b.SessionUSD, all.usd)
	limit("budget.dayTokens", team+" "+today, "", "tokens", float64(b.DayTokens), day.tokens)
	limit("budget.dayUSD", team+" "+today, "", "usd", b.DayUSD, day.usd)
	return out
}

// Reached is the first of limits that bounds role and is spent.
func Reached(limits []Limit, role string) (Limit, bool) {
	for _, l := range limits {
		if (l.Role == "" || l.Role == role) && l.Reached() {
			return l, true
		}
	}
	return Limit{}, false
}
