// Package config is party's configuration: built-in defaults, then the
// global file ($XDG_CONFIG_HOME/party/config.json, else
// ~/.config/party/config.json), then the local file (./.party/config.json),
// then flags, which the caller applies. A file that is not valid JSON or has
// a value of the wrong type is an error naming the file, line and column;
// unknown keys are warnings.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
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
	Agents            map[string]Agent
	Review            Review
	// Sources says which layer set each key: default, or a file path.
	Sources map[string]string
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
}

// reviewKeys are the keys of Review.
var reviewKeys = []string{"review.implementer", "review.reviewer", "review.base", "review.maxIterations",
	"review.findingsTimeout", "review.healthInterval", "review.markerDir"}

// Warning is an unknown key in a file.
type Warning struct {
	File, Key string
}

func (w Warning) String() string { return fmt.Sprintf("%s: unknown key %q", w.File, w.Key) }

// Defaults returns the built-in configuration.
func Defaults() Config {
	c := Config{Timeout: 60 * time.Second, PollInterval: time.Second, CaptureLines: 200,
		PreambleMode: "disabled", Planner: "planner", Executor: "executor", Agents: map[string]Agent{}, Sources: map[string]string{},
		Review: Review{Implementer: "claude", Reviewer: "codex", Base: "main", MaxIterations: 3,
			FindingsTimeout: 900 * time.Second, HealthInterval: 30 * time.Second}}
	for _, k := range append([]string{"defaults.timeout", "defaults.pollInterval", "defaults.captureLines", "preambleMode", "relay.planner", "relay.executor"}, reviewKeys...) {
		c.Sources[k] = "default"
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

// Load reads the defaults, the global and the local file.
func Load(getenv func(string) string, cwd string) (Config, []Warning, error) {
	c := Defaults()
	global, local := Paths(getenv, cwd)
	var warns []Warning
	for _, path := range []string{global, local} {
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return c, warns, fmt.Errorf("%s: %w", path, err)
		}
		w, err := c.apply(path, b)
		warns = append(warns, w...)
		if err != nil {
			return c, warns, err
		}
	}
	return c, warns, nil
}

// raw is a config file as typed JSON.
type raw struct {
	Defaults struct {
		Timeout      *Duration `json:"timeout"`
		PollInterval *Duration `json:"pollInterval"`
		CaptureLines *int      `json:"captureLines"`
	} `json:"defaults"`
	PreambleMode *string `json:"preambleMode"`
	Relay        struct {
		Planner  *string `json:"planner"`
		Executor *string `json:"executor"`
	} `json:"relay"`
	Agents map[string]json.RawMessage `json:"agents"`
	Review struct {
		Implementer     *string   `json:"implementer"`
		Reviewer        *string   `json:"reviewer"`
		Base            *string   `json:"base"`
		MaxIterations   *int      `json:"maxIterations"`
		FindingsTimeout *Duration `json:"findingsTimeout"`
		HealthInterval  *Duration `json:"healthInterval"`
		MarkerDir       *string   `json:"markerDir"`
	} `json:"review"`
}

// apply layers one file's content over c.
func (c *Config) apply(path string, b []byte) ([]Warning, error) {
	var r raw
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, positioned(path, b, err)
	}
	warns, err := unknownKeys(path, b)
	if err != nil {
		return nil, err
	}
	set := func(key string) { c.Sources[key] = path }
	if d := r.Defaults.Timeout; d != nil {
		c.Timeout = time.Duration(*d)
		set("defaults.timeout")
	}
	if d := r.Defaults.PollInterval; d != nil {
		c.PollInterval = time.Duration(*d)
		set("defaults.pollInterval")
	}
	if n := r.Defaults.CaptureLines; n != nil {
		if *n <= 0 {
			return warns, fmt.Errorf("%s: defaults.captureLines must be positive, got %d: %w", path, *n, ErrInvalid)
		}
		c.CaptureLines = *n
		set("defaults.captureLines")
	}
	if m := r.PreambleMode; m != nil {
		if *m != "always" && *m != "disabled" {
			return warns, fmt.Errorf("%s: preambleMode must be always or disabled, got %q: %w", path, *m, ErrInvalid)
		}
		c.PreambleMode = *m
		set("preambleMode")
	}
	for key, v := range map[string]*string{"relay.planner": r.Relay.Planner, "relay.executor": r.Relay.Executor} {
		if v == nil {
			continue
		}
		if strings.TrimSpace(*v) == "" {
			return warns, fmt.Errorf("%s: %s must name a role: %w", path, key, ErrInvalid)
		}
		if key == "relay.planner" {
			c.Planner = *v
		} else {
			c.Executor = *v
		}
		set(key)
	}
	if err := c.applyReview(path, r, set); err != nil {
		return warns, err
	}
	names := make([]string, 0, len(r.Agents))
	for name := range r.Agents {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(r.Agents[name], &fields); err != nil {
			return warns, positioned(path, b, err)
		}
		a := c.Agents[name]
		if err := json.Unmarshal(r.Agents[name], &a); err != nil {
			return warns, fmt.Errorf("%s: agents.%s: %v: %w", path, name, err, ErrInvalid)
		}
		c.Agents[name] = a
		for k := range fields {
			set("agents." + name + "." + k)
		}
	}
	return warns, nil
}

func (c *Config) applyReview(path string, r raw, set func(string)) error {
	rv := r.Review
	for key, v := range map[string]*string{"review.implementer": rv.Implementer, "review.reviewer": rv.Reviewer, "review.base": rv.Base} {
		if v == nil {
			continue
		}
		if strings.TrimSpace(*v) == "" {
			return fmt.Errorf("%s: %s must not be empty: %w", path, key, ErrInvalid)
		}
		switch key {
		case "review.implementer":
			c.Review.Implementer = *v
		case "review.reviewer":
			c.Review.Reviewer = *v
		default:
			c.Review.Base = *v
		}
		set(key)
	}
	if n := rv.MaxIterations; n != nil {
		if *n < 1 {
			return fmt.Errorf("%s: review.maxIterations must be at least 1, got %d: %w", path, *n, ErrInvalid)
		}
		c.Review.MaxIterations = *n
		set("review.maxIterations")
	}
	for key, d := range map[string]*Duration{"review.findingsTimeout": rv.FindingsTimeout, "review.healthInterval": rv.HealthInterval} {
		if d == nil {
			continue
		}
		if *d <= 0 {
			return fmt.Errorf("%s: %s must be positive: %w", path, key, ErrInvalid)
		}
		if key == "review.findingsTimeout" {
			c.Review.FindingsTimeout = time.Duration(*d)
		} else {
			c.Review.HealthInterval = time.Duration(*d)
		}
		set(key)
	}
	if d := rv.MarkerDir; d != nil {
		if *d != "" && !filepath.IsAbs(*d) {
			return fmt.Errorf("%s: review.markerDir must be an absolute directory, got %q: %w", path, *d, ErrInvalid)
		}
		c.Review.MarkerDir = *d
		set("review.markerDir")
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
	line, col := lineCol(b, int(off))
	return fmt.Errorf("%s:%d:%d: %v: %w", path, line, col, err, ErrInvalid)
}

func lineCol(b []byte, off int) (int, int) {
	off = min(max(off, 0), len(b))
	line := bytes.Count(b[:off], []byte("\n")) + 1
	start := bytes.LastIndexByte(b[:off], '\n') + 1
	return line, off - start
}

// schema lists the known keys; "*" stands for any agent name.
var schema = map[string]map[string]bool{
	"": {"defaults": true, "preambleMode": true, "agents": true, "relay": true, "review": true},
	"review": {"implementer": true, "reviewer": true, "base": true, "maxIterations": true,
		"findingsTimeout": true, "healthInterval": true, "markerDir": true},
	"relay":      {"planner": true, "executor": true},
	"defaults":   {"timeout": true, "pollInterval": true, "captureLines": true},
	"agents.*":   {"command": true, "preamble": true, "settleMs": true, "marker": true},
	"agents":     nil, // any name
	"defaults.*": {},
}

// unknownKeys walks a file's objects and reports keys not in the schema.
func unknownKeys(path string, b []byte) ([]Warning, error) {
	var top map[string]any
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, positioned(path, b, err)
	}
	var warns []Warning
	var walk func(prefix, schemaKey string, m map[string]any)
	walk = func(prefix, schemaKey string, m map[string]any) {
		known := schema[schemaKey]
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			full := strings.TrimPrefix(prefix+"."+k, ".")
			switch {
			case schemaKey == "agents":
				if sub, ok := m[k].(map[string]any); ok {
					walk(full, "agents.*", sub)
				}
			case known[k]:
				if sub, ok := m[k].(map[string]any); ok && (k == "defaults" || k == "agents" || k == "relay" || k == "review") {
					walk(full, full, sub)
				}
			default:
				warns = append(warns, Warning{File: path, Key: full})
			}
		}
	}
	walk("", "", top)
	return warns, nil
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
