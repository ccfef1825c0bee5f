package party

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
)

// InstallHooks merges party's hooks into the Claude Code settings.json of
// the working directory, or with user of $HOME (hook.InstallClaude).
func InstallHooks(env *Env, user, dryRun bool) (hook.Installed, error) {
	dir, err := env.Getwd()
	if user {
		if dir, err = env.Getenv("HOME"), nil; dir == "" {
			return hook.Installed{}, fmt.Errorf("%w: --user: HOME is not set", ErrUsage)
		}
	}
	if err != nil {
		return hook.Installed{}, err
	}
	exe, err := env.Executable()
	if err != nil {
		return hook.Installed{}, err
	}
	path := filepath.Join(dir, ".claude", "settings.json")
	root, err := env.StateRoot()
	if err != nil {
		return hook.Installed{}, err
	}
	unlock, err := state.LockFile(root, path) // two installs at once keep both merges
	if err != nil {
		return hook.Installed{}, err
	}
	defer unlock()
	return hook.InstallClaude(path, hook.ShellQuote(exe)+" hook claude", dryRun, env.Clock.Now())
}

// Hook records one hook event of agent, read from in or payload
// (hook.Record); out gets what the agent reads back.
func Hook(ctx context.Context, env *Env, in io.Reader, out io.Writer, agent string, payload []byte) error {
	return hook.Record(ctx, hook.Deps{Getenv: env.Getenv, Clock: env.Clock, Tmux: env.Tmux, In: in, Out: out,
		Review: review.Hooks{Cwd: func(stateDir, role string) (string, error) {
			rec, err := session.ReadRecord(stateDir)
			return rec.DirOf(role), err
		}}}, agent, payload)
}
