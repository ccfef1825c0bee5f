package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/shellwords"
	"github.com/partyhq/party/core/state"
)

// The agents party mcp install knows.
const (
	Claude = "claude"
	Codex  = "codex"
	Gemini = "gemini"
)

// Agents are the agents party mcp install knows, in order.
var Agents = []string{Claude, Codex, Gemini}

// ServerName is the name of party's MCP server in each agent's
// configuration.
const ServerName = "party"

var (
	// ErrTaken is an agent configuration whose server named party runs
	// another command: install and uninstall leave it alone unless forced.
	ErrTaken = errors.New("another MCP server is named party")
	// ErrAgentCLI is an agent's own CLI that failed, or did not do what
	// it was asked.
	ErrAgentCLI = errors.New("agent CLI failed")
)

// Runner runs an agent's CLI: argv only, never a shell. A run that ended,
// whatever its exit code, has err nil.
type Runner interface {
	Run(ctx context.Context, argv []string) (stdout, stderr []byte, exit int, err error)
}

// ExecRunner runs argv with os/exec, in Env (nil: this process's).
type ExecRunner struct{ Env []string }

// Run runs argv and reports how it ended.
func (r ExecRunner) Run(ctx context.Context, argv []string) (stdout, stderr []byte, exit int, err error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = r.Env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.Bytes(), errb.Bytes(), ee.ExitCode(), nil
	}
	return out.Bytes(), errb.Bytes(), 0, err
}

// Installer registers party's MCP server (Exe mcp) in an agent's own user
// configuration, for an agent started by hand (party mcp install), the
// way each agent expects:
//
//   - claude: its CLI, claude mcp add -s user party -- EXE mcp (and
//     claude mcp remove -s user party), which write mcpServers.party of
//     its user config file (~/.claude.json), read to see what is there;
//     Claude gives the server its whole environment.
//   - codex: Codex gives a server only the variables it names in
//     env_vars, which codex mcp add cannot write; party appends the table
//     [mcp_servers.party] (command, args, env_vars) to
//     $CODEX_HOME/config.toml and has codex mcp get --json read it back
//     (a file Codex cannot read is put back as it was); codex mcp remove
//     takes it out.
//   - gemini: Gemini drops the secret-looking variables (the token) from
//     a server's environment unless its settings allow them, which gemini
//     mcp add cannot write; party merges both into ~/.gemini/settings.json
//     as party start does for a folder (hook.GeminiMCPInstall).
//
// A server named party that runs another command is refused (ErrTaken)
// unless forced. Nothing makes the tools run without the agent's usual
// confirmation.
type Installer struct {
	Agent string // claude, codex or gemini
	// Bin is the agent's CLI (claude, codex): an absolute path.
	Bin string
	// Exe is party's executable, an absolute path.
	Exe string
	// Env are the names of the variables party mcp needs from an agent
	// pane (the session, the runtime's token): Codex's env_vars, Gemini's
	// allowed names.
	Env    []string
	Getenv func(string) string
	Runner Runner
	// Root is party's state root: the locks, Gemini's record.
	Root string
}

// Installed is what Install or Uninstall did, or with a dry run would do,
// as party mcp install --json prints it.
type Installed struct {
	Agent   string   `json:"agent"`
	Server  string   `json:"server"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
	// Path is the file the agent keeps it in.
	Path string `json:"path"`
	// Run are the agent's CLI commands run (a dry run: to be run).
	Run [][]string `json:"run,omitempty"`
	// Content is what party writes itself: codex's table (appended),
	// gemini's settings document (whole).
	Content string `json:"content,omitempty"`
	Changed bool   `json:"changed"`
	DryRun  bool   `json:"dry_run,omitempty"`
	// Replaced is the command of a server named party that force
	// replaced or removed.
	Replaced string `json:"replaced,omitempty"`
}

// current is a server named party in an agent's configuration.
type current struct {
	Command string
	Args    []string
	EnvVars []string
}

func (c *current) ours(exe string) bool {
	return c != nil && c.Command == exe && slices.Equal(c.Args, []string{"mcp"})
}

// Install registers party's server; with force a server named party of
// another command is replaced. A dry run changes nothing.
func (i Installer) Install(ctx context.Context, force, dryRun bool) (Installed, error) {
	return i.do(ctx, true, force, dryRun)
}

// Uninstall takes out what Install added: party's server (one running
// Exe mcp; with force, whatever is named party) and, for gemini, the
// allowed names it added. A dry run changes nothing.
func (i Installer) Uninstall(ctx context.Context, force, dryRun bool) (Installed, error) {
	return i.do(ctx, false, force, dryRun)
}

func (i Installer) do(ctx context.Context, install, force, dryRun bool) (Installed, error) {
	res := Installed{Agent: i.Agent, Server: ServerName, Command: i.Exe, Args: []string{"mcp"}, DryRun: dryRun}
	if i.Agent == Gemini {
		return i.gemini(res, install, force, dryRun)
	}
	var (
		get    func(context.Context) (*current, error)
		add    func(context.Context, bool) error
		remove []string
	)
	switch i.Agent {
	case Claude:
		res.Path = claudeConfig(i.Getenv)
		get = i.claudeGet(res.Path)
		remove = []string{i.Bin, "mcp", "remove", "-s", "user", ServerName}
		addArgv := []string{i.Bin, "mcp", "add", "-s", "user", ServerName, "--", i.Exe, "mcp"}
		add = func(ctx context.Context, dry bool) error {
			res.Run = append(res.Run, addArgv)
			if dry {
				return nil
			}
			if err := i.run(ctx, addArgv); err != nil {
				return err
			}
			return i.check(ctx, get, true)
		}
	case Codex:
		res.Path = filepath.Join(hook.CodexHome(i.Getenv), "config.toml")
		get = i.codexGet
		remove = []string{i.Bin, "mcp", "remove", ServerName}
		add = func(ctx context.Context, dry bool) error {
			table := codexTable(i.Exe, i.Env)
			res.Content = table
			if dry {
				return nil
			}
			return i.codexAppend(ctx, res.Path, table)
		}
	default:
		return res, fmt.Errorf("%w: agent %q: want claude, codex or gemini", errUsage, i.Agent)
	}
	unlock, err := state.LockFile(i.Root, res.Path)
	if err != nil {
		return res, err
	}
	defer unlock()
	cur, err := get(ctx)
	if err != nil {
		return res, err
	}
	want := install && cur.ours(i.Exe) && (i.Agent != Codex || slices.Equal(cur.EnvVars, i.Env))
	switch {
	case cur == nil && !install, want:
		return res, nil // nothing to do
	case cur != nil && !cur.ours(i.Exe):
		if !force {
			return res, taken(res.Path, commandLine(cur), install)
		}
		res.Replaced = commandLine(cur)
	}
	res.Changed = true
	if cur != nil {
		res.Run = append(res.Run, remove)
		if !dryRun {
			if err := i.run(ctx, remove); err != nil {
				return res, err
			}
		}
	}
	switch {
	case install:
		return res, add(ctx, dryRun)
	case dryRun:
		return res, nil
	}
	return res, i.check(ctx, get, false)
}

// check reads the agent's configuration back (get): party's server is
// there (or gone), as asked.
func (i Installer) check(ctx context.Context, get func(context.Context) (*current, error), there bool) error {
	cur, err := get(ctx)
	switch {
	case err != nil:
		return err
	case there && !cur.ours(i.Exe):
		return fmt.Errorf("%w: %s's configuration does not show party's server after it was added", ErrAgentCLI, i.Agent)
	case !there && cur != nil:
		return fmt.Errorf("%w: %s's configuration still shows a server named party after it was removed", ErrAgentCLI, i.Agent)
	}
	return nil
}

// run runs an agent's CLI; a run that fails is ErrAgentCLI with what it
// printed.
func (i Installer) run(ctx context.Context, argv []string) error {
	out, errOut, exit, err := i.Runner.Run(ctx, argv)
	if err != nil {
		return fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	if exit != 0 {
		return fmt.Errorf("%w: %s exited %d: %s", ErrAgentCLI, strings.Join(argv, " "), exit,
			strings.TrimSpace(string(errOut)+" "+string(out)))
	}
	return nil
}

// claudeConfig is Claude Code's user config file, where claude mcp add -s
// user writes (Claude Code 2.1.197): .config.json of its config dir
// ($CLAUDE_CONFIG_DIR, else ~/.claude) when there is one, else
// .claude.json in $CLAUDE_CONFIG_DIR, else in HOME.
func claudeConfig(getenv func(string) string) string {
	dir := getenv("CLAUDE_CONFIG_DIR")
	legacy := dir
	if legacy == "" {
		legacy = filepath.Join(getenv("HOME"), ".claude")
	}
	if p := filepath.Join(legacy, ".config.json"); fileExists(p) {
		return p
	}
	if dir == "" {
		dir = getenv("HOME")
	}
	return filepath.Join(dir, ".claude.json")
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// claudeGet reads the server named party of Claude's user config at path.
func (i Installer) claudeGet(path string) func(context.Context) (*current, error) {
	return func(context.Context) (*current, error) {
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		var cfg struct {
			Servers map[string]*current `json:"mcpServers"`
		}
		if err := json.Unmarshal(b, &cfg); err != nil {
			return nil, fmt.Errorf("%s: %w: %w", path, ErrAgentCLI, err)
		}
		return cfg.Servers[ServerName], nil
	}
}

// codexGet reads the server named party as Codex does (codex mcp get
// --json).
func (i Installer) codexGet(ctx context.Context) (*current, error) {
	argv := []string{i.Bin, "mcp", "get", ServerName, "--json"}
	out, errOut, exit, err := i.Runner.Run(ctx, argv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	if exit != 0 {
		if bytes.Contains(errOut, []byte("No MCP server named")) {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: %s exited %d: %s", ErrAgentCLI, strings.Join(argv, " "), exit, lastLines(errOut))
	}
	var got struct {
		Transport struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
			EnvVars []string `json:"env_vars"`
			URL     string   `json:"url"`
		} `json:"transport"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrAgentCLI, strings.Join(argv, " "), err)
	}
	t := got.Transport
	if t.Command == "" {
		t.Command = t.URL
	}
	return &current{Command: t.Command, Args: t.Args, EnvVars: t.EnvVars}, nil
}

// codexTable is party's server as a table of Codex's config.toml, as
// codex mcp add writes one (a blank line before it), with env_vars.
func codexTable(exe string, env []string) string {
	return "\n[mcp_servers." + ServerName + "]\ncommand = " + tomlValue(exe) + "\nargs = " + tomlValue([]string{"mcp"}) +
		"\nenv_vars = " + tomlValue(env) + "\n"
}

// tomlValue is v (a string or a list of strings) as a TOML value: JSON's
// strings and arrays of strings are TOML's too.
func tomlValue(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// codexAppend appends table to Codex's config file at path (made 0600
// with its directory when missing); when Codex then does not read party's
// server from it, it is put back as it was.
func (i Installer) codexAppend(ctx context.Context, path, table string) error {
	old, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	body := old
	if len(body) > 0 && body[len(body)-1] != '\n' {
		body = append(slices.Clip(body), '\n')
	}
	body = append(slices.Clip(body), table...)
	if len(old) == 0 {
		body = []byte(strings.TrimPrefix(table, "\n"))
	}
	perm := os.FileMode(0o600)
	if exists {
		if fi, err := os.Stat(path); err == nil {
			perm = fi.Mode().Perm()
		}
	} else if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := state.WriteFile(path, body, perm); err != nil {
		return err
	}
	if err := i.check(ctx, i.codexGet, true); err != nil {
		if exists {
			_ = state.WriteFile(path, old, perm)
		} else {
			_ = os.Remove(path)
		}
		return fmt.Errorf("codex does not read party's server from %s, left as it was: %w", path, err)
	}
	return nil
}

// gemini merges into, or takes out of, Gemini's user settings.
func (i Installer) gemini(res Installed, install, force, dryRun bool) (Installed, error) {
	res.Path = filepath.Join(hook.GeminiHome(i.Getenv), ".gemini", "settings.json")
	g := hook.GeminiMCPInstall{Path: res.Path, Root: i.Root, Record: filepath.Join(i.Root, "mcp-install", "gemini.json")}
	var (
		ch  hook.GeminiMCPChange
		err error
	)
	if install {
		ch, err = g.Install(hook.GeminiMCP{Command: i.Exe, Args: []string{"mcp"}, Allow: i.Env}, force, dryRun)
	} else {
		ch, err = g.Uninstall(i.Exe, force, dryRun)
	}
	if err != nil {
		return res, err
	}
	if ch.Taken != "" {
		return res, taken(res.Path, ch.Taken, install)
	}
	res.Changed, res.Replaced, res.Content = ch.Changed, ch.Replaced, string(ch.Content)
	if !dryRun {
		res.Content = ""
	}
	return res, nil
}

// taken is ErrTaken for the server named party of path, which runs
// command.
func taken(path, command string, install bool) error {
	verb := "replace"
	if !install {
		verb = "remove"
	}
	return fmt.Errorf("%s: %w: it runs %s; --force to %s it", path, ErrTaken, command, verb)
}

// commandLine is c's command and arguments, for a message.
func commandLine(c *current) string {
	return strings.Join(append([]string{c.Command}, c.Args...), " ")
}

// lastLines is the end of a CLI's error output, without the backtrace
// Codex prints after it.
func lastLines(b []byte) string {
	s := string(b)
	if i := strings.Index(s, "\n\nStack backtrace:"); i >= 0 {
		s = s[:i]
	}
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "WARNING: proceeding") || strings.TrimSpace(l) == "" {
			continue
		}
		keep = append(keep, strings.TrimSpace(l))
	}
	return strings.Join(keep, " ")
}

// Lines are the agent CLI commands of r.Run as a shell would take them,
// for a person to read (party mcp install --print).
func (r Installed) Lines() []string {
	var lines []string
	for _, argv := range r.Run {
		lines = append(lines, shellwords.Join(argv))
	}
	return lines
}
