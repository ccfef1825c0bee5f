package party

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/partyhq/party/core/hosts"
	"github.com/partyhq/party/core/remote"
	"github.com/partyhq/party/core/supervise"
)

// VersionInfo is what party version prints (core/remote).
type VersionInfo = remote.VersionInfo

// Version is this party's version (remote.Version).
func Version(getenv func(string) string) string { return remote.Version(getenv) }

// Versions is this party's version and its bridge's protocol.
func Versions(env *Env) VersionInfo { return remote.Versions(env.Getenv) }

// HostView is a host as party hosts shows it, under HostHeader
// (core/remote).
type HostView = remote.View

// HostHeader is the header of HostView's rows.
var HostHeader = remote.Header

// remoteCaller is env as core/remote's caller: its ssh runner (else
// os/exec), clock, version and the error table's codes.
func remoteCaller(env *Env) remote.Caller {
	var ssh hosts.Runner = hosts.ExecRunner{}
	if env.SSH != nil {
		ssh = env.SSH
	}
	return remote.Caller{SSH: ssh, Clock: env.Clock, Version: Version(env.Getenv), Classify: codeOf}
}

// Hosts looks at each configured host and each of names (a configured
// host's name, or an SSH destination), all at once (remote.Caller.LookAll);
// a name that is no plain token is hosts.ErrName (exit 2).
func Hosts(ctx context.Context, env *Env, names []string) ([]HostView, error) {
	cfg, err := env.Config()
	if err != nil {
		return nil, err
	}
	list, err := remote.Named(cfg, names)
	if err != nil {
		return nil, err
	}
	return remoteCaller(env).LookAll(ctx, list), nil
}

// Bridge is the remote end of the API bridge (party supervise bridge) to
// the supervisor of the session the command acts on (remote.Bridge).
func Bridge(ctx context.Context, env *Env, in io.Reader, out io.Writer) error {
	conn, name, err := bridgeSocket(ctx, env)
	return remote.Bridge(ctx, Version(env.Getenv), name, conn, err, codeOf, in, out)
}

// bridgeSocket is a connection to the API socket of the supervisor of
// the session the command acts on.
func bridgeSocket(ctx context.Context, env *Env) (net.Conn, string, error) {
	stateDir, name, err := supervisorScope(ctx, env)
	if err != nil {
		return nil, name, err
	}
	sock, err := supervise.APISocket(env.Getenv, stateDir)
	if err != nil {
		return nil, name, err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		return nil, name, fmt.Errorf("%w in session %s: %v", supervise.ErrNotRunning, name, err)
	}
	return conn, name, nil
}

// hostTrigger is Trigger for a role on another host (ROLE@HOST) through
// the API bridge (remote.Caller.Trigger). The session there is
// --session, else the one party session there whose panes carry the
// role. The call there is the operator's, so a runtime (inside an agent's
// pane) may not make it: what one agent sends another host is the
// cross-host inbox's, which is not built yet.
func hostTrigger(ctx context.Context, env *Env, name string, opts TriggerOptions) (TriggerResult, error) {
	if env.Getenv("PARTY_RUNTIME_TOKEN") != "" {
		return TriggerResult{}, fmt.Errorf("%w: a runtime cannot trigger a role on another host (%s): the call there would be the operator's", supervise.ErrForbidden, name)
	}
	cfg, err := env.Config()
	if err != nil {
		return TriggerResult{}, err
	}
	h, err := remote.HostOf(cfg, name)
	if err != nil {
		return TriggerResult{}, err
	}
	if opts.Role == "" {
		return TriggerResult{}, fmt.Errorf("%w: ROLE@HOST names no role", ErrUsage)
	}
	c := remoteCaller(env)
	session := env.Session
	if session == "" {
		if session, err = c.SessionOf(ctx, h, opts.Role); err != nil {
			return TriggerResult{}, err
		}
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = cfg.Supervise.TurnTimeout
	}
	t, created, err := c.Trigger(ctx, h, session, opts.TriggerRequest, opts.Wait, timeout)
	return TriggerResult{Trigger: t, Created: created}, err
}
