package party

import (
	"errors"
	"fmt"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/registry"
)

// Trust trusts the working directory's local config and agents registry
// as they are now, or with revoke forgets them (party config trust).
// Neither file there is a usage error.
func Trust(env *Env, revoke bool) ([]config.TrustResult, error) {
	cwd, err := env.Getwd()
	if err != nil {
		return nil, err
	}
	_, local := config.Paths(env.Getenv, cwd)
	paths := []string{local, registry.Path(cwd)}
	out, err := config.TrustStoreFor(env.Getenv).TrustFiles(paths, revoke, env.Clock.Now())
	if errors.Is(err, config.ErrNothingToTrust) {
		return nil, fmt.Errorf("%w: no %s or %s to trust", ErrUsage, paths[0], paths[1])
	}
	return out, err
}
