package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/partyhq/party/core/state"
)

// stringType is the JSON type a duration is written as.
var stringType = reflect.TypeOf("")

// kind is the type of a key's value.
type kind int

const (
	kString kind = iota
	kInt
	kBool
	kDuration
	kMode
)

// keyKind returns the type of a dotted key, or ErrUnknownKey.
func keyKind(key string) (kind, error) {
	switch key {
	case "defaults.timeout", "defaults.pollInterval":
		return kDuration, nil
	case "defaults.captureLines":
		return kInt, nil
	case "relay.planner", "relay.executor", "review.implementer", "review.reviewer", "review.base", "review.markerDir":
		return kString, nil
	case "review.maxIterations":
		return kInt, nil
	case "review.findingsTimeout", "review.healthInterval":
		return kDuration, nil
	case "preambleMode":
		return kMode, nil
	}
	parts := strings.Split(key, ".")
	if len(parts) == 3 && parts[0] == "agents" && parts[1] != "" {
		switch parts[2] {
		case "command", "preamble":
			return kString, nil
		case "settleMs":
			return kInt, nil
		case "marker":
			return kBool, nil
		}
	}
	return 0, fmt.Errorf("%q (keys: defaults.timeout, defaults.pollInterval, defaults.captureLines, preambleMode, relay.planner, relay.executor, review.{implementer,reviewer,base,maxIterations,findingsTimeout,healthInterval,markerDir}, agents.NAME.{command,preamble,settleMs,marker}): %w", key, ErrUnknownKey)
}

// Get returns the effective value of key as text.
func (c Config) Get(key string) (string, error) {
	if _, err := keyKind(key); err != nil {
		return "", err
	}
	m := c.Flat()
	return m[key], nil
}

// Flat returns every effective key with its value as text.
func (c Config) Flat() map[string]string {
	m := map[string]string{
		"defaults.timeout":       c.Timeout.String(),
		"defaults.pollInterval":  c.PollInterval.String(),
		"defaults.captureLines":  strconv.Itoa(c.CaptureLines),
		"preambleMode":           c.PreambleMode,
		"relay.planner":          c.Planner,
		"relay.executor":         c.Executor,
		"review.implementer":     c.Review.Implementer,
		"review.reviewer":        c.Review.Reviewer,
		"review.base":            c.Review.Base,
		"review.maxIterations":   strconv.Itoa(c.Review.MaxIterations),
		"review.findingsTimeout": c.Review.FindingsTimeout.String(),
		"review.healthInterval":  c.Review.HealthInterval.String(),
		"review.markerDir":       c.Review.MarkerDir,
	}
	for name, a := range c.Agents {
		p := "agents." + name + "."
		m[p+"command"], m[p+"preamble"] = a.Command, a.Preamble
		m[p+"settleMs"], m[p+"marker"] = strconv.Itoa(a.SettleMs), strconv.FormatBool(a.Marker)
	}
	return m
}

// Keys returns the keys of Flat in order.
func (c Config) Keys() []string {
	m := c.Flat()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// parseValue checks value against key's type and returns it as JSON.
func parseValue(key, value string) (any, error) {
	k, err := keyKind(key)
	if err != nil {
		return nil, err
	}
	switch k {
	case kDuration:
		if _, err := ParseDuration(value); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		return value, nil
	case kInt:
		n, err := strconv.Atoi(value)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s must be a non-negative number, got %q: %w", key, value, ErrInvalid)
		}
		return n, nil
	case kBool:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return nil, fmt.Errorf("%s must be true or false, got %q: %w", key, value, ErrInvalid)
		}
		return b, nil
	case kMode:
		if value != "always" && value != "disabled" {
			return nil, fmt.Errorf("preambleMode must be always or disabled, got %q: %w", value, ErrInvalid)
		}
	}
	return value, nil
}

// Set writes key = value into the config file at path, keeping its other
// keys; the file and its directory are created when missing, and written
// atomically.
func Set(path, key, value string) error {
	v, err := parseValue(key, value)
	if err != nil {
		return err
	}
	doc := map[string]any{}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal(b, &doc); err != nil {
			return positioned(path, b, err)
		}
	}
	parts := strings.Split(key, ".")
	m := doc
	for _, p := range parts[:len(parts)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[p] = sub
		}
		m = sub
	}
	m[parts[len(parts)-1]] = v
	out, _ := json.MarshalIndent(doc, "", "  ")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return state.WriteFile(path, append(out, '\n'), 0o644)
}
