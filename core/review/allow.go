package review

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/state"
)

// The commands of the review loop the agents run through their shell
// tools: party review, party evidence and party ask. Without a rule the
// real agents stop at a permission dialog before each (measured: Claude's
// "This command requires approval", Codex's "Would you like to run the
// following command?"), and the loop waits for a user at the pane.

// ClaudeAllow are the permissions.allow entries of Claude Code for the
// loop's commands.
var ClaudeAllow = []string{"Bash(party review:*)", "Bash(party evidence:*)", "Bash(party ask:*)"}

// CodexRulesFile is the file of $CODEX_HOME/rules that party owns; Codex
// loads every .rules file there. The user's own default.rules (where
// Codex writes "don't ask again" answers) is never touched.
const CodexRulesFile = "party.rules"

// CodexRules is what party writes into CodexRulesFile.
const CodexRules = `# Written by party start --review: the review loop's commands run without
# an approval prompt. party owns this file; your rules go in default.rules.
prefix_rule(pattern=["party", ["review", "evidence", "ask"]], decision="allow")
`

// AllowCommands lets the agents of a review session run the loop's
// commands without a permission dialog: claude's through its settings
// file claudeSettings (AllowClaude), Codex's through CodexRulesFile under
// codexHome (AllowCodex), Gemini's through its policy under geminiHome
// (AllowGemini); an empty one is an agent the session does not run.
func AllowCommands(root, claudeSettings, codexHome, geminiHome string) error {
	if claudeSettings != "" {
		if err := AllowClaude(claudeSettings); err != nil {
			return err
		}
	}
	if codexHome != "" {
		if _, err := AllowCodex(root, codexHome); err != nil {
			return err
		}
	}
	if geminiHome != "" {
		if _, err := AllowGemini(root, geminiHome); err != nil {
			return err
		}
	}
	return nil
}

// AllowClaude adds ClaudeAllow to the permissions.allow of the settings
// file at path, which party wrote for the session's claude panes
// (--settings): party's own file, so the user's settings are untouched.
func AllowClaude(path string) error {
	if err := hook.AllowClaude(path, ClaudeAllow...); err != nil {
		return fmt.Errorf("allow the review commands: %w", err)
	}
	return nil
}

// AllowCodex writes CodexRules into $CODEX_HOME/rules (codexHome) and
// returns the file's path (writeOwned).
func AllowCodex(root, codexHome string) (string, error) {
	path := filepath.Join(codexHome, "rules", CodexRulesFile)
	return path, writeOwned(root, path, CodexRules)
}

// GeminiPolicyFile is the file of ~/.gemini/policies that party owns;
// Gemini's policy engine reads every .toml file there.
const GeminiPolicyFile = "party-review.toml"

// GeminiPolicy is what party writes into GeminiPolicyFile: one rule per
// command, since a rule has one commandPrefix.
const GeminiPolicy = `# Written by party start --review: the review loop's commands run without
# a confirmation. party owns this file; your policies go in other files.
[[rule]]
toolName = "run_shell_command"
commandPrefix = "party review"
decision = "allow"
priority = 100

[[rule]]
toolName = "run_shell_command"
commandPrefix = "party evidence"
decision = "allow"
priority = 100

[[rule]]
toolName = "run_shell_command"
commandPrefix = "party ask"
decision = "allow"
priority = 100
`

// AllowGemini writes GeminiPolicy into the policies of the Gemini home
// geminiHome (hook.GeminiHome: the directory holding .gemini) and
// returns the file's path (writeOwned).
func AllowGemini(root, geminiHome string) (string, error) {
	path := filepath.Join(geminiHome, ".gemini", "policies", GeminiPolicyFile)
	return path, writeOwned(root, path, GeminiPolicy)
}

// writeOwned writes text to path, a file party owns in an agent's
// configuration, under party's lock of that file (state.LockFile in the
// state root), unless it holds text already.
func writeOwned(root, path, text string) error {
	unlock, err := state.LockFile(root, path)
	if err != nil {
		return err
	}
	defer unlock()
	if b, err := os.ReadFile(path); err == nil && string(b) == text {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("allow the review commands: %w", err)
	}
	if err := state.WriteFile(path, []byte(text), 0o600); err != nil {
		return fmt.Errorf("allow the review commands: %w", err)
	}
	return nil
}

// Pane is one of a session's panes as Prepare sees it: the agent it runs
// and how its hooks are wired.
type Pane struct {
	Agent agent.Kind
	Hooks string
}

// Prepare makes the review state (Dir) of the session whose state dir is
// stateDir before its agents start (their first hooks, SessionStart,
// already reach the coordinator) and, with allow, lets its agents run the
// loop's commands (AllowCommands): claude's through party's settings file
// in stateDir, Codex's rules and Gemini's policies in their homes.
func Prepare(stateDir, root string, now time.Time, maxIterations int, allow bool, panes []Pane, getenv func(string) string) error {
	if err := Init(Dir(stateDir), now, maxIterations); err != nil {
		return err
	}
	if !allow {
		return nil
	}
	var claude, codex, gemini string
	for _, p := range panes {
		switch {
		case p.Hooks == "claude-settings":
			claude = filepath.Join(stateDir, "claude-settings.json")
		case p.Agent == agent.Codex:
			codex = hook.CodexHome(getenv)
		case p.Agent == agent.Gemini:
			gemini = hook.GeminiHome(getenv)
		}
	}
	return AllowCommands(root, claude, codex, gemini)
}
