package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/jsonpos"
)

// ErrInvalid is a config file or value that cannot be used.
var ErrInvalid = errors.New("invalid config")

// ErrUnknownKey is a key party does not know.
var ErrUnknownKey = errors.New("unknown config key")

// Agent is the configuration of one agent, by role or agent kind.
type Agent struct {
	Command  string `json:"command,omitempty"`
	Preamble string `json:"preamble,omitempty"`
	SettleMs int    `json:"settleMs,omitempty"`
	Marker   bool   `json:"marker,omitempty"`
}

// Config is the effective configuration.
type Config struct {
	Timeout      time.Duration
	PollInterval time.Duration
	CaptureLines int
	PreambleMode string // always | disabled
	// Planner and Executor are the roles party relay uses by default.
	Planner, Executor string
	// AllowRoles are the roles (route.allowRoles) whose panes may be sent
	// what agents wrote (route, relay, the review loop) even when they
	// run a shell or another program, not claude, codex or gemini.
	AllowRoles []string
	Agents     map[string]Agent
	Review     Review
	Supervise  Supervise
	PM         PM
	ITerm      ITerm
	MCP        MCP
	Notify     Notify
	Worktree   Worktree
	// Prices are the prices of models, by model name (price.MODEL.*).
	Prices map[string]Price
	Budget Budget
	// Hosts are the other machines party reaches over SSH, by name
	// (hosts.NAME.*); trusted keys.
	Hosts map[string]Host
	// Sources says which layer set each key: default, or a file path.
	Sources map[string]string
	// Local is the repository's file (./.party/config.json) when there is
	// one; LocalTrusted says whether the user trusted its content, and
	// Ignored lists the Trusted keys it set that were left out because
	// they did not.
	Local        string
	LocalTrusted bool
	Ignored      []string
}

// Review configures the review coordinator.
type Review struct {
	Implementer     string        `json:"implementer"`     // role that implements and decides verdicts
	Reviewer        string        `json:"reviewer"`        // role that reviews
	Base            string        `json:"base"`            // default base branch of a review
	MaxIterations   int           `json:"maxIterations"`   // reviews before NEEDS_DISCUSSION
	FindingsTimeout time.Duration `json:"findingsTimeout"` // wait for findings and answers
	HealthInterval  time.Duration `json:"healthInterval"`  // agent pane health check
	MarkerDir       string        `json:"markerDir"`       // also write claude-<type>-<session_id> markers here
	AllowCommands   bool          `json:"allowCommands"`   // let the agents run party review/evidence/ask without asking
}

// Supervise configures the supervisor (its policy and limits).
type Supervise struct {
	AckTimeout   time.Duration
	Retries      int
	Backoff      time.Duration
	QuietWindow  time.Duration
	DeferRecheck time.Duration
	MaxDefer     time.Duration
	TurnTimeout  time.Duration // how long a trigger's answer is waited for
	MaxText      int           // bytes of a trigger's or message's text
	PerRuntime   int           // deliveries per runtime per minute
	PerThread    int           // deliveries per thread per minute
	RateWindow   time.Duration // the window those are counted in (a minute)
	MaxTurns     int           // turns of a thread without progress before it is blocked
	SameAnswers  int           // alike answers in a row before it is blocked
	Redact       string        // a pattern blanked out of kept diagnostics, besides key shapes
	ScanEvery    time.Duration // how often the runtimes are compared with tmux without a notification
	RestartAfter time.Duration // offline this long: restarted
	NotAgent     time.Duration // the pane runs something else this long: failed
	MaxRestarts  int           // restarts in 15 minutes before a runtime is failed
	// FallbackTries is how often a trigger that timed out is tried through
	// the agent's resumed session; Spawn then starts a fresh agent for it.
	FallbackTries int
	Spawn         bool
	StaleAfter    time.Duration // an agent session without a sign this long is not resumed
	StallAfter    time.Duration // busy without a sign of life this long: stalled
	Keep          time.Duration // closed triggers and audit rows are kept this long (0: for ever)

	// Workspaces are the directories the supervisor may run sessions in
	// (empty: any); a trusted key.
	Workspaces []string
}

// PM configures party pm's store.
type PM struct {
	Storage string `json:"storage"` // fs | github
	Repo    string `json:"repo"`    // owner/name of the github store
}

// MCP says whether party start registers party's MCP server (party mcp)
// with the agents it launches, and whether their tools ask first.
type MCP struct {
	Enabled bool // register it (mcp.enabled)
	Prompt  bool // the agent asks before each of its tool calls (mcp.prompt; false: allowed)
}

// ITerm configures how party attaches in iTerm2.
type ITerm struct {
	ControlMode bool // attach with tmux -CC in iTerm2 (false: a plain client)
}

// Budget bounds what a team's agents spend (0: no bound): each role's
// total in the team, the team's total, and the team's total of the day
// (local time), in tokens and in USD. Trusted keys.
type Budget struct {
	RoleTokens, SessionTokens, DayTokens int64
	RoleUSD, SessionUSD, DayUSD          float64
	// Roles are the budgets of roles by name (roleBudget.ROLE.*): each
	// set one takes the place of RoleTokens or RoleUSD for its role.
	Roles map[string]RoleBudget
}

// RoleBudget is one role's own budget; 0 is the team's (budget.role*).
type RoleBudget struct {
	Tokens int64
	USD    float64
}

// None says no budget is set.
func (b Budget) None() bool {
	return b.RoleTokens == 0 && b.SessionTokens == 0 && b.DayTokens == 0 && b.RoleUSD == 0 && b.SessionUSD == 0 &&
		b.DayUSD == 0 && len(b.Roles) == 0
}

// Of is the budget of role: its own where set, else the team's.
func (b Budget) Of(role string) RoleBudget {
	r := b.Roles[role]
	if r.Tokens == 0 {
		r.Tokens = b.RoleTokens
	}
	if r.USD == 0 {
		r.USD = b.RoleUSD
	}
	return r
}

// Price is what a model's tokens cost, in USD for a million tokens of
// each kind (party usage; reasoning is priced as output); Set says which
// kinds were given a price (a kind without one is not free).
type Price struct {
	Input, Output, CacheRead, CacheWrite float64
	Set                                  PriceKind
}

// PriceKind is a kind of tokens a price is set for, as bits.
type PriceKind uint8

// The kinds of tokens with a price.
const (
	PriceInput PriceKind = 1 << iota
	PriceOutput
	PriceCacheRead
	PriceCacheWrite
)

// Has says whether p sets a price for kind.
func (p Price) Has(kind PriceKind) bool { return p.Set&kind != 0 }

// Host is a machine party reaches over SSH (core/hosts): its SSH
// destination (user@machine or an alias of ~/.ssh/config) and the party
// program there ("" is the remote PATH's party).
type Host struct {
	SSH   string
	Party string
}

// Worktree configures the worktrees party start --worktree makes
// (core/worktree).
type Worktree struct {
	// Setup is a command run in each new worktree before its agent
	// starts (dependencies, codegen); Copy are globs of the main tree's
	// untracked files copied into it first (.env). Both trusted keys.
	Setup string
	Copy  []string
}

// Notify configures the notifications (core/notify).
type Notify struct {
	Enabled   bool          // party start starts the notifier
	Events    string        // the kinds told, a list
	Sinks     string        // the ways they are told, a list
	LongTurn  time.Duration // a turn this long or longer is told when it ends
	Dedupe    time.Duration // the same event is told once in this window
	PerMinute int           // at most this many notifications a minute
	Webhook   string        // POSTed to; the user's own file only
	Topic     string        // the ntfy topic, when Webhook is an ntfy server
}

// Warning is an unknown key in a file, or (Why) one it may not set.
type Warning struct {
	File, Key string
	Why       string
}

func (w Warning) String() string {
	if w.Why != "" {
		return fmt.Sprintf("%s: key %q %s", w.File, w.Key, w.Why)
	}
	return fmt.Sprintf("%s: unknown key %q", w.File, w.Key)
}

// Defaults returns the built-in configuration: every key's default from
// the table of keys.
func Defaults() Config {
	c := Config{Agents: map[string]Agent{}, Prices: map[string]Price{}, Hosts: map[string]Host{}, Sources: map[string]string{}}
	for _, k := range keys {
		if strings.Contains(k.Name, ".*.") {
			continue // a named section's: no default
		}
		v, err := k.parseText(k.Name, k.def)
		if err != nil {
			panic(fmt.Sprintf("config: the default of %s: %v", k.Name, err)) // the table is wrong
		}
		k.set(&c, "", v)
		c.Sources[k.Name] = "default"
	}
	return c
}

// Paths returns the global and local config files for a working directory.
func Paths(getenv func(string) string, cwd string) (global, local string) {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		dir = filepath.Join(getenv("HOME"), ".config")
	}
	return filepath.Join(dir, "party", "config.json"), filepath.Join(cwd, ".party", "config.json")
}

// Load reads the defaults, the global file and the local file. The local
// file is a repository's: its Trusted keys take effect only when the user
// trusted its content (Trust); otherwise they are listed in c.Ignored and
// left out.
func Load(getenv func(string) string, cwd string) (Config, []Warning, error) {
	c := Defaults()
	global, local := Paths(getenv, cwd)
	var warns []Warning
	for _, path := range []string{global, local} {
		b, err := readFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return c, warns, err
		}
		trusted := true
		if path == local {
			if trusted, err = TrustStoreFor(getenv).Trusted(path, b); err != nil {
				return c, warns, err
			}
			c.Local, c.LocalTrusted = path, trusted
		}
		w, err := c.apply(path, b, trusted)
		warns = append(warns, w...)
		if err != nil {
			return c, warns, err
		}
	}
	return c, warns, nil
}

// MaxFileSize is the most bytes a config file may have (1 MiB); a bigger
// one is refused before it is read.
const MaxFileSize = 1 << 20

// readFile reads the config file at path. No file there is an error for
// which errors.Is(err, os.ErrNotExist). A path that cannot be a config
// file is ErrInvalid (exit 2), refused before anything of it is read: not
// a regular file (a directory, a FIFO that would block the read), more
// than MaxFileSize bytes, a symlink loop, unreadable.
func readFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("%s: %v: %w", path, unwrapPath(err), ErrInvalid)
	case fi.IsDir():
		return nil, fmt.Errorf("%s: a directory, not a config file: %w", path, ErrInvalid)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s: not a regular file (%s): %w", path, fi.Mode().Type(), ErrInvalid)
	case fi.Size() > MaxFileSize:
		return nil, fmt.Errorf("%s: %d bytes, over the %d a config file may have: %w", path, fi.Size(), MaxFileSize, ErrInvalid)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v: %w", path, unwrapPath(err), ErrInvalid)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v: %w", path, unwrapPath(err), ErrInvalid)
	}
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("%s: over the %d bytes a config file may have: %w", path, MaxFileSize, ErrInvalid)
	}
	return b, nil
}

// unwrapPath is the reason of a *PathError without its path, which the
// message already names.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// apply layers one file's content over c; with trusted false its Trusted
// keys are checked but not applied, and listed in c.Ignored.
func (c *Config) apply(path string, b []byte, trusted bool) ([]Warning, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, positioned(path, b, err)
	}
	var warns []Warning
	err := walkObject(b, 0, nil, func(at []string, raw json.RawMessage, end int64) error {
		dotted := strings.Join(at, ".")
		isObject := len(raw) > 0 && raw[0] == '{'
		switch {
		case isSection(at):
			if !isObject {
				line, col := jsonpos.LineCol(b, end)
				return fmt.Errorf("%s:%d:%d: %s must be an object: %w", path, line, col, dotted, ErrInvalid)
			}
			return errDescend
		}
		k, name, err := lookup(dotted)
		if errors.Is(err, ErrInvalid) {
			line, col := jsonpos.LineCol(b, end)
			return fmt.Errorf("%s:%d:%d: %w", path, line, col, err) // a name the key may not have
		}
		if err != nil {
			warns = append(warns, Warning{File: path, Key: dotted})
			return nil
		}
		val, err := k.parseJSON(dotted, raw)
		if err != nil {
			line, col := jsonpos.LineCol(b, end)
			if errors.Is(err, ErrInvalid) {
				return fmt.Errorf("%s:%d:%d: %w", path, line, col, err)
			}
			return fmt.Errorf("%s:%d:%d: %v: %w", path, line, col, err, ErrInvalid)
		}
		if k.UserOnly && path == c.Local {
			warns = append(warns, Warning{File: path, Key: dotted, Why: "is ignored: only your own config file may set it"})
			return nil
		}
		if k.Trusted && !trusted {
			c.Ignored = append(c.Ignored, dotted)
			return nil
		}
		if name != "" && strings.HasPrefix(k.Name, "agents.") {
			if _, ok := c.Agents[name]; !ok {
				c.Agents[name] = Agent{}
			}
		}
		k.set(c, name, val)
		c.Sources[dotted] = path
		return nil
	})
	sort.Slice(warns, func(i, j int) bool { return warns[i].Key < warns[j].Key })
	sort.Strings(c.Ignored)
	return warns, err
}

// errDescend tells walkObject to walk into an object value.
var errDescend = errors.New("descend")

// walkObject calls visit for each member of the JSON object raw (at byte
// offset base of the file) with its path, its value and the file offset
// just past the value; when visit returns errDescend it walks the value's
// members too. Members come in file order; a key given twice is visited
// twice, the last one winning as in encoding/json.
func walkObject(raw []byte, base int64, at []string, visit func([]string, json.RawMessage, int64) error) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("want an object: %w", ErrInvalid)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		end := base + dec.InputOffset()
		path := append(append([]string{}, at...), key)
		switch err := visit(path, v, end); {
		case errors.Is(err, errDescend):
			if err := walkObject(v, end-int64(len(v)), path, visit); err != nil {
				return err
			}
		case err != nil:
			return err
		}
	}
	return nil
}

// positioned turns a JSON error into FILE:LINE:COL: message.
func positioned(path string, b []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
		err = fmt.Errorf("%s must be %s, not %s", te.Field, te.Type, te.Value)
	}
	if off < 0 {
		return fmt.Errorf("%s: %v: %w", path, err, ErrInvalid)
	}
	line, col := jsonpos.LineCol(b, off)
	return fmt.Errorf("%s:%d:%d: %v: %w", path, line, col, err, ErrInvalid)
}

// Duration is a JSON duration: a Go duration string ("2s") or a number of
// milliseconds.
type Duration time.Duration

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var n float64
	if err := json.Unmarshal(b, &n); err == nil {
		*d = Duration(time.Duration(n) * time.Millisecond)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: stringType}
	}
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// ParseDuration reads "500ms", "2s", or bare milliseconds.
func ParseDuration(s string) (time.Duration, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms >= 0 {
		return time.Duration(ms) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("bad duration %q (want e.g. 500ms, 2s, or milliseconds): %w", s, ErrInvalid)
	}
	return d, nil
}

// AgentFor returns the agent configuration for a role, falling back to its
// agent kind.
func (c Config) AgentFor(role, kind string) Agent {
	if a, ok := c.Agents[role]; ok {
		return a
	}
	return c.Agents[kind]
}

// AllowsRole says whether the user opted role in (route.allowRoles,
// letter case aside): text agents wrote may be typed into its pane
// whatever runs there.
func (c Config) AllowsRole(role string) bool {
	for _, r := range c.AllowRoles {
		if strings.EqualFold(r, role) {
			return true
		}
	}
	return false
}

// Tune returns the profile of the agent with role as this configuration
// sets it: agents.NAME.settleMs (NAME the role or the agent kind)
// replaces the profile's settle time. Every path that types into a pane
// takes its profile from here.
func (c Config) Tune(role string, p agent.Profile) agent.Profile {
	if a := c.AgentFor(role, string(p.Kind)); a.SettleMs > 0 {
		p.Settle = time.Duration(a.SettleMs) * time.Millisecond
	}
	return p
}
