package spend

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/partyhq/party/core/usage"
)

// Sum is the total of the responses of one group.
type Sum struct {
	Key       string `json:"key"`
	Responses int    `json:"responses"`
	Tokens
	Total int64 `json:"total"`
	// Unknown says the agent's records carry no usage party reads (a
	// program that is not claude, codex or gemini): its tokens are not
	// known, not 0.
	Unknown bool `json:"unknown,omitempty"`
}

// Groups are the ways Totals groups responses.
var Groups = []string{"role", "team", "model", "agent", "day"}

// Totals sums rs by group (one of Groups) over the responses at or after
// since (zero: all), the largest first; the day is the local date of the
// response.
func Totals(rs []Response, by string, since time.Time) ([]Sum, error) {
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
		out[i].Responses++
		out[i].Tokens.Add(r.Tokens)
		out[i].Total = out[i].Tokens.Total()
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
