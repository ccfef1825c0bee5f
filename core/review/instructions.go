package review

import (
	"embed"
	"strings"
)

// instructionFiles are the Markdown texts of party instructions, one per
// agent: its part in the review loop.
//
//go:embed instructions/*.md
var instructionFiles embed.FS

// Instructions returns the Markdown that tells agent (claude, the
// implementer, or codex, the reviewer) how party's review loop works, for
// its CLAUDE.md or AGENTS.md; false for another agent.
func Instructions(agent string) (string, bool) {
	b, err := instructionFiles.ReadFile("instructions/" + agent + ".md")
	if err != nil || strings.ContainsAny(agent, "/.") {
		return "", false
	}
	return strings.ReplaceAll(string(b), "{{FINDINGS_SCHEMA}}", FindingsSchema), true
}
