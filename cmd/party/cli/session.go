package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/tmux"
)

// pick is how a command on tc chooses its session: --session, then the
// environment (session.Pick).
func (f *Factory) pick(tc *tmux.Client) session.Pick {
	return session.Pick{Name: f.Session, Getenv: f.Getenv, Server: tc.Socket.String()}
}

// openScope reads the session a command acts on.
func openScope(ctx context.Context, f *Factory, tc *tmux.Client) (session.Scope, error) {
	return session.Open(ctx, tc, f.pick(tc))
}

// openPartyScope is openScope for a session party started (with a state dir).
func openPartyScope(ctx context.Context, f *Factory, tc *tmux.Client) (session.Scope, error) {
	return session.OpenParty(ctx, tc, f.pick(tc))
}

// resolveRole finds the pane of role: a registered agent, else the one
// pane of the session tagged with it.
func resolveRole(ctx context.Context, f *Factory, tc *tmux.Client, role string) (session.Target, error) {
	return f.resolver(tc).Resolve(ctx, role)
}

// resolver resolves roles on tc through the registry of the working
// directory, noting once on stderr that an untrusted one is ignored.
func (f *Factory) resolver(tc *tmux.Client) supervise.Resolver {
	rv := supervise.Resolver{Tmux: tc, Pick: f.pick(tc), Trust: config.TrustStoreFor(f.Getenv),
		Untrusted: func(path string) {
			if !f.registryNoted {
				f.registryNoted = true
				fmt.Fprintf(f.IO.ErrOut, "party: %s is not trusted: ignoring its names (read it, then run 'party config trust')\n", path)
			}
		}}
	if wd, err := f.Getwd(); err == nil {
		rv.Path = supervise.Path(wd)
	}
	return rv
}

// messageText is the text of a message: TEXT as given, or stdin for "-".
func messageText(f *Factory, text string, stdin bool) (string, error) {
	if !stdin {
		return text, nil
	}
	b, err := io.ReadAll(f.IO.In)
	if err != nil {
		return "", fmt.Errorf("read stdin: %w", err)
	}
	return string(b), nil
}
