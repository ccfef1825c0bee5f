package party

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/hosts"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/remote"
	"github.com/partyhq/party/core/roles"
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

// RoleAt splits a role a command takes into the role and the host it is
// on: ROLE is this host's (host ""), ROLE@HOST another's (HOST a
// configured host's name or an SSH destination, which may hold an '@'
// itself: the role ends at the first). An empty role or host, or a role
// that is no role name (roles.ValidRole: no '@' in it), is a usage error
// (exit 2).
func RoleAt(s string) (role, host string, err error) {
	role, host, ok := strings.Cut(s, "@")
	if !ok {
		return s, "", nil
	}
	switch {
	case role == "":
		return "", "", fmt.Errorf("%w: %q names no role before '@' (ROLE@HOST)", ErrUsage, s)
	case host == "":
		return "", "", fmt.Errorf("%w: %q names no host after '@' (ROLE@HOST)", ErrUsage, s)
	case !roles.ValidRole(role):
		return "", "", fmt.Errorf("%w: %q: role %q is no role name (letters, digits, '_', '.', '-'; ROLE@HOST)", ErrUsage, s, role)
	}
	return role, host, nil
}

// operatorOnly refuses a call on another host that would be the
// operator's there (a send, a talk, a trigger) to a runtime, inside an
// agent's pane: party has no identity across hosts for them. A message
// (inbox send) goes through this session's outbox instead
// (hostInboxSend); reads (check, runtimes) are not refused.
func operatorOnly(env *Env, what, role, host string) error {
	if env.Getenv("PARTY_RUNTIME_TOKEN") != "" {
		return fmt.Errorf("%w: a runtime cannot %s %s@%s: the call there would be the operator's", supervise.ErrForbidden, what, role, host)
	}
	return nil
}

// hostOf is the host name names (remote.HostOf) with the caller that
// reaches it, and the configuration.
func hostOf(env *Env, name string) (hosts.Host, remote.Caller, config.Config, error) {
	cfg, err := env.Config()
	if err != nil {
		return hosts.Host{}, remote.Caller{}, cfg, err
	}
	h, err := remote.HostOf(cfg, name)
	if err != nil {
		return h, remote.Caller{}, cfg, err
	}
	return h, remoteCaller(env), cfg, nil
}

// sessionFlag is --session for a remote party command: the session
// given here, checked as a plain token; none lets the party there pick
// (its one party session).
func sessionFlag(env *Env) ([]string, error) {
	if env.Session == "" {
		return nil, nil
	}
	if err := hosts.CheckSession(env.Session); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	return []string{"--session=" + env.Session}, nil
}

// noWhy refuses --why for a command to another host: it is free text,
// which goes on no remote command line, and stdin carries the message.
func noWhy(why string) error {
	if why != "" {
		return fmt.Errorf("%w: --why cannot go to another host yet (it is free text, and only plain words go on a remote command line); run party there", ErrUsage)
	}
	return nil
}

// flagOn is a boolean flag of a remote party command and whether it is
// given.
type flagOn struct {
	on   bool
	flag string
}

// appendOn is args with the flags of fs that are on.
func appendOn(args []string, fs ...flagOn) []string {
	for _, f := range fs {
		if f.on {
			args = append(args, f.flag)
		}
	}
	return args
}

// ms is d as a remote command's flag value: milliseconds.
func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// hostSend is Send to a role on another host: party send there, run by
// ssh with argv (remote.Caller.Party), the text on its stdin.
func hostSend(ctx context.Context, env *Env, role, name string, req SendRequest) (Sent, error) {
	s := Sent{Role: role, Host: name, Result: deliver.Result{Outcome: deliver.Failed}}
	if err := operatorOnly(env, "send to", role, name); err != nil {
		return s, err
	}
	if err := noWhy(req.Why); err != nil {
		return s, err
	}
	h, c, _, err := hostOf(env, name)
	if err != nil {
		return s, err
	}
	args, err := sessionFlag(env)
	if err != nil {
		return s, err
	}
	args = appendOn(args, flagOn{req.Force, "--force"}, flagOn{req.Raw, "--raw"}, flagOn{req.Clear, "--clear"})
	err = c.Party(ctx, h, strings.NewReader(req.Text), &s, append([]string{"send"}, append(args, role, "-")...)...)
	s.Host, s.Duration = name, time.Duration(s.MS)*time.Millisecond // what the remote party took
	return s, lost(err, "the text may have reached the agent there", role, name)
}

// hostTalk is Talk to a role (or all) on another host: party talk there,
// run by ssh with argv (remote.Caller.Party), the text on its stdin; with
// Wait, the remote party waits for the answer there. A connection that
// breaks meanwhile ends this command (HOST_CONNECTION_LOST), never the
// turn there.
func hostTalk(ctx context.Context, env *Env, role, name string, opts TalkOptions) ([]TalkOutcome, error) {
	if err := operatorOnly(env, "talk to", role, name); err != nil {
		return nil, err
	}
	if err := noWhy(opts.Why); err != nil {
		return nil, err
	}
	h, c, _, err := hostOf(env, name)
	if err != nil {
		return nil, err
	}
	args, err := sessionFlag(env)
	if err != nil {
		return nil, err
	}
	args = appendOn(args, flagOn{opts.Wait, "--wait"}, flagOn{opts.NoPreamble, "--no-preamble"}, flagOn{opts.Marker, "--marker"},
		flagOn{opts.NoQueue, "--no-queue"}, flagOn{opts.Clear, "--clear"}, flagOn{opts.Force, "--force"})
	if opts.Timeout > 0 {
		args = append(args, "--timeout="+ms(opts.Timeout))
	}
	if opts.Delay > 0 {
		args = append(args, "--delay="+ms(opts.Delay))
	}
	args = append([]string{"talk"}, append(args, role, "-")...)
	if opts.Wait && env.Stderr != nil {
		// It waits there; here it says so, as a talk to this host's does.
		stop := talk.Progress(ctx, env.Clock, env.Stderr, env.StderrTTY, []string{role + "@" + name})
		defer stop()
	}
	var out []TalkOutcome
	if role == "all" {
		err = c.Party(ctx, h, strings.NewReader(opts.Text), &out, args...)
	} else {
		var one TalkOutcome
		err = c.Party(ctx, h, strings.NewReader(opts.Text), &one, args...)
		if one.Role != "" {
			out = []TalkOutcome{one}
		}
	}
	if len(out) == 0 {
		what := "the text may have reached the agent there"
		if opts.Wait {
			what = "the turn there goes on"
		}
		return nil, lost(err, what, role, name)
	}
	// Each agent's failure is the remote's code (the error table's).
	for i := range out {
		out[i].Host = name
		if e := out[i].Error; e != nil {
			out[i].Err = &hosts.RemoteError{Host: name, Code: e.Code, Message: e.Message}
		}
	}
	return out, nil
}

// lost says of a connection to host that broke while the remote party
// ran (hosts.ErrLost) what goes on there; other errors are err.
func lost(err error, what, role, host string) error {
	if errors.Is(err, hosts.ErrLost) {
		return fmt.Errorf("%s (party check %s@%s): %w", what, role, host, err)
	}
	return err
}

// hostCheck is Check of a role's pane on another host: party check
// there, run by ssh with argv.
func hostCheck(ctx context.Context, env *Env, role, name string, opts CheckOptions) (Screen, error) {
	h, c, _, err := hostOf(env, name)
	if err != nil {
		return Screen{}, err
	}
	args, err := sessionFlag(env)
	if err != nil {
		return Screen{}, err
	}
	var got struct {
		Pane  string   `json:"pane"`
		Lines []string `json:"lines"`
	}
	err = c.Party(ctx, h, nil, &got, append([]string{"check"}, append(args, role, strconv.Itoa(opts.Lines))...)...)
	return Screen{Host: name, Pane: got.Pane, Lines: got.Lines}, err
}

// hostSession is the session on h a call to role goes to: --session,
// else the one party session there whose panes carry role.
func hostSession(ctx context.Context, env *Env, c remote.Caller, h hosts.Host, role string) (string, error) {
	if env.Session != "" {
		return env.Session, nil
	}
	return c.SessionOf(ctx, h, role)
}

// hostInboxSend is InboxSend to a role on another host. The operator's
// goes there now, through the API bridge (remote.Caller.Send): the text
// goes in the body of the API call, and the session there is --session,
// else the one whose panes carry the role. A runtime's (inside an agent's
// pane) is recorded in the outbox of this session's supervisor, from the
// runtime its token names, and returns once recorded: that supervisor
// forwards it (supervise.Loop.Forward, forwarder), retrying while the
// host does not answer, and the host there records it once.
func hostInboxSend(ctx context.Context, env *Env, role, name string, req supervise.MessageRequest) (supervise.Message, error) {
	h, c, _, err := hostOf(env, name)
	if err != nil {
		return supervise.Message{}, err
	}
	if env.Getenv("PARTY_RUNTIME_TOKEN") != "" {
		if _, err := sessionFlag(env); err != nil {
			return supervise.Message{}, err
		}
		// The id made here makes asking again safe (OutsendOnce).
		out := supervise.OutboundRequest{ID: supervise.NewMessageID(), Host: h.Name, Session: env.Session, To: role, Thread: req.Thread, Text: req.Text}
		// --session is the session there: the outbox is the pane's own
		// session's.
		local := *env
		local.Session = ""
		o, err := viaDoor(ctx, &local, func(d *supervise.Door) (supervise.Outbound, error) {
			o, _, err := d.OutsendOnce(ctx, out)
			return o, err
		})
		return outboundMessage(o), err
	}
	session, err := hostSession(ctx, env, c, h, role)
	if err != nil {
		return supervise.Message{}, err
	}
	req.To = role
	return c.Send(ctx, h, session, req)
}

// outboundMessage is outbox entry o as a message of its thread here: to
// ROLE@HOST, with how its forwarding stands (Forward).
func outboundMessage(o supervise.Outbound) supervise.Message {
	if o.ID == "" {
		return supervise.Message{}
	}
	return supervise.Message{ID: o.ID, Thread: o.Thread, From: o.From, To: o.To(), Text: o.Text, At: o.At, Forward: &o.Forward}
}

// forwarder takes the outbox's messages of a session's supervisor to
// their hosts (supervise.Forwarder): each is a call of the API there,
// through the bridge, as the operator (who may relay: the message's
// sender there is ROLE@SELF, as this supervisor recorded it), with the
// message's id, which that supervisor records once.
type forwarder struct {
	env *Env
	cfg config.Config
}

// Forward records o there (supervise.Forwarder).
func (f forwarder) Forward(ctx context.Context, o supervise.Outbound) supervise.ForwardReport {
	m, err := f.forward(ctx, o)
	if err != nil {
		return supervise.ForwardReport{Code: codeOf(err), Refused: supervise.Refused(err), Err: err}
	}
	return supervise.ForwardReport{Seq: m.Seq}
}

func (f forwarder) forward(ctx context.Context, o supervise.Outbound) (supervise.Message, error) {
	h, err := remote.HostOf(f.cfg, o.Host)
	if err != nil {
		return supervise.Message{}, err
	}
	c := remoteCaller(f.env)
	session := o.Session
	if session == "" {
		if session, err = c.SessionOf(ctx, h, o.Role); err != nil {
			return supervise.Message{}, err
		}
	}
	return c.Send(ctx, h, session, supervise.MessageRequest{ID: o.ID, Thread: o.Thread, To: o.Role, From: o.Origin, Text: o.Text})
}

// SelfHost is this host's name in the sender of the messages it sends
// another host (ROLE@SELF): its hostname, "localhost" when it has none.
func SelfHost() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "localhost"
}

// HostRuntimes are the runtimes of a session's supervisor on another
// host (party runtimes --host), through the API bridge: --session's,
// else the host's one party session's.
func HostRuntimes(ctx context.Context, env *Env, name string) ([]supervise.Runtime, error) {
	h, c, _, err := hostOf(env, name)
	if err != nil {
		return nil, err
	}
	sess := env.Session
	if sess == "" {
		if sess, err = c.TheSession(ctx, h, session.ErrUnresolved); err != nil {
			return nil, err
		}
	}
	return c.Runtimes(ctx, h, sess)
}

// hostTrigger is Trigger for a role on another host (ROLE@HOST) through
// the API bridge (remote.Caller.Trigger). The session there is
// --session, else the one party session there whose panes carry the
// role. The call there is the operator's, so a runtime (inside an agent's
// pane) may not make it (operatorOnly).
func hostTrigger(ctx context.Context, env *Env, name string, opts TriggerOptions) (TriggerResult, error) {
	if err := operatorOnly(env, "trigger", opts.Role, name); err != nil {
		return TriggerResult{}, err
	}
	h, c, cfg, err := hostOf(env, name)
	if err != nil {
		return TriggerResult{}, err
	}
	session, err := hostSession(ctx, env, c, h, opts.Role)
	if err != nil {
		return TriggerResult{}, err
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = cfg.Supervise.TurnTimeout
	}
	t, created, err := c.Trigger(ctx, h, session, opts.TriggerRequest, opts.Wait, timeout)
	return TriggerResult{Trigger: t, Created: created}, err
}

// HostStarted is a team started on another host (party start --host):
// what the party there printed of it (its start --json), the host, and
// the command that attaches a terminal to it.
type HostStarted struct {
	session.Result
	Host   string `json:"host"`
	Attach string `json:"attach"`
}

// String is the team as party start prints it, with its host.
func (s HostStarted) String() string {
	head, rest, _ := strings.Cut(s.Result.String(), ":")
	return head + " on " + s.Host + ":" + rest
}

// HostStart is Start on another host (party start --host HOST): party
// start there, run by ssh with argv (remote.Caller.Party), detached
// (--no-attach). Only plain words cross (hostStartArgs): a flag whose
// value is free text is a usage error naming the flag, before any ssh
// runs. From inside an agent's pane it is refused, as the operator's
// other calls to another host are (operatorOnly).
func HostStart(ctx context.Context, env *Env, name string, opts session.StartOptions) (HostStarted, error) {
	s := HostStarted{Host: name}
	if env.Getenv("PARTY_RUNTIME_TOKEN") != "" {
		return s, fmt.Errorf("%w: a runtime cannot start a team on %s: the call there would be the operator's", supervise.ErrForbidden, name)
	}
	args, err := hostStartArgs(env, opts)
	if err != nil {
		return s, err
	}
	h, c, _, err := hostOf(env, name)
	if err != nil {
		return s, err
	}
	if err := c.Party(ctx, h, nil, &s.Result, args...); err != nil {
		if errors.Is(err, hosts.ErrLost) {
			err = fmt.Errorf("the team may have started there (party hosts %s): %w", name, err)
		}
		return s, err
	}
	s.Attach = strings.Join([]string{"ssh", "-t", h.Dest, h.Program, "attach", "--session=" + s.Session}, " ")
	return s, nil
}

// hostStartArgs are the words of party start on another host for opts:
// --session, --no-attach, the flags given, each flag with a value as one
// word --FLAG=VALUE that must be a plain word (hosts.CheckWord). A pane
// crosses as ROLE or ROLE=AGENT, both plain names (roles.ValidRole): a
// command line is free text (configure agents.NAME.command there).
func hostStartArgs(env *Env, opts session.StartOptions) ([]string, error) {
	args, err := sessionFlag(env)
	if err != nil {
		return nil, err
	}
	args = append([]string{"start"}, append(args, "--no-attach")...)
	args = appendOn(args, flagOn{opts.Replace, "--replace"}, flagOn{opts.Review, "--review"}, flagOn{opts.Supervise, "--supervise"},
		flagOn{opts.Dashboard, "--dashboard"}, flagOn{opts.Notify, "--notify"}, flagOn{opts.Fresh, "--fresh"}, flagOn{opts.Restore, "--restore"})
	for _, p := range opts.Panes {
		role, cmd, hasCmd := strings.Cut(p, "=")
		if !roles.ValidRole(role) || (hasCmd && !roles.ValidRole(cmd)) {
			return nil, fmt.Errorf("%w: --pane %q cannot go to another host: only ROLE or ROLE=AGENT (plain names) cross; a command line is free text (set agents.NAME.command there)", ErrUsage, p)
		}
		args = append(args, "--pane="+p)
	}
	valued := []struct{ flag, value string }{{"cwd", opts.Cwd}, {"layout", opts.Layout}, {"size", opts.Size}, {"record", opts.Record}, {"base", opts.Base}}
	for _, wt := range opts.Worktree {
		valued = append(valued, struct{ flag, value string }{"worktree", wt})
	}
	for _, v := range valued {
		if v.value == "" {
			continue
		}
		w := "--" + v.flag + "=" + v.value
		if err := hosts.CheckWord(w); err != nil {
			return nil, fmt.Errorf("%w: --%s %q cannot go to another host: only plain words (letters, digits, '.', '_', '/', '=', ':', '@', '%%', '+', '-') go on a remote command line", ErrUsage, v.flag, v.value)
		}
		args = append(args, w)
	}
	return args, nil
}

// notHere says whether err, a local resolution's failure of a bare role,
// is that no pane here has it: no pane with the role (roles.ErrNotFound,
// or the supervisor's supervise.ErrNotFound), or no tmux server here.
func notHere(err error) bool {
	return errors.Is(err, roles.ErrNotFound) || errors.Is(err, supervise.ErrNotFound) || errors.Is(err, mux.ErrNoServer)
}

// roleElsewhere is the host a bare role is on when this host lacks it
// (err, the local resolution's failure, is notHere), among the configured
// hosts, all looked at at once, each within seconds (remote.Caller.Where,
// in --session's session when named): found on one host, that host, said
// on stderr; on several, ROLE_AMBIGUOUS naming them (exit 3); on none,
// or with no host configured, err, naming the hosts that could not be
// looked at. A role found here never comes here: it costs no look at
// any host. "all" is this host's.
func roleElsewhere(ctx context.Context, env *Env, role string, err error) (string, error) {
	if !notHere(err) || role == "all" {
		return "", err
	}
	cfg, cerr := env.Config()
	if cerr != nil || len(cfg.Hosts) == 0 {
		return "", err
	}
	list, lerr := remote.Named(cfg, nil)
	if lerr != nil {
		return "", err
	}
	found, failed := remoteCaller(env).Where(ctx, list, env.Session, role)
	switch len(found) {
	case 0:
		if len(failed) > 0 {
			var names []string
			for n, ferr := range failed {
				names = append(names, n+" ("+codeOf(ferr)+")")
			}
			slices.Sort(names)
			return "", fmt.Errorf("%w; not on the hosts that answered, and not looked at on %s", err, strings.Join(names, ", "))
		}
		return "", err
	case 1:
		if env.Stderr != nil {
			fmt.Fprintf(env.Stderr, "party: no pane here has role %s; it is on host %s: %s@%s\n", role, found[0], role, found[0])
		}
		return found[0], nil
	}
	return "", fmt.Errorf("no pane here has role %q, and %d hosts have it (%s): name one, %s@HOST: %w", role, len(found), strings.Join(found, ", "), role, roles.ErrAmbiguous)
}
