package party

import (
	"context"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/registry"
)

// Agents is the registry of the agents of the working directory, the
// panes party did not start; a missing one is empty.
func Agents(env *Env) (*registry.Registry, error) {
	wd, err := env.Getwd()
	if err != nil {
		return nil, err
	}
	return registry.Load(registry.Path(wd))
}

// editAgents loads the registry, changes it and saves it, still trusted
// when it was: the change is the user's (registry.Edit). A registry that
// came with the repository stays untrusted, which stderr says.
func editAgents(env *Env, change func(*registry.Registry) error) (*registry.Registry, error) {
	wd, err := env.Getwd()
	if err != nil {
		return nil, err
	}
	root, err := env.StateRoot()
	if err != nil {
		return nil, err
	}
	r, untrusted, err := registry.Edit(root, registry.Path(wd), config.TrustStoreFor(env.Getenv), env.Clock.Now(), change)
	if untrusted {
		env.Warnf("%s is not trusted: the change is saved, but its names are ignored until you read it and run 'party config trust'", r.Path)
	}
	return r, err
}

// InitAgents writes the registry of the working directory, empty when
// there was none, and returns its path.
func InitAgents(env *Env) (string, error) {
	r, err := editAgents(env, func(*registry.Registry) error { return nil })
	if err != nil {
		return "", err
	}
	return r.Path, nil
}

// RegisterAgent points name at pane (an id %N or a tmux target) in the
// registry: a new name, or with update a known one (Registry.Register).
// A nil remark keeps the old one.
func RegisterAgent(ctx context.Context, env *Env, name, pane string, remark *string, update bool) (registry.Entry, error) {
	var e registry.Entry
	_, err := editAgents(env, func(r *registry.Registry) (err error) {
		e, err = r.Register(ctx, env.Tmux, name, pane, remark, update)
		return err
	})
	return e, err
}

// RemoveAgent forgets name.
func RemoveAgent(env *Env, name string) error {
	_, err := editAgents(env, func(r *registry.Registry) error { return r.Remove(name) })
	return err
}
