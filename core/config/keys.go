package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/partyhq/party/core/ghrepo"
	"github.com/partyhq/party/core/hosts"
	"github.com/partyhq/party/core/shellwords"
	"github.com/partyhq/party/core/state"
)

// kind is the type of a key's value.
type kind int

const (
	kString kind = iota
	kInt
	kBool
	kDuration
	kNumber // a float, bounded by max (0: none) and never negative
)

func (k kind) String() string {
	return [...]string{"string", "int", "bool", "duration", "number"}[k]
}

// Key is one configuration key. The table of keys is the one place that
// says what a key holds, which values are valid and where it lives in
// Config: Load, Set, Get, Flat and the flags all go through it.
type Key struct {
	// Name is the dotted key; "agents.*.command" stands for every agent.
	Name string
	// def is the built-in value as a user would write it; agent keys
	// have none (the agent's profile decides).
	def  string
	kind kind
	// min and max bound an int, or a duration in nanoseconds (0: none).
	min, max int64
	enum     []string
	check    func(string) error // more checks of a string value
	// checkName checks the name of a named section's key (hosts.NAME.*).
	checkName func(string) error
	// Trusted keys are inert in a repository's file until the user trusts
	// it: they run programs (agent commands), change what agents receive
	// (preambles, the marker instruction) or where text goes (the roles
	// that messages are typed into, the roles that may take what agents
	// wrote though they run a shell), or where files are written.
	Trusted bool
	// UserOnly keys are taken from the user's own file only, never from a
	// repository's, trusted or not: where notifications about the user's
	// work are sent.
	UserOnly bool
	get      func(c *Config, name string) string
	set      func(c *Config, name string, v value)
}

// value is a checked value of a key.
type value struct {
	s string
	n int64
	b bool
	d time.Duration
	f float64
}

func notBlank(what string) func(string) error {
	return func(s string) error {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("must %s", what)
		}
		return nil
	}
}

var keys = []Key{
	{Name: "defaults.timeout", def: "60s", kind: kDuration, min: int64(time.Millisecond), max: int64(24 * time.Hour),
		get: func(c *Config, _ string) string { return c.Timeout.String() },
		set: func(c *Config, _ string, v value) { c.Timeout = v.d }},
	{Name: "defaults.pollInterval", def: "1s", kind: kDuration, min: int64(10 * time.Millisecond), max: int64(time.Hour),
		get: func(c *Config, _ string) string { return c.PollInterval.String() },
		set: func(c *Config, _ string, v value) { c.PollInterval = v.d }},
	{Name: "defaults.captureLines", def: "200", kind: kInt, min: 1, max: 100000,
		get: func(c *Config, _ string) string { return strconv.Itoa(c.CaptureLines) },
		set: func(c *Config, _ string, v value) { c.CaptureLines = int(v.n) }},
	{Name: "preambleMode", def: "disabled", kind: kString, enum: []string{"always", "disabled"}, Trusted: true,
		get: func(c *Config, _ string) string { return c.PreambleMode },
		set: func(c *Config, _ string, v value) { c.PreambleMode = v.s }},
	{Name: "relay.planner", def: "planner", kind: kString, check: notBlank("name a role"), Trusted: true,
		get: func(c *Config, _ string) string { return c.Planner },
		set: func(c *Config, _ string, v value) { c.Planner = v.s }},
	{Name: "relay.executor", def: "executor", kind: kString, check: notBlank("name a role"), Trusted: true,
		get: func(c *Config, _ string) string { return c.Executor },
		set: func(c *Config, _ string, v value) { c.Executor = v.s }},
	{Name: "route.allowRoles", def: "", kind: kString, Trusted: true,
		get: func(c *Config, _ string) string { return strings.Join(c.AllowRoles, ",") },
		set: func(c *Config, _ string, v value) { c.AllowRoles = roleList(v.s) }},
	{Name: "review.implementer", def: "claude", kind: kString, check: notBlank("name a role"), Trusted: true,
		get: func(c *Config, _ string) string { return c.Review.Implementer },
		set: func(c *Config, _ string, v value) { c.Review.Implementer = v.s }},
	{Name: "review.reviewer", def: "codex", kind: kString, check: notBlank("name a role"), Trusted: true,
		get: func(c *Config, _ string) string { return c.Review.Reviewer },
		set: func(c *Config, _ string, v value) { c.Review.Reviewer = v.s }},
	{Name: "review.base", def: "main", kind: kString, check: func(s string) error {
		if strings.TrimSpace(s) == "" || strings.HasPrefix(s, "-") {
			return errors.New("must name a branch")
		}
		return nil
	},
		get: func(c *Config, _ string) string { return c.Review.Base },
		set: func(c *Config, _ string, v value) { c.Review.Base = v.s }},
	{Name: "review.maxIterations", def: "3", kind: kInt, min: 1, max: 100,
		get: func(c *Config, _ string) string { return strconv.Itoa(c.Review.MaxIterations) },
		set: func(c *Config, _ string, v value) { c.Review.MaxIterations = int(v.n) }},
	{Name: "review.findingsTimeout", def: "900s", kind: kDuration, min: int64(time.Second), max: int64(7 * 24 * time.Hour),
		get: func(c *Config, _ string) string { return c.Review.FindingsTimeout.String() },
		set: func(c *Config, _ string, v value) { c.Review.FindingsTimeout = v.d }},
	{Name: "review.healthInterval", def: "30s", kind: kDuration, min: int64(100 * time.Millisecond), max: int64(24 * time.Hour),
		get: func(c *Config, _ string) string { return c.Review.HealthInterval.String() },
		set: func(c *Config, _ string, v value) { c.Review.HealthInterval = v.d }},
	{Name: "review.markerDir", def: "", kind: kString, Trusted: true, check: func(s string) error {
		if s != "" && !filepath.IsAbs(s) {
			return errors.New("must be an absolute directory")
		}
		return nil
	},
		get: func(c *Config, _ string) string { return c.Review.MarkerDir },
		set: func(c *Config, _ string, v value) { c.Review.MarkerDir = v.s }},
	{Name: "review.allowCommands", def: "true", kind: kBool,
		get: func(c *Config, _ string) string { return strconv.FormatBool(c.Review.AllowCommands) },
		set: func(c *Config, _ string, v value) { c.Review.AllowCommands = v.b }},
	durationKey("supervise.ackTimeout", "8s", time.Second, time.Hour, func(c *Config) *time.Duration { return &c.Supervise.AckTimeout }),
	intKey("supervise.retries", "2", 0, 10, func(c *Config) *int { return &c.Supervise.Retries }),
	durationKey("supervise.backoff", "2s", 10*time.Millisecond, time.Hour, func(c *Config) *time.Duration { return &c.Supervise.Backoff }),
	durationKey("supervise.quietWindow", "20s", 0, time.Hour, func(c *Config) *time.Duration { return &c.Supervise.QuietWindow }),
	durationKey("supervise.deferRecheck", "5s", 100*time.Millisecond, time.Hour, func(c *Config) *time.Duration { return &c.Supervise.DeferRecheck }),
	durationKey("supervise.maxDefer", "60s", time.Second, 24*time.Hour, func(c *Config) *time.Duration { return &c.Supervise.MaxDefer }),
	durationKey("supervise.turnTimeout", "30m", time.Second, 24*time.Hour, func(c *Config) *time.Duration { return &c.Supervise.TurnTimeout }),
	intKey("supervise.maxTextBytes", "65536", 64, 1<<20, func(c *Config) *int { return &c.Supervise.MaxText }),
	intKey("supervise.ratePerRuntime", "30", 1, 10000, func(c *Config) *int { return &c.Supervise.PerRuntime }),
	intKey("supervise.ratePerThread", "60", 1, 10000, func(c *Config) *int { return &c.Supervise.PerThread }),
	durationKey("supervise.rateWindow", "1m", time.Second, time.Hour, func(c *Config) *time.Duration { return &c.Supervise.RateWindow }),
	intKey("supervise.maxTurns", "20", 1, 10000, func(c *Config) *int { return &c.Supervise.MaxTurns }),
	intKey("supervise.sameAnswers", "3", 2, 1000, func(c *Config) *int { return &c.Supervise.SameAnswers }),
	durationKey("supervise.scanEvery", "5s", 100*time.Millisecond, time.Hour, func(c *Config) *time.Duration { return &c.Supervise.ScanEvery }),
	durationKey("supervise.restartAfter", "5s", 0, 24*time.Hour, func(c *Config) *time.Duration { return &c.Supervise.RestartAfter }),
	durationKey("supervise.notAgentGrace", "30s", time.Second, 24*time.Hour, func(c *Config) *time.Duration { return &c.Supervise.NotAgent }),
	intKey("supervise.maxRestarts", "3", 1, 100, func(c *Config) *int { return &c.Supervise.MaxRestarts }),
	intKey("supervise.fallbackTries", "2", 0, 10, func(c *Config) *int { return &c.Supervise.FallbackTries }),
	{Name: "supervise.spawnRecovery", def: "true", kind: kBool,
		get: func(c *Config, _ string) string { return strconv.FormatBool(c.Supervise.Spawn) },
		set: func(c *Config, _ string, v value) { c.Supervise.Spawn = v.b }},
	durationKey("supervise.staleAfter", "12h", time.Minute, 30*24*time.Hour, func(c *Config) *time.Duration { return &c.Supervise.StaleAfter }),
	durationKey("supervise.stallAfter", "10m", time.Second, 24*time.Hour, func(c *Config) *time.Duration { return &c.Supervise.StallAfter }),
	durationKey("supervise.keep", "168h", 0, 10*366*24*time.Hour, func(c *Config) *time.Duration { return &c.Supervise.Keep }),
	{Name: "supervise.redact", def: "", kind: kString, check: func(s string) error {
		_, err := regexp.Compile(s)
		return err
	},
		get: func(c *Config, _ string) string { return c.Supervise.Redact },
		set: func(c *Config, _ string, v value) { c.Supervise.Redact = v.s }},
	{Name: "supervise.workspaces", def: "", kind: kString, Trusted: true, check: func(s string) error {
		for _, d := range splitList(s) {
			if !filepath.IsAbs(d) {
				return fmt.Errorf("%q: must be absolute directories, separated by %q", d, string(filepath.ListSeparator))
			}
		}
		return nil
	},
		get: func(c *Config, _ string) string {
			return strings.Join(c.Supervise.Workspaces, string(filepath.ListSeparator))
		},
		set: func(c *Config, _ string, v value) { c.Supervise.Workspaces = splitList(v.s) }},
	{Name: "pm.storage", def: "fs", kind: kString, Trusted: true, enum: []string{"fs", "github"},
		get: func(c *Config, _ string) string { return c.PM.Storage },
		set: func(c *Config, _ string, v value) { c.PM.Storage = v.s }},
	{Name: "pm.repo", def: "", kind: kString, Trusted: true, check: checkRepo,
		get: func(c *Config, _ string) string { return c.PM.Repo },
		set: func(c *Config, _ string, v value) { c.PM.Repo = v.s }},
	{Name: "mcp.enabled", def: "true", kind: kBool, Trusted: true,
		get: func(c *Config, _ string) string { return strconv.FormatBool(c.MCP.Enabled) },
		set: func(c *Config, _ string, v value) { c.MCP.Enabled = v.b }},
	{Name: "mcp.prompt", def: "false", kind: kBool, Trusted: true,
		get: func(c *Config, _ string) string { return strconv.FormatBool(c.MCP.Prompt) },
		set: func(c *Config, _ string, v value) { c.MCP.Prompt = v.b }},
	{Name: "iterm.controlMode", def: "true", kind: kBool, Trusted: true,
		get: func(c *Config, _ string) string { return strconv.FormatBool(c.ITerm.ControlMode) },
		set: func(c *Config, _ string, v value) { c.ITerm.ControlMode = v.b }},
	{Name: "notify.enabled", def: "false", kind: kBool,
		get: func(c *Config, _ string) string { return strconv.FormatBool(c.Notify.Enabled) },
		set: func(c *Config, _ string, v value) { c.Notify.Enabled = v.b }},
	{Name: "notify.events", def: strings.Join(NotifyKinds, ","), kind: kString, check: checkWords("event", NotifyKinds),
		get: func(c *Config, _ string) string { return c.Notify.Events },
		set: func(c *Config, _ string, v value) { c.Notify.Events = v.s }},
	{Name: "notify.sinks", def: strings.Join(NotifySinks, ","), kind: kString, check: checkWords("sink", NotifySinks),
		get: func(c *Config, _ string) string { return c.Notify.Sinks },
		set: func(c *Config, _ string, v value) { c.Notify.Sinks = v.s }},
	durationKey("notify.longTurn", "2m", time.Second, 24*time.Hour, func(c *Config) *time.Duration { return &c.Notify.LongTurn }),
	durationKey("notify.dedupe", "10m", 0, 24*time.Hour, func(c *Config) *time.Duration { return &c.Notify.Dedupe }),
	intKey("notify.perMinute", "6", 1, 1000, func(c *Config) *int { return &c.Notify.PerMinute }),
	{Name: "notify.webhook", def: "", kind: kString, Trusted: true, UserOnly: true, check: checkWebhook,
		get: func(c *Config, _ string) string { return c.Notify.Webhook },
		set: func(c *Config, _ string, v value) { c.Notify.Webhook = v.s }},
	{Name: "notify.topic", def: "", kind: kString, Trusted: true, UserOnly: true,
		get: func(c *Config, _ string) string { return c.Notify.Topic },
		set: func(c *Config, _ string, v value) { c.Notify.Topic = v.s }},
	{Name: "worktree.setup", def: "", kind: kString, Trusted: true, check: func(s string) error {
		_, err := shellwords.SplitCommand(s)
		return err
	},
		get: func(c *Config, _ string) string { return c.Worktree.Setup },
		set: func(c *Config, _ string, v value) { c.Worktree.Setup = v.s }},
	{Name: "worktree.copy", def: "", kind: kString, Trusted: true, check: func(s string) error {
		for _, g := range roleList(s) {
			if _, err := filepath.Match(g, ""); err != nil || filepath.IsAbs(g) || strings.HasPrefix(filepath.Clean(g), "..") {
				return fmt.Errorf("%q: must be globs relative to the repository, separated by commas or spaces", g)
			}
		}
		return nil
	},
		get: func(c *Config, _ string) string { return strings.Join(c.Worktree.Copy, ",") },
		set: func(c *Config, _ string, v value) { c.Worktree.Copy = roleList(v.s) }},
	budgetTokens("budget.roleTokens", func(b *Budget) *int64 { return &b.RoleTokens }),
	budgetTokens("budget.sessionTokens", func(b *Budget) *int64 { return &b.SessionTokens }),
	budgetTokens("budget.dayTokens", func(b *Budget) *int64 { return &b.DayTokens }),
	budgetUSD("budget.roleUSD", func(b *Budget) *float64 { return &b.RoleUSD }),
	budgetUSD("budget.sessionUSD", func(b *Budget) *float64 { return &b.SessionUSD }),
	budgetUSD("budget.dayUSD", func(b *Budget) *float64 { return &b.DayUSD }),
	{Name: "roleBudget.*.tokens", kind: kInt, min: 0, max: 1 << 50, Trusted: true,
		get: func(c *Config, role string) string {
			if r, ok := c.Budget.Roles[role]; ok && r.Tokens > 0 {
				return strconv.FormatInt(r.Tokens, 10)
			}
			return ""
		},
		set: func(c *Config, role string, v value) { setRoleBudget(c, role, func(r *RoleBudget) { r.Tokens = v.n }) }},
	{Name: "roleBudget.*.usd", kind: kNumber, max: 1e9, Trusted: true,
		get: func(c *Config, role string) string {
			if r, ok := c.Budget.Roles[role]; ok && r.USD > 0 {
				return strconv.FormatFloat(r.USD, 'f', -1, 64)
			}
			return ""
		},
		set: func(c *Config, role string, v value) { setRoleBudget(c, role, func(r *RoleBudget) { r.USD = v.f }) }},
	priceKey("input", PriceInput, func(p *Price) *float64 { return &p.Input }),
	priceKey("output", PriceOutput, func(p *Price) *float64 { return &p.Output }),
	priceKey("cacheRead", PriceCacheRead, func(p *Price) *float64 { return &p.CacheRead }),
	priceKey("cacheWrite", PriceCacheWrite, func(p *Price) *float64 { return &p.CacheWrite }),
	{Name: "hosts.*.ssh", kind: kString, Trusted: true, check: hosts.CheckDest, checkName: hosts.CheckName,
		get: func(c *Config, n string) string { return c.Hosts[n].SSH },
		set: func(c *Config, n string, v value) { h := c.Hosts[n]; h.SSH = v.s; c.Hosts[n] = h }},
	{Name: "hosts.*.party", kind: kString, Trusted: true, check: hosts.CheckProgram, checkName: hosts.CheckName,
		get: func(c *Config, n string) string { return c.Hosts[n].Party },
		set: func(c *Config, n string, v value) { h := c.Hosts[n]; h.Party = v.s; c.Hosts[n] = h }},
	{Name: "agents.*.command", kind: kString, Trusted: true, check: func(s string) error {
		_, err := shellwords.SplitCommand(s)
		return err
	},
		get: func(c *Config, n string) string { return c.Agents[n].Command },
		set: func(c *Config, n string, v value) { a := c.Agents[n]; a.Command = v.s; c.Agents[n] = a }},
	{Name: "agents.*.preamble", kind: kString, Trusted: true,
		get: func(c *Config, n string) string { return c.Agents[n].Preamble },
		set: func(c *Config, n string, v value) { a := c.Agents[n]; a.Preamble = v.s; c.Agents[n] = a }},
	{Name: "agents.*.settleMs", kind: kInt, min: 0, max: 10000,
		get: func(c *Config, n string) string { return strconv.Itoa(c.Agents[n].SettleMs) },
		set: func(c *Config, n string, v value) { a := c.Agents[n]; a.SettleMs = int(v.n); c.Agents[n] = a }},
	{Name: "agents.*.marker", kind: kBool, Trusted: true,
		get: func(c *Config, n string) string { return strconv.FormatBool(c.Agents[n].Marker) },
		set: func(c *Config, n string, v value) { a := c.Agents[n]; a.Marker = v.b; c.Agents[n] = a }},
}

// NotifyKinds are the notifications notify.events switches (core/notify's
// Kinds, which a test holds equal); NotifySinks the ways of telling them.
var (
	NotifyKinds = []string{"permission", "dialog", "failed", "discussion", "trigger", "done", "stalled", "budget"}
	NotifySinks = []string{"tmux", "terminal", "desktop", "webhook"}
)

// checkWords checks a list of words (commas or spaces) from known; "all"
// and "none" stand for all and none.
func checkWords(what string, known []string) func(string) error {
	return func(s string) error {
		for _, w := range roleList(s) {
			if w != "all" && w != "none" && !slices.Contains(known, w) {
				return fmt.Errorf("unknown %s %q (%s, all, none)", what, w, strings.Join(known, ", "))
			}
		}
		return nil
	}
}

// checkWebhook checks notify.webhook: "" or an absolute http(s) URL.
func checkWebhook(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("must be an http:// or https:// URL")
	}
	return nil
}

// roleList is the roles of a list written "a,b c" (commas or spaces).
func roleList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// checkRepo checks pm.repo ("" for none) as the task store does
// (ghrepo.Check).
func checkRepo(s string) error {
	if s == "" {
		return nil
	}
	if err := ghrepo.Check(s); err != nil {
		return fmt.Errorf("must be a GitHub repository owner/name (%v)", err)
	}
	return nil
}

// Keys lists every key, agent keys as "agents.*.NAME".
func Keys() []Key { return append([]Key(nil), keys...) }

// KeyNames lists the keys as users write them, agent keys as
// "agents.NAME.KEY"; with trusted, only the Trusted ones.
func KeyNames(trusted bool) []string {
	var names []string
	for _, k := range keys {
		if !trusted || k.Trusted {
			names = append(names, strings.Replace(k.Name, "*", "NAME", 1))
		}
	}
	return names
}

// keyNames lists the keys for messages.
func keyNames() string { return strings.Join(KeyNames(false), ", ") }

// isSection says whether the dotted name at is an object whose members
// are keys (or, for "agents.NAME", an agent's keys), as the table says.
func isSection(at []string) bool {
	for _, k := range keys {
		parts := strings.Split(k.Name, ".")
		if len(at) < len(parts) && slices.Equal(parts[:len(at)], wild(at, parts)) {
			return true
		}
	}
	return false
}

// wild is at with "*" wherever pattern has it.
func wild(at, pattern []string) []string {
	out := slices.Clone(at)
	for i := range out {
		if pattern[i] == "*" {
			out[i] = "*"
		}
	}
	return out
}

// named are the sections whose keys are by a name: "agents.NAME.KEY",
// "price.NAME.KEY", "roleBudget.ROLE.KEY", "hosts.NAME.KEY".
var named = map[string]bool{"agents": true, "price": true, "roleBudget": true, "hosts": true}

// members are the members of a dotted key as a config file nests them: a
// named section's name is one member, dots and all.
func members(dotted string) []string {
	parts := strings.Split(dotted, ".")
	if len(parts) > 3 && named[parts[0]] {
		return []string{parts[0], strings.Join(parts[1:len(parts)-1], "."), parts[len(parts)-1]}
	}
	return parts
}

// lookup returns the key of a dotted name and, for the keys of a named
// section, the name.
func lookup(dotted string) (Key, string, error) {
	pattern, agentName := dotted, ""
	if parts := strings.Split(dotted, "."); len(parts) >= 3 && named[parts[0]] {
		// The name between may hold dots: a model's (price.gemini-2.5-pro.input).
		if name := strings.Join(parts[1:len(parts)-1], "."); name != "" {
			pattern, agentName = parts[0]+".*."+parts[len(parts)-1], name
		}
	}
	for _, k := range keys {
		if k.Name == pattern {
			if k.checkName != nil {
				if err := k.checkName(agentName); err != nil {
					return Key{}, "", fmt.Errorf("%s: %v: %w", dotted, err, ErrInvalid)
				}
			}
			return k, agentName, nil
		}
	}
	return Key{}, "", fmt.Errorf("%q (keys: %s): %w", dotted, keyNames(), ErrUnknownKey)
}

// parseText reads a value of k written on a command line (config set, a
// flag) and checks it.
func (k Key) parseText(name, s string) (value, error) {
	var v value
	switch k.kind {
	case kInt:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return v, fmt.Errorf("%s must be a whole number, got %q: %w", name, s, ErrInvalid)
		}
		v.n = n
	case kBool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return v, fmt.Errorf("%s must be true or false, got %q: %w", name, s, ErrInvalid)
		}
		v.b = b
	case kDuration:
		d, err := ParseDuration(s)
		if err != nil {
			return v, fmt.Errorf("%s: %w", name, err)
		}
		v.d = d
	case kNumber:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return v, fmt.Errorf("%s must be a number, got %q: %w", name, s, ErrInvalid)
		}
		v.f = f
	default:
		v.s = s
	}
	return v, k.validate(name, v)
}

// parseJSON reads a value of k from a config file and checks it; a value
// of the wrong JSON type is reported as "NAME must be KIND, not TYPE".
func (k Key) parseJSON(name string, raw json.RawMessage) (value, error) {
	var v value
	var err error
	switch k.kind {
	case kInt:
		err = json.Unmarshal(raw, &v.n)
	case kBool:
		err = json.Unmarshal(raw, &v.b)
	case kDuration:
		var d Duration
		err = json.Unmarshal(raw, &d)
		v.d = time.Duration(d)
	case kNumber:
		err = json.Unmarshal(raw, &v.f)
	default:
		err = json.Unmarshal(raw, &v.s)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return v, fmt.Errorf("%s must be %s, not %s", name, k.kind, te.Value)
	}
	if err != nil {
		return v, fmt.Errorf("%s: %w", name, err)
	}
	return v, k.validate(name, v)
}

// validate checks v against k's bounds.
func (k Key) validate(name string, v value) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s %s: %w", name, fmt.Sprintf(format, args...), ErrInvalid)
	}
	switch k.kind {
	case kInt:
		if v.n < k.min || (k.max > 0 && v.n > k.max) {
			return bad("must be from %d to %d, got %d", k.min, k.max, v.n)
		}
	case kDuration:
		if int64(v.d) < k.min || (k.max > 0 && int64(v.d) > k.max) {
			return bad("must be from %s to %s, got %s", time.Duration(k.min), time.Duration(k.max), v.d)
		}
	case kNumber:
		if v.f < 0 || v.f != v.f || (k.max > 0 && v.f > float64(k.max)) {
			return bad("must be from 0 to %d, got %v", k.max, v.f)
		}
	case kString:
		if len(k.enum) > 0 && !contains(k.enum, v.s) {
			return bad("must be %s, got %q", strings.Join(k.enum, " or "), v.s)
		}
		if k.check != nil {
			if err := k.check(v.s); err != nil {
				return bad("%v, got %q", err, v.s)
			}
		}
	}
	return nil
}

// jsonValue is v as Set writes it.
func (k Key) jsonValue(text string, v value) any {
	switch k.kind {
	case kInt:
		return v.n
	case kBool:
		return v.b
	case kNumber:
		return v.f
	}
	return text // strings, and durations as the user wrote them
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// CheckFlag checks a flag's value against the key whose value it
// overrides (e.g. talk --timeout against defaults.timeout).
func CheckFlag(flag, key string, d time.Duration) error {
	k, _, err := lookup(key)
	if err != nil {
		return err
	}
	if err := k.validate(flag, value{d: d}); err != nil {
		return err
	}
	return nil
}

// Get returns the effective value of key as text.
func (c Config) Get(key string) (string, error) {
	k, name, err := lookup(key)
	if err != nil {
		return "", err
	}
	return k.get(&c, name), nil
}

// Flat returns every effective key with its value as text.
func (c Config) Flat() map[string]string {
	m := map[string]string{}
	for _, k := range keys {
		switch {
		case strings.HasPrefix(k.Name, "agents.*."):
			for name := range c.Agents {
				m[strings.Replace(k.Name, "*", name, 1)] = k.get(&c, name)
			}
		case strings.HasPrefix(k.Name, "price.*."):
			for name := range c.Prices {
				m[strings.Replace(k.Name, "*", name, 1)] = k.get(&c, name)
			}
		case strings.HasPrefix(k.Name, "roleBudget.*."):
			for name := range c.Budget.Roles {
				m[strings.Replace(k.Name, "*", name, 1)] = k.get(&c, name)
			}
		case strings.HasPrefix(k.Name, "hosts.*."):
			for name := range c.Hosts {
				m[strings.Replace(k.Name, "*", name, 1)] = k.get(&c, name)
			}
		default:
			m[k.Name] = k.get(&c, "")
		}
	}
	return m
}

// Keys returns the keys of Flat in order.
func (c Config) Keys() []string {
	m := c.Flat()
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Setting is a key's effective value and where it comes from, as party
// config show prints it.
type Setting struct {
	Key    string `json:"-"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// Row is the setting as a row of party config show: key, value, source
// ("-" for none).
func (s Setting) Row() []string {
	source := s.Source
	if source == "" {
		source = "-"
	}
	return []string{s.Key, s.Value, source}
}

// Settings are the settings of Keys, in order.
func (c Config) Settings() []Setting {
	flat := c.Flat()
	out := make([]Setting, 0, len(flat))
	for _, k := range c.Keys() {
		out = append(out, Setting{Key: k, Value: flat[k], Source: c.Sources[k]})
	}
	return out
}

// Set writes key = value into the config file at path, keeping its other
// keys; the file and its directory are created when missing, and written
// atomically. The value is checked as Load checks it, so Set never writes
// what Load would refuse.
func Set(path, key, text string) error {
	k, _, err := lookup(key)
	if err != nil {
		return err
	}
	v, err := k.parseText(key, text)
	if err != nil {
		return err
	}
	doc := map[string]any{}
	b, err := readFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal(b, &doc); err != nil {
			return positioned(path, b, err)
		}
	}
	parts := members(key)
	m := doc
	for _, p := range parts[:len(parts)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[p] = sub
		}
		m = sub
	}
	m[parts[len(parts)-1]] = k.jsonValue(text, v)
	out, _ := json.MarshalIndent(doc, "", "  ")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return state.WriteFile(path, append(out, '\n'), 0o644)
}

// durationKey is a duration key between lo and hi held at *field(c).
func durationKey(name, def string, lo, hi time.Duration, field func(*Config) *time.Duration) Key {
	return Key{Name: name, def: def, kind: kDuration, min: int64(lo), max: int64(hi),
		get: func(c *Config, _ string) string { return field(c).String() },
		set: func(c *Config, _ string, v value) { *field(c) = v.d }}
}

// intKey is an int key between lo and hi held at *field(c).
func intKey(name, def string, lo, hi int, field func(*Config) *int) Key {
	return Key{Name: name, def: def, kind: kInt, min: int64(lo), max: int64(hi),
		get: func(c *Config, _ string) string { return strconv.Itoa(*field(c)) },
		set: func(c *Config, _ string, v value) { *field(c) = int(v.n) }}
}

// splitList splits a list of directories joined by the path list
// separator, dropping empty parts.
func splitList(s string) []string {
	var out []string
	for _, d := range filepath.SplitList(s) {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// priceKey is the key price.*.name: USD for a million tokens of a kind,
// held at *field of the model's price.
func priceKey(name string, kind PriceKind, field func(*Price) *float64) Key {
	return Key{Name: "price.*." + name, kind: kNumber, max: 100000,
		get: func(c *Config, model string) string {
			p, ok := c.Prices[model]
			if !ok || !p.Has(kind) {
				return ""
			}
			return strconv.FormatFloat(*field(&p), 'f', -1, 64)
		},
		set: func(c *Config, model string, v value) {
			if c.Prices == nil {
				c.Prices = map[string]Price{}
			}
			p := c.Prices[model]
			*field(&p) = v.f
			p.Set |= kind
			c.Prices[model] = p
		}}
}

// setRoleBudget changes role's own budget by f.
func setRoleBudget(c *Config, role string, f func(*RoleBudget)) {
	if c.Budget.Roles == nil {
		c.Budget.Roles = map[string]RoleBudget{}
	}
	r := c.Budget.Roles[role]
	f(&r)
	c.Budget.Roles[role] = r
}

// budgetTokens is a budget of tokens, 0 for none.
func budgetTokens(name string, field func(*Budget) *int64) Key {
	return Key{Name: name, def: "0", kind: kInt, min: 0, max: 1 << 50, Trusted: true,
		get: func(c *Config, _ string) string { return strconv.FormatInt(*field(&c.Budget), 10) },
		set: func(c *Config, _ string, v value) { *field(&c.Budget) = v.n }}
}

// budgetUSD is a budget in USD, 0 for none.
func budgetUSD(name string, field func(*Budget) *float64) Key {
	return Key{Name: name, def: "0", kind: kNumber, max: 1 << 30, Trusted: true,
		get: func(c *Config, _ string) string { return strconv.FormatFloat(*field(&c.Budget), 'f', -1, 64) },
		set: func(c *Config, _ string, v value) { *field(&c.Budget) = v.f }}
}
