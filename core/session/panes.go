package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/roles"
	"github.com/partyhq/party/core/shellwords"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/usage"
)

// DefaultPanes is the layout when no --pane is given.
func DefaultPanes() []string { return []string{"codex", "claude", "shell"} }

// PaneSpec is one pane of a session: a parsed --pane, then where it runs.
type PaneSpec struct {
	Role  string     `json:"role"`
	Agent agent.Kind `json:"agent"`
	Argv  []string   `json:"argv"`
	ID    string     `json:"pane"`
	Hooks string     `json:"hooks,omitempty"` // how completion hooks are wired: claude-settings, codex-notify, gemini-settings
	// MCP says party's MCP server (party mcp) is wired into its agent:
	// the supervisor's triggers name its tools.
	MCP bool `json:"mcp,omitempty"`
	// Worktree is the pane's own git worktree (party start --worktree), on
	// Branch; empty: the pane runs in the session's folder.
	Worktree string `json:"worktree,omitempty"`
	Branch   string `json:"branch,omitempty"`
	// launch is Argv plus the arguments that wire the hooks; env is what
	// the pane's environment needs for them (Gemini's trust of a worktree).
	launch []string
	env    []string
}

// ParsePanes parses --pane ROLE[=COMMAND] specs (none: DefaultPanes). A
// role without a command named claude, codex or gemini runs that agent;
// any other gets a shell (no Argv).
func ParsePanes(specs []string) ([]PaneSpec, error) {
	if len(specs) == 0 {
		specs = DefaultPanes()
	}
	seen := map[string]bool{}
	var out []PaneSpec
	for _, s := range specs {
		role, command, hasCmd := strings.Cut(s, "=")
		if !roles.ValidRole(role) {
			return nil, fmt.Errorf("%w: --pane %q: role must be letters, digits, '_', '.' or '-'", usage.Err, s)
		}
		if seen[role] {
			return nil, fmt.Errorf("%w: --pane %q: role %q given twice", usage.Err, s, role)
		}
		seen[role] = true
		var argv []string
		switch {
		case hasCmd:
			var err error
			if argv, err = shellwords.SplitCommand(command); err != nil {
				return nil, fmt.Errorf("%w: --pane %q: %w", usage.Err, s, err)
			}
		case agent.Infer([]string{role}) != agent.Generic && agent.Infer([]string{role}) != agent.Shell:
			argv = []string{role}
		}
		out = append(out, PaneSpec{Role: role, Agent: agent.Infer(argv), Argv: argv})
	}
	return out, nil
}

// configure gives each pane whose spec names no command the command that
// cfg configures for its role or agent.
func configure(panes []PaneSpec, specs []string, cfg config.Config) error {
	for i, p := range panes {
		// A role given without a command runs its configured command.
		if strings.Contains(specOf(specs, i), "=") {
			continue
		}
		if c := cfg.AgentFor(p.Role, string(p.Agent)).Command; c != "" {
			argv, err := shellwords.SplitCommand(c)
			if err != nil || len(argv) == 0 {
				return fmt.Errorf("agents.%s.command %q: %w", p.Role, c, config.ErrInvalid)
			}
			panes[i].Argv, panes[i].Agent = argv, agent.Infer(argv)
		}
	}
	return nil
}

// specOf is the i-th --pane as given, or the default layout's.
func specOf(specs []string, i int) string {
	if len(specs) == 0 {
		return DefaultPanes()[i]
	}
	return specs[i]
}

var unsafeSession = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// Name derives a tmux-safe session name from a directory.
func Name(dir string) string {
	n := strings.Trim(unsafeSession.ReplaceAllString(filepath.Base(dir), "-"), "-")
	if n == "" {
		return "party"
	}
	return n
}

// ParseSize parses a window size WxH.
func ParseSize(s string) (int, int, error) {
	w, h, ok := strings.Cut(s, "x")
	wi, err1 := strconv.Atoi(w)
	hi, err2 := strconv.Atoi(h)
	if !ok || err1 != nil || err2 != nil || wi < 20 || hi < 5 || wi > 1000 || hi > 1000 {
		return 0, 0, fmt.Errorf("%w: --size %q: want WxH, e.g. 200x50", usage.Err, s)
	}
	return wi, hi, nil
}

// wireHooks adds to the launch command of each claude and codex pane the
// arguments that make the agent report its turns to "party hook": a
// settings file for claude (--settings), a notify program for codex.
// Gemini has no such flag: its hooks go into the folder's
// .gemini/settings.json (Deps.Gemini), with party's MCP server when mcp
// enables it: the session's folder's, or a worktree pane's own. A gemini
// pane whose folder Gemini does not trust keeps the marker, with a
// warning.
func wireHooks(d Deps, dir, cwd string, panes []PaneSpec, mcp config.MCP) error {
	geminiWired, fallback := false, ""
	for i, p := range panes {
		panes[i].launch = p.Argv
		switch p.Agent {
		case agent.Claude:
			settings := filepath.Join(dir, "claude-settings.json")
			if err := state.WriteFile(settings, hook.ClaudeSettings(hook.ShellQuote(d.Exe)+" hook claude"), 0o600); err != nil {
				return err
			}
			panes[i].launch = append(slices.Clone(p.Argv), "--settings", settings)
			panes[i].Hooks = "claude-settings"
		case agent.Codex:
			// Codex runs its tool commands in a login shell, whose profile
			// resets PATH: party (and what an agent is told to run) would
			// not be found. A plain shell keeps the pane's environment: PATH,
			// PARTY_SESSION, PARTY_STATE_DIR, PARTY_RUNTIME_TOKEN.
			panes[i].launch = append(slices.Clone(p.Argv), "-c", hook.CodexNotify([]string{d.Exe, "hook", "codex-notify"}),
				"-c", "allow_login_shell=false")
			panes[i].Hooks = "codex-notify"
		case agent.Gemini:
			if p.Worktree != "" {
				// Its own folder: its own settings, kept out of its changes.
				fallback, env, err := d.wireGeminiTree(dir, cwd, p, mcp)
				if err != nil {
					return err
				}
				if fallback != "" {
					warnNoHooks(d, p.Role, fallback)
					continue
				}
				panes[i].env, panes[i].Hooks, panes[i].MCP = env, "gemini-settings", mcp.Enabled
				continue
			}
			if !geminiWired {
				var err error
				if fallback, err = d.wireGemini(dir, cwd, p.Argv, mcp); err != nil {
					return err
				}
				geminiWired = true
			}
			if fallback != "" {
				warnNoHooks(d, p.Role, fallback)
				continue
			}
			panes[i].Hooks = "gemini-settings"
			panes[i].MCP = mcp.Enabled // with the hooks, in the same settings
		}
	}
	return nil
}

// warnNoHooks says that the gemini pane of role runs without party's hooks,
// and why (fallback; "" says nothing).
func warnNoHooks(d Deps, role, fallback string) {
	if fallback != "" {
		d.warn("warning: %s pane: %s; talk --wait reads party's marker from its screen instead", role, fallback)
	}
}

// LookPath finds prog on path (a PATH value) the way a shell would, so the
// pane runs what the caller's PATH names even when the tmux server was
// started with another PATH.
func LookPath(prog, path, cwd string) (string, error) {
	if strings.Contains(prog, "/") {
		if !filepath.IsAbs(prog) {
			prog = filepath.Join(cwd, prog)
		}
		if isExecutable(prog) {
			return prog, nil
		}
		return "", fmt.Errorf("%s is not an executable file: %w", prog, ErrAgentMissing)
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		if p := filepath.Join(dir, prog); isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found on PATH (install it, or give --pane ROLE=/path/to/%s): %w", prog, prog, ErrAgentMissing)
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// writeJSONFile writes v as indented JSON (no HTML escaping), the way
// party prints JSON, atomically and private.
func writeJSONFile(path string, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return state.WriteFile(path, b.Bytes(), 0o600)
}

// dir is the folder the pane runs in: its worktree, else cwd.
func (p PaneSpec) dir(cwd string) string {
	if p.Worktree != "" {
		return p.Worktree
	}
	return cwd
}
