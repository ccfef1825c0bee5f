package session

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/launch"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/core/usage"
)

// Respawner is what Respawn needs of the tmux client (*tmux.Client).
type Respawner interface {
	RespawnPane(ctx context.Context, id string, spawn tmux.Spawn) error
	NewWindow(ctx context.Context, session, name string, spawn tmux.Spawn) (string, error)
	SetOptions(ctx context.Context, opts ...tmux.Option) error
}

// Respawn starts the agent of role again from its launch spec, with a new
// runtime token (the old one is stale from then on): in pane when it is
// given (a dead pane, respawned), else in a new window of the session
// named for the role, tagged as Start tags its panes. It returns the new
// token's hash and the pane.
func Respawn(ctx context.Context, t Respawner, exe, stateDir, role, pane, resume string) (tokenHash, id string, err error) {
	rec, err := ReadRecord(stateDir)
	if err != nil {
		return "", "", err
	}
	var spec *PaneSpec
	for i := range rec.Panes {
		if rec.Panes[i].Role == role {
			spec = &rec.Panes[i]
		}
	}
	if spec == nil {
		return "", "", fmt.Errorf("respawn %s: not a pane of the session's record: %w", role, usage.Err)
	}
	path := filepath.Join(stateDir, "launch", role+".json")
	ls, err := launch.Read(path)
	if err != nil {
		return "", "", fmt.Errorf("respawn %s: %w", role, err)
	}
	token := state.NewToken()
	env := ls.Env[:0:0]
	for _, kv := range ls.Env {
		if !strings.HasPrefix(kv, "PARTY_RUNTIME_TOKEN=") {
			env = append(env, kv)
		}
	}
	ls.Env = append(env, "PARTY_RUNTIME_TOKEN="+token)
	if err := launch.Write(path, ls); err != nil {
		return "", "", err
	}
	hash := state.HashToken(token)
	if rec.Tokens == nil {
		rec.Tokens = map[string]string{}
	}
	rec.Tokens[role] = hash
	if err := WriteRecord(stateDir, rec); err != nil {
		return "", "", err
	}
	spawn := tmux.Spawn{Cwd: ls.Dir, Argv: launch.Command(exe, path)}
	if resume != "" {
		if spawn.Argv, err = resumeCommand(exe, stateDir, role, spec.Agent, ls, resume); err != nil {
			return "", "", fmt.Errorf("respawn %s: %w", role, err)
		}
	}
	if pane != "" {
		return hash, pane, t.RespawnPane(ctx, pane, spawn)
	}
	if id, err = t.NewWindow(ctx, rec.Session, role, spawn); err != nil {
		return "", "", err
	}
	opts := []tmux.Option{
		{Scope: "-w", Target: id, Name: "remain-on-exit", Value: "on"},
		{Scope: "-p", Target: id, Name: "@party_role", Value: role},
		{Scope: "-p", Target: id, Name: "@party_agent", Value: string(spec.Agent)},
	}
	if spec.Hooks != "" {
		opts = append(opts, tmux.Option{Scope: "-p", Target: id, Name: "@party_hooks", Value: spec.Hooks})
	}
	return hash, id, t.SetOptions(ctx, opts...)
}

// resumeCommand is the command that starts the agent of role, of kind,
// from its launch spec ls resuming its own session id. This start only
// resumes the session: the launch spec stays the fresh one, the resumed
// argv goes to a spec of its own, launch/ROLE.resume.json.
func resumeCommand(exe, stateDir, role string, kind agent.Kind, ls launch.Spec, id string) ([]string, error) {
	var err error
	if ls.Argv, err = agent.ResumeArgv(kind, ls.Argv, id); err != nil {
		return nil, err
	}
	path := filepath.Join(stateDir, "launch", role+".resume.json")
	if err := launch.Write(path, ls); err != nil {
		return nil, err
	}
	return launch.Command(exe, path), nil
}
