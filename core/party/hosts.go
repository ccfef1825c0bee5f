package party

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/hosts"
	"github.com/partyhq/party/core/remote"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/talk"
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

// CheckCaller refuses a command another host's party runs here for a
// party of another version than this one (remote.CallerFlag); for this
// version's, it says on stderr that the command started
// (hosts.StartedLine), which tells that party a connection lost from now
// on from one never made.
func CheckCaller(env *Env, caller string) error {
	if err := remote.CheckCaller(caller, Version(env.Getenv)); err != nil {
		return err
	}
	if env.Stderr != nil {
		fmt.Fprintln(env.Stderr, hosts.StartedLine)
	}
	return nil
}

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

// remoteLocal is env as the party here that calls another host's for
// a command (remote.Local): its caller, configuration, --session, whether
// it runs in an agent's pane and its stderr.
func remoteLocal(env *Env) remote.Local {
	return remote.Local{Caller: remoteCaller(env), Config: env.Config, Session: env.Session,
		InPane: env.Getenv("PARTY_RUNTIME_TOKEN") != "", Stderr: env.Stderr}
}

// hostSend is Send to a role on another host (remote.Local.Send): what
// the party there printed, with the host and how long it took there.
func hostSend(ctx context.Context, env *Env, role, name string, req SendRequest) (Sent, error) {
	s := Sent{Role: role, Host: name, Result: deliver.Result{Outcome: deliver.Failed}}
	err := remoteLocal(env).Send(ctx, role, name, remote.SendArgs{Text: req.Text, Why: req.Why, Force: req.Force, Raw: req.Raw, Clear: req.Clear}, &s)
	s.Host, s.Duration = name, time.Duration(s.MS)*time.Millisecond // what the remote party took
	return s, err
}

// hostTalk is Talk to a role (or all) on another host (remote.Talk), with
// Wait a progress line here as a talk to this host's has; each agent's
// failure is the remote's code (the error table's).
func hostTalk(ctx context.Context, env *Env, role, name string, opts TalkOptions) ([]TalkOutcome, error) {
	a := remote.TalkArgs{Text: opts.Text, Why: opts.Why, Wait: opts.Wait, NoPreamble: opts.NoPreamble, Marker: opts.Marker,
		NoQueue: opts.NoQueue, Clear: opts.Clear, Force: opts.Force, Timeout: opts.Timeout, Delay: opts.Delay}
	if opts.Wait && env.Stderr != nil {
		a.Waiting = func() func() {
			return talk.Progress(ctx, env.Clock, env.Stderr, env.StderrTTY, []string{role + "@" + name})
		}
	}
	out, err := remote.Talk(ctx, remoteLocal(env), role, name, a, func(o TalkOutcome) bool { return o.Role != "" })
	for i := range out {
		out[i].Host = name
		if e := out[i].Error; e != nil {
			out[i].Err = &hosts.RemoteError{Host: name, Code: e.Code, Message: e.Message}
		}
	}
	return out, err
}

// hostCheck is Check of a role's pane on another host
// (remote.Local.Check).
func hostCheck(ctx context.Context, env *Env, role, name string, opts CheckOptions) (Screen, error) {
	got, err := remoteLocal(env).Check(ctx, role, name, opts.Lines)
	if got == nil {
		return Screen{}, err
	}
	return Screen{Host: name, Pane: got.Pane, Lines: got.Lines}, err
}

// hostInboxSend is InboxSend to a role on another host. The operator's
// goes there now (remote.Local.InboxSend). A runtime's (inside an agent's
// pane) is recorded in the outbox of this session's supervisor, from the
// runtime its token names (remote.Local.Outbound), and returns once
// recorded: that supervisor forwards it (remote.Forwarder).
func hostInboxSend(ctx context.Context, env *Env, role, name string, req supervise.MessageRequest) (supervise.Message, error) {
	l := remoteLocal(env)
	if !l.InPane {
		return l.InboxSend(ctx, role, name, req)
	}
	out, err := l.Outbound(role, name, req)
	if err != nil {
		return supervise.Message{}, err
	}
	// --session is the session there: the outbox is the pane's own
	// session's.
	local := *env
	local.Session = ""
	o, err := viaDoor(ctx, &local, func(d *supervise.Door) (supervise.Outbound, error) {
		o, _, err := d.OutsendOnce(ctx, out)
		return o, err
	})
	return remote.OutboundMessage(o), err
}

// HostRuntimes are the runtimes of a session's supervisor on another
// host (party runtimes --host; remote.Local.Runtimes).
func HostRuntimes(ctx context.Context, env *Env, name string) ([]supervise.Runtime, error) {
	return remoteLocal(env).Runtimes(ctx, name)
}

// hostTrigger is Trigger for a role on another host (ROLE@HOST) through
// the API bridge (remote.Local.Trigger).
func hostTrigger(ctx context.Context, env *Env, name string, opts TriggerOptions) (TriggerResult, error) {
	t, created, err := remoteLocal(env).Trigger(ctx, name, opts.TriggerRequest, opts.Wait, opts.Timeout)
	return TriggerResult{Trigger: t, Created: created}, err
}

// HostStarted is a team started on another host (remote.Started).
type HostStarted = remote.Started

// HostStart is Start on another host (party start --host HOST;
// remote.Local.Start).
func HostStart(ctx context.Context, env *Env, name string, opts session.StartOptions) (HostStarted, error) {
	return remoteLocal(env).Start(ctx, name, opts)
}

// roleElsewhere is the host a bare role is on when this host lacks it
// (remote.Local.Elsewhere).
func roleElsewhere(ctx context.Context, env *Env, role string, err error) (string, error) {
	return remoteLocal(env).Elsewhere(ctx, role, err)
}
