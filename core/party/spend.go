package party

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/spend"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/talk"
)

// UsageOptions are the inputs of Usage (party usage).
type UsageOptions struct {
	By    string // a spend.Groups entry; "" is role
	Since string // a duration back from now or an RFC 3339 time
	All   bool   // every folder's teams, not only this one's
}

// UsageSum is one row of party usage.
type UsageSum = spend.Sum

// UsageGroups are the ways party usage groups (--by).
var UsageGroups = spend.Groups

// Usage sums what the agents of the teams party keeps here (every
// folder's with All) spent, read from their own records: each team's
// ledger (spend.Ledger) reads what was added since the last time. An
// agent whose records carry no usage is listed as unknown under --by
// role.
func Usage(ctx context.Context, env *Env, opts UsageOptions) ([]UsageSum, error) {
	by := opts.By
	if by == "" {
		by = "role"
	}
	var since time.Time
	if opts.Since != "" {
		var err error
		if since, err = sinceTime(env.Clock.Now(), opts.Since); err != nil {
			return nil, err
		}
	}
	teams, err := Teams(ctx, env, opts.All)
	if err != nil {
		return nil, err
	}
	var all []spend.Response
	var unread []string // roles whose agents keep no usage party reads
	for _, t := range teams {
		rec, err := session.ReadRecord(t.StateDir)
		if err != nil {
			continue
		}
		rs, err := teamResponses(env, t.StateDir, rec)
		if err != nil {
			return nil, fmt.Errorf("usage of %s: %w", t.Name, err)
		}
		for i := range rs {
			rs[i].Team = t.Name
		}
		all = append(all, rs...)
		for _, p := range rec.Panes {
			if len(p.Argv) > 0 && !slices.Contains([]agent.Kind{agent.Claude, agent.Codex, agent.Gemini, agent.Shell}, p.Agent) {
				unread = append(unread, t.Name+"/"+p.Role)
			}
		}
	}
	sums, err := spend.Totals(all, by, since)
	if err != nil || by != "role" {
		return sums, err
	}
	for _, key := range unread {
		sums = append(sums, spend.Sum{Key: key, Unknown: true})
	}
	return sums, nil
}

// UsageRow is s as party usage prints it.
func UsageRow(s UsageSum) []string {
	if s.Unknown {
		return []string{s.Key, "-", "unknown", "unknown", "unknown", "unknown", "unknown", "unknown"}
	}
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	return []string{s.Key, strconv.Itoa(s.Responses), n(s.Input), n(s.Output), n(s.CacheRead), n(s.CacheWrite), n(s.Reasoning), n(s.Total)}
}

// UsageHeader is the header of party usage's table.
func UsageHeader(by string) []string {
	if by == "" {
		by = "role"
	}
	return []string{strings.ToUpper(by), "RESPONSES", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "REASONING", "TOTAL"}
}

// teamResponses scans the records of the team in stateDir into its
// ledger (spend.Ledger), then reads the ledger.
func teamResponses(env *Env, stateDir string, rec session.Record) ([]spend.Response, error) {
	roles := map[string]string{}
	for _, p := range rec.Panes {
		roles[p.ID] = p.Role
	}
	l := spend.Ledger{Dir: filepath.Join(stateDir, "spend"), Events: filepath.Join(stateDir, state.EventLog),
		CodexHome: hook.CodexHome(env.Getenv), Roles: roles}
	if err := l.Scan(); err != nil {
		return nil, err
	}
	return l.Responses()
}

// TurnUsage is what one turn spent: its responses, their tokens and the
// models that gave them.
type TurnUsage struct {
	Responses int      `json:"responses"`
	Models    []string `json:"models,omitempty"`
	spend.Tokens
}

// usageLag bounds how long turnUsage waits for an agent's record of a
// turn that already ended: Claude Code writes its transcript a moment
// after its Stop hook (100-150 ms measured on 2.1.197).
const usageLag = 3 * time.Second

// turnUsage fills in each answered turn's usage: the responses of its
// role recorded since the turn had the agent to itself, waiting up to
// usageLag for agents that keep usage (claude, codex, gemini) whose record
// does not show the turn yet. A team without a record, or an agent whose
// records carry none, gets none.
func turnUsage(ctx context.Context, env *Env, stateDir string, targets []mux.Pane, results []talk.Result, out []TalkOutcome) {
	rec, err := session.ReadRecord(stateDir)
	if err != nil {
		return
	}
	deadline := env.Clock.Now().Add(usageLag)
	for {
		rs, err := teamResponses(env, stateDir, rec)
		if err != nil {
			env.Warnf("the turns' usage: %v", err)
			return
		}
		missing := false
		for i, r := range results {
			if r.Err != nil || r.Answer == nil {
				continue
			}
			if out[i].Usage = usageSince(rs, r.Role, r.Turn); out[i].Usage == nil && keepsUsage(agent.Kind(targets[i].Agent)) {
				missing = true
			}
		}
		if !missing || !env.Clock.Now().Before(deadline) || env.Clock.Sleep(ctx, 100*time.Millisecond) != nil {
			return
		}
	}
}

// keepsUsage says whether agents of kind record their usage where
// party reads it.
func keepsUsage(kind agent.Kind) bool {
	return kind == agent.Claude || kind == agent.Codex || kind == agent.Gemini
}

// usageSince is the usage of role's responses at or after turn, nil
// without any.
func usageSince(rs []spend.Response, role string, turn time.Time) *TurnUsage {
	var u TurnUsage
	for _, resp := range rs {
		if resp.Role != role || resp.Time.Before(turn.Truncate(time.Millisecond)) {
			continue
		}
		u.Responses++
		u.Tokens.Add(resp.Tokens)
		if resp.Model != "" && !slices.Contains(u.Models, resp.Model) {
			u.Models = append(u.Models, resp.Model)
		}
	}
	if u.Responses == 0 {
		return nil
	}
	return &u
}
