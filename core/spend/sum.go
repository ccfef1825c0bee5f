package spend

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/usage"
)

// Sum is the total of the responses of one group.
type Sum struct {
	Key       string `json:"key"`
	Responses int    `json:"responses"`
	Tokens
	Total int64 `json:"total"`
	// Cost is what the responses cost in USD, by the price of each one's
	// model; none when a model of them has no price (NoPrice lists them):
	// never a guess.
	Cost    *float64 `json:"cost_usd,omitempty"`
	NoPrice []string `json:"no_price,omitempty"`
	// Unknown says the agent's records carry no usage party reads (a
	// program that is not claude, codex or gemini): its tokens are not
	// known, not 0.
	Unknown bool `json:"unknown,omitempty"`
}

// Prices are the prices of models by name (price.MODEL.*).
type Prices map[string]config.Price

// cost is what t cost at p, in USD: reasoning is priced as output. ok
// is false when t has tokens of a kind p sets no price for: no partial
// sum.
func cost(t Tokens, p config.Price) (usd float64, ok bool) {
	for _, k := range []struct {
		n    int64
		kind config.PriceKind
		usd  float64
	}{
		{t.Input, config.PriceInput, p.Input}, {t.Output + t.Reasoning, config.PriceOutput, p.Output},
		{t.CacheRead, config.PriceCacheRead, p.CacheRead}, {t.CacheWrite, config.PriceCacheWrite, p.CacheWrite},
	} {
		if k.n == 0 {
			continue
		}
		if !p.Has(k.kind) {
			return 0, false
		}
		usd += float64(k.n) * k.usd
	}
	return usd / 1e6, true
}

// Groups are the ways Totals groups responses.
var Groups = []string{"role", "team", "model", "agent", "day"}

// Totals sums rs by group (one of Groups) over the responses at or after
// since (zero: all), the largest first, with their cost at prices; the
// day is the local date of the response.
func Totals(rs []Response, by string, since time.Time, prices Prices) ([]Sum, error) {
	key, err := keyOf(by)
	if err != nil {
		return nil, err
	}
	at := map[string]int{}
	var out []Sum
	for _, r := range rs {
		if r.Time.Before(since) {
			continue
		}
		k := key(r)
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, Sum{Key: k})
		}
		out[i].Responses += r.n()
		out[i].Tokens.Add(r.Tokens)
		out[i].Total = out[i].Tokens.Total()
		c, ok := cost(r.Tokens, prices[r.Model])
		switch {
		case !ok:
			if m := orUnknown(r.Model); !slices.Contains(out[i].NoPrice, m) {
				out[i].NoPrice = append(out[i].NoPrice, m)
			}
		case out[i].Cost == nil:
			out[i].Cost = &c
		default:
			*out[i].Cost += c
		}
	}
	for i := range out {
		if len(out[i].NoPrice) > 0 {
			out[i].Cost = nil
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if by == "day" {
			return out[i].Key < out[j].Key
		}
		return out[i].Total > out[j].Total || (out[i].Total == out[j].Total && out[i].Key < out[j].Key)
	})
	return out, nil
}

func keyOf(by string) (func(Response) string, error) {
	switch by {
	case "role":
		return func(r Response) string { return r.Team + "/" + r.Role }, nil
	case "team":
		return func(r Response) string { return r.Team }, nil
	case "model":
		return func(r Response) string { return orUnknown(r.Model) }, nil
	case "agent":
		return func(r Response) string { return string(r.Agent) }, nil
	case "day":
		return func(r Response) string { return r.Time.Local().Format(time.DateOnly) }, nil
	}
	return nil, fmt.Errorf("%w: --by %q: one of %s", usage.Err, by, strings.Join(Groups, ", "))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// Team is one team whose spending Usage sums: its name, its ledger, and
// its roles whose agents keep no usage party reads (listed as unknown).
type Team struct {
	Name   string
	Ledger Ledger
	Unread []string
}

// Usage scans each team's ledger and sums its responses by group since
// since; by role, the unread roles follow as unknown.
func Usage(teams []Team, by string, since time.Time, prices Prices) ([]Sum, error) {
	var all []Response
	var unread []string
	for _, t := range teams {
		rs, err := t.Ledger.ScanSums(since)
		if err != nil {
			return nil, fmt.Errorf("usage of %s: %w", t.Name, err)
		}
		for i := range rs {
			rs[i].Team = t.Name
		}
		all = append(all, rs...)
		for _, role := range t.Unread {
			unread = append(unread, t.Name+"/"+role)
		}
	}
	sums, err := Totals(all, by, since, prices)
	if err != nil || by != "role" {
		return sums, err
	}
	for _, key := range unread {
		sums = append(sums, Sum{Key: key, Unknown: true})
	}
	return sums, nil
}

// Turn is what one turn spent: its responses, their tokens and the
// models that gave them.
type Turn struct {
	Responses int      `json:"responses"`
	Models    []string `json:"models,omitempty"`
	Tokens
	// Ended says its last response asked for no tool: the turn's record
	// is whole (Claude writes a turn's last response after its Stop
	// hook).
	Ended bool `json:"-"`
}

// TurnOf is the spending of role's responses at or after start (a turn
// that began then), nil without any.
func TurnOf(rs []Response, role string, start time.Time) *Turn {
	var u Turn
	var last time.Time
	for _, r := range rs {
		if r.Role != role || r.Time.Before(start.Truncate(time.Millisecond)) {
			continue
		}
		if !r.Time.Before(last) {
			last, u.Ended = r.Time, !r.More
		}
		u.Responses++
		u.Tokens.Add(r.Tokens)
		if r.Model != "" && !slices.Contains(u.Models, r.Model) {
			u.Models = append(u.Models, r.Model)
		}
	}
	if u.Responses == 0 {
		return nil
	}
	return &u
}

// Keeps says whether agents of kind record their usage where Ledger reads
// it.
func Keeps(kind agent.Kind) bool {
	return kind == agent.Claude || kind == agent.Codex || kind == agent.Gemini
}

// Counter is what one role's agent spent on one model: the usage
// counters of the supervisor's /metrics.
type Counter struct {
	Role  string
	Agent agent.Kind
	Model string
	Tokens
	// Cost is in USD; nil when the model has no price for a kind of
	// token it used.
	Cost *float64
}

// Counters sums rs by role, agent and model, in the order they first
// come, with their cost at prices.
func Counters(rs []Response, prices Prices) []Counter {
	type key struct {
		role  string
		agent agent.Kind
		model string
	}
	at := map[key]int{}
	var out []Counter
	priced := []bool{}
	for _, r := range rs {
		k := key{r.Role, r.Agent, orUnknown(r.Model)}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, Counter{Role: k.role, Agent: k.agent, Model: k.model, Cost: new(float64)})
			priced = append(priced, true)
		}
		out[i].Tokens.Add(r.Tokens)
		c, ok := cost(r.Tokens, prices[r.Model])
		priced[i] = priced[i] && ok
		*out[i].Cost += c
	}
	for i := range out {
		if !priced[i] {
			out[i].Cost = nil
		}
	}
	return out
}
