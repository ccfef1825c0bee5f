package session

import (
	"context"
	"fmt"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/tmux"
)

// Tmux is what session needs of the tmux client (*tmux.Client).
type Tmux interface {
	HasSession(ctx context.Context, name string) (bool, error)
	KillSession(ctx context.Context, name string) error
	SessionInfo(ctx context.Context, session string) (tmux.SessionInfo, error)
	NewSession(ctx context.Context, name string, w, h int, spawn tmux.Spawn, opts ...tmux.Option) (string, error)
	SplitWindow(ctx context.Context, target string, spawn tmux.Spawn) (string, error)
	SplitBottom(ctx context.Context, session string, lines int, spawn tmux.Spawn) (string, error)
	NewWindow(ctx context.Context, session, name string, spawn tmux.Spawn) (string, error)
	SetOptions(ctx context.Context, opts ...tmux.Option) error
	ListPanes(ctx context.Context, session string) ([]mux.Pane, error)
	Capture(ctx context.Context, id string, history int) (string, error)
	RespawnPane(ctx context.Context, id string, spawn tmux.Spawn) error
}

// Deps are what Start and Stop work with.
type Deps struct {
	Tmux Tmux
	// Server names the tmux server in messages; SocketPath is its socket.
	Server, SocketPath string
	Getenv             func(string) string
	Environ            []string // the caller's environment, KEY=VALUE
	Getwd              func() (string, error)
	Clock              clock.Clock
	// Exe is the party binary that panes and hooks run.
	Exe string
	// Warn gets each warning, one line without "party: ".
	Warn func(string)
	// Live says whether session runs on the server at socket (a path);
	// another live session may still need the Gemini hooks of a folder.
	Live func(ctx context.Context, socket, session string) bool
	// Unlink, when set, takes a session's windows out of the other
	// sessions they are linked into (its iTerm2 view), before the session
	// is killed: there they would outlive it.
	Unlink func(ctx context.Context, session string) error
	// PrepareReview makes the review state in stateDir of a session
	// started with Review, before its agents start, and lets the agents
	// of panes run the loop's commands when cfg allows it; Coordinator
	// starts its coordinator in a hidden window, once the session is up
	// (core/party provides both).
	PrepareReview func(d Deps, stateDir, root string, panes []PaneSpec, cfg config.Review) error
	Coordinator   func(ctx context.Context, d Deps, session, stateDir string, maxIterations int) error
	// Gemini wires party's hooks into a folder's Gemini settings (core/party
	// fills in hook.GeminiWiring); nil wires none: Gemini panes keep the marker.
	Gemini GeminiHooks
}

// GeminiHooks puts party's hooks into the Gemini settings of a folder
// and takes them out again. Gemini has no flag for a settings file, so
// the hooks live in the folder, recorded in the session's state dir.
type GeminiHooks interface {
	// Wire adds the hooks for a pane running argv in cwd, and party's MCP
	// server unless mcp is nil; fallback says why the pane must read
	// party's marker instead (an untrusted folder, settings that cannot be
	// merged).
	Wire(stateDir, cwd string, argv []string, mcp *hook.GeminiMCP) (fallback string, err error)
	// WireWorktree does it for the pane of role running in tree, its own
	// worktree of the repository in repo, keeping the settings out of the
	// agent's changes; env is what the pane's environment needs for Gemini
	// to trust the worktree as it trusts repo.
	WireWorktree(stateDir, role, tree, repo string, argv []string, mcp *hook.GeminiMCP) (fallback string, env []string, err error)
	// Unwire takes out what Wire added for the session in stateDir.
	Unwire(ctx context.Context, stateDir string) error
	// SettingsPath is the settings file of the folder dir: Start holds
	// its lock (state.LockFile) from Wire until the session is live.
	SettingsPath(dir string) string
}

// wireGemini is d.Gemini.Wire, with party's MCP server when cfg enables
// it, or a fallback without it.
func (d Deps) wireGemini(stateDir, cwd string, argv []string, cfg config.MCP) (string, error) {
	if d.Gemini == nil {
		return "party wires no Gemini hooks here", nil
	}
	return d.Gemini.Wire(stateDir, cwd, argv, geminiMCP(d, cfg))
}

// wireGeminiTree is d.Gemini.WireWorktree for pane p, with party's MCP
// server when cfg enables it, or a fallback without it.
func (d Deps) wireGeminiTree(stateDir, repo string, p PaneSpec, cfg config.MCP) (string, []string, error) {
	if d.Gemini == nil {
		return "party wires no Gemini hooks here", nil, nil
	}
	return d.Gemini.WireWorktree(stateDir, p.Role, p.Worktree, repo, p.Argv, geminiMCP(d, cfg))
}

// unwireGemini is d.Gemini.Unwire, or nothing without it.
func (d Deps) unwireGemini(ctx context.Context, stateDir string) error {
	if d.Gemini == nil {
		return nil
	}
	return d.Gemini.Unwire(ctx, stateDir)
}

// kill kills session name, unlinked first (Deps.Unlink).
func (d Deps) kill(ctx context.Context, name string) error {
	if d.Unlink != nil {
		if err := d.Unlink(ctx, name); err != nil {
			return err
		}
	}
	return d.Tmux.KillSession(ctx, name)
}

func (d Deps) warn(format string, a ...any) {
	if d.Warn != nil {
		d.Warn(fmt.Sprintf(format, a...))
	}
}
