package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDefaultsFromTheTable pins the built-in values the table of keys
// gives.
func TestDefaultsFromTheTable(t *testing.T) {
	c := Defaults()
	assert.Equal(t, 60*time.Second, c.Timeout)
	assert.Equal(t, time.Second, c.PollInterval)
	assert.Equal(t, 200, c.CaptureLines)
	assert.Equal(t, "disabled", c.PreambleMode)
	assert.Equal(t, []string{"planner", "executor"}, []string{c.Planner, c.Executor})
	assert.Equal(t, Review{Implementer: "claude", Reviewer: "codex", Base: "main", MaxIterations: 3,
		FindingsTimeout: 900 * time.Second, HealthInterval: 30 * time.Second, AllowCommands: true}, c.Review)
	assert.Empty(t, c.Agents)
	assert.Empty(t, c.Prices, "party ships no prices")
	for _, k := range keys {
		if !strings.Contains(k.Name, ".*.") {
			assert.Equal(t, "default", c.Sources[k.Name], k.Name)
		}
	}
}

// TestDocsKeyTable fails when the tables of config keys in the user docs
// and the table of keys disagree on which keys exist, their defaults or
// which need trust. docs/configuration.md has the table; a feature's page
// in docs/ may hold its own keys' rows in a table of the same header.
func TestDocsKeyTable(t *testing.T) {
	const header = "| key | default | meaning | ✓ |\n|---|---|---|---|\n"
	b, err := os.ReadFile("../../docs/configuration.md")
	require.NoError(t, err)
	require.Contains(t, string(b), header, "docs/configuration.md has no config key table")
	docs, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, path := range docs {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		_, table, ok := strings.Cut(string(b), header)
		if !ok {
			continue
		}
		table, _, _ = strings.Cut(table, "\n\n")
		checkKeyTable(t, filepath.Base(path), table, seen)
	}
	for _, k := range keys {
		assert.True(t, seen[k.Name], "%s is missing from docs/configuration.md's table (or a docs/ page's)", k.Name)
	}
}

// checkKeyTable checks the rows of one key table of the file doc and
// marks the keys it has in seen.
func checkKeyTable(t *testing.T, doc, table string, seen map[string]bool) {
	code := regexp.MustCompile("`([^`]*)`")
	for _, row := range strings.Split(table, "\n") {
		cells := strings.Split(strings.Trim(row, "|"), "|")
		require.Len(t, cells, 4, "%s: row %q", doc, row)
		names := code.FindAllStringSubmatch(cells[0], -1)
		defs := code.FindAllStringSubmatch(cells[1], -1)
		for i, m := range names {
			name := strings.Replace(m[1], "NAME", "*", 1)
			k, _, err := lookup(strings.Replace(name, "*", "x", 1))
			if !assert.NoError(t, err, "%s key %s", doc, m[1]) {
				continue
			}
			seen[k.Name] = true
			assert.Equal(t, k.Trusted, strings.TrimSpace(cells[3]) == "✓", "%s %s: trusted", doc, m[1])
			if strings.Contains(k.Name, ".*.") {
				continue // the profile's, none, or the zero value
			}
			def := ""
			if i < len(defs) {
				def = defs[i][1]
			}
			assert.Equal(t, k.def, def, "%s %s: default", doc, m[1])
		}
	}
}
