package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/hosts"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/roles"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/usage"
)

// Local is the party here as one of its commands calls the party of
// another host: the Caller that reaches hosts, the configuration (read
// when a call needs it), the command's --session (the session there;
// none lets the party there pick), whether the command runs inside an
// agent's pane (a runtime's token: the calls that would be the
// operator's there are refused) and its stderr (nil: nothing said).
// core/party fills it in from its Env.
type Local struct {
	Caller  Caller
	Config  func() (config.Config, error)
	Session string
	InPane  bool
	Stderr  io.Writer
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
		return "", "", fmt.Errorf("%w: %q names no role before '@' (ROLE@HOST)", usage.Err, s)
	case host == "":
		return "", "", fmt.Errorf("%w: %q names no host after '@' (ROLE@HOST)", usage.Err, s)
	case !roles.ValidRole(role):
		return "", "", fmt.Errorf("%w: %q: role %q is no role name (letters, digits, '_', '.', '-'; ROLE@HOST)", usage.Err, s, role)
	}
	return role, host, nil
}

// operatorOnly refuses a call on another host that would be the
// operator's there (a send, a talk, a trigger) to a runtime, inside an
// agent's pane: party has no identity across hosts for them. A message
// (InboxSend) goes through this session's outbox instead (Outbound);
// reads (check, runtimes) are not refused.
func (l Local) operatorOnly(what, role, host string) error {
	if l.InPane {
		return fmt.Errorf("%w: a runtime cannot %s %s@%s: the call there would be the operator's", supervise.ErrForbidden, what, role, host)
	}
	return nil
}

// hostOf is the host name names (HostOf) and the configuration.
func (l Local) hostOf(name string) (hosts.Host, config.Config, error) {
	cfg, err := l.Config()
	if err != nil {
		return hosts.Host{}, cfg, err
	}
	h, err := HostOf(cfg, name)
	return h, cfg, err
}

// sessionFlag is --session for a remote party command: the session
// given here, checked as a plain token; none lets the party there pick
// (its one party session).
func (l Local) sessionFlag() ([]string, error) {
	if l.Session == "" {
		return nil, nil
	}
	if err := hosts.CheckSession(l.Session); err != nil {
		return nil, fmt.Errorf("%w: %w", usage.Err, err)
	}
	return []string{"--session=" + l.Session}, nil
}

// command is host name (hostOf) and the first words of a party command
// there (sessionFlag).
func (l Local) command(name string) (hosts.Host, []string, error) {
	h, _, err := l.hostOf(name)
	if err != nil {
		return h, nil, err
	}
	args, err := l.sessionFlag()
	return h, args, err
}

// noWhy refuses --why for a command to another host: it is free text,
// which goes on no remote command line, and stdin carries the message.
func noWhy(why string) error {
	if why != "" {
		return fmt.Errorf("%w: --why cannot go to another host yet (it is free text, and only plain words go on a remote command line); run party there", usage.Err)
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

// lost says of a connection to host that broke while the remote party
// ran (hosts.ErrLost) what goes on there; other errors are err.
func lost(err error, what, role, host string) error {
	if errors.Is(err, hosts.ErrLost) {
		return fmt.Errorf("%s (party check %s@%s): %w", what, role, host, err)
	}
	return err
}

// SendArgs are what party send takes to a role on another host.
type SendArgs struct {
	Text              string
	Why               string // refused: free text goes on no remote command line
	Force, Raw, Clear bool
}

// Send is party send to role on host name: party send there, run by ssh
// with argv (Caller.Party), the text on its stdin, its --json decoded
// into out. Refused inside an agent's pane (the call there would be the
// operator's) and with Why, before any ssh runs.
func (l Local) Send(ctx context.Context, role, name string, a SendArgs, out any) error {
	if err := l.operatorOnly("send to", role, name); err != nil {
		return err
	}
	if err := noWhy(a.Why); err != nil {
		return err
	}
	h, args, err := l.command(name)
	if err != nil {
		return err
	}
	args = appendOn(args, flagOn{a.Force, "--force"}, flagOn{a.Raw, "--raw"}, flagOn{a.Clear, "--clear"})
	err = l.Caller.Party(ctx, h, strings.NewReader(a.Text), out, append([]string{"send"}, append(args, role, "-")...)...)
	return lost(err, "the text may have reached the agent there", role, name)
}

// TalkArgs are what party talk takes to a role (or all) on another host.
type TalkArgs struct {
	Text                                            string
	Why                                             string // refused, as Send's
	Wait, NoPreamble, Marker, NoQueue, Clear, Force bool
	Timeout, Delay                                  time.Duration
	// Waiting, when set, starts a progress line while the talk there
	// runs and gives what stops it.
	Waiting func() (stop func())
}

// Talk is party talk to role (or all) on host name: party talk there, run
// by ssh with argv (Caller.Party), the text on its stdin, its --json
// decoded as a list of T for all, else one T that named says is one
// (its role set); with Wait, the remote party waits for the answer
// there. A connection that breaks meanwhile ends this command
// (HOST_CONNECTION_LOST), never the turn there. Refused as Send is.
func Talk[T any](ctx context.Context, l Local, role, name string, a TalkArgs, named func(T) bool) ([]T, error) {
	if err := l.operatorOnly("talk to", role, name); err != nil {
		return nil, err
	}
	if err := noWhy(a.Why); err != nil {
		return nil, err
	}
	h, args, err := l.command(name)
	if err != nil {
		return nil, err
	}
	args = appendOn(args, flagOn{a.Wait, "--wait"}, flagOn{a.NoPreamble, "--no-preamble"}, flagOn{a.Marker, "--marker"},
		flagOn{a.NoQueue, "--no-queue"}, flagOn{a.Clear, "--clear"}, flagOn{a.Force, "--force"})
	if a.Timeout > 0 {
		args = append(args, "--timeout="+ms(a.Timeout))
	}
	if a.Delay > 0 {
		args = append(args, "--delay="+ms(a.Delay))
	}
	args = append([]string{"talk"}, append(args, role, "-")...)
	if a.Waiting != nil {
		stop := a.Waiting()
		defer stop()
	}
	var out []T
	if role == "all" {
		err = l.Caller.Party(ctx, h, strings.NewReader(a.Text), &out, args...)
	} else {
		var one T
		err = l.Caller.Party(ctx, h, strings.NewReader(a.Text), &one, args...)
		if named(one) {
			out = []T{one}
		}
	}
	if len(out) == 0 {
		what := "the text may have reached the agent there"
		if a.Wait {
			what = "the turn there goes on"
		}
		return nil, lost(err, what, role, name)
	}
	return out, nil
}

// Screen is what party check printed on another host: the pane and its
// last lines.
type Screen struct {
	Pane  string   `json:"pane"`
	Lines []string `json:"lines"`
}

// Check is party check of role's pane on host name, run by ssh with
// argv; nil when it did not run there (err says why).
func (l Local) Check(ctx context.Context, role, name string, lines int) (*Screen, error) {
	h, args, err := l.command(name)
	if err != nil {
		return nil, err
	}
	var got Screen
	err = l.Caller.Party(ctx, h, nil, &got, append([]string{"check"}, append(args, role, strconv.Itoa(lines))...)...)
	return &got, err
}

// sessionFor is the session on h a call to role goes to: --session, else
// the one party session there whose panes carry role.
func (l Local) sessionFor(ctx context.Context, h hosts.Host, role string) (string, error) {
	if l.Session != "" {
		return l.Session, nil
	}
	return l.Caller.SessionOf(ctx, h, role)
}

// InboxSend is the operator's message to role on host name, now, through
// the API bridge (Caller.Send): the text goes in the body of the API
// call, and the session there is --session, else the one whose panes
// carry the role. A runtime's goes through its session's outbox instead
// (Outbound).
func (l Local) InboxSend(ctx context.Context, role, name string, req supervise.MessageRequest) (supervise.Message, error) {
	h, _, err := l.hostOf(name)
	if err != nil {
		return supervise.Message{}, err
	}
	session, err := l.sessionFor(ctx, h, role)
	if err != nil {
		return supervise.Message{}, err
	}
	req.To = role
	return l.Caller.Send(ctx, h, session, req)
}

// Outbound is a runtime's message to role on host name as an entry of
// the outbox of its own session's supervisor, which forwards it
// (supervise.Loop.Forward, Forwarder), retrying while the host does not
// answer; the host there records it once. The id made here makes asking
// again safe (OutsendOnce); the session there is --session.
func (l Local) Outbound(role, name string, req supervise.MessageRequest) (supervise.OutboundRequest, error) {
	h, _, err := l.hostOf(name)
	if err != nil {
		return supervise.OutboundRequest{}, err
	}
	if _, err := l.sessionFlag(); err != nil {
		return supervise.OutboundRequest{}, err
	}
	return supervise.OutboundRequest{ID: supervise.NewMessageID(), Host: h.Name, Session: l.Session, To: role, Thread: req.Thread, Text: req.Text}, nil
}

// OutboundMessage is outbox entry o as a message of its thread here: to
// ROLE@HOST, with how its forwarding stands (Forward).
func OutboundMessage(o supervise.Outbound) supervise.Message {
	if o.ID == "" {
		return supervise.Message{}
	}
	return supervise.Message{ID: o.ID, Thread: o.Thread, From: o.From, To: o.To(), Text: o.Text, At: o.At, Forward: &o.Forward}
}

// WithOutbox is msgs with the outbox entries out among them, by the time
// each was recorded (party inbox list). A supervisor without an outbox
// (an older one: supervise.ErrNotFound) has none.
func WithOutbox(msgs []supervise.Message, out []supervise.Outbound, err error) ([]supervise.Message, error) {
	if errors.Is(err, supervise.ErrNotFound) {
		return msgs, nil
	}
	if err != nil {
		return nil, err
	}
	for _, o := range out {
		msgs = append(msgs, OutboundMessage(o))
	}
	slices.SortStableFunc(msgs, func(a, b supervise.Message) int { return a.At.Compare(b.At) })
	return msgs, nil
}

// Forwarder takes the outbox's messages of a session's supervisor to
// their hosts (supervise.Forwarder): each is a call of the API there,
// through the bridge, as the operator (who may relay: the message's
// sender there is ROLE@SELF, as this supervisor recorded it), with the
// message's id, which that supervisor records once.
type Forwarder struct {
	Caller Caller
	Config config.Config
}

// Forward records o there (supervise.Forwarder).
func (f Forwarder) Forward(ctx context.Context, o supervise.Outbound) supervise.ForwardReport {
	m, err := f.forward(ctx, o)
	if err != nil {
		return supervise.ForwardReport{Code: f.Caller.Classify(err), Refused: supervise.Refused(err), Err: err}
	}
	return supervise.ForwardReport{Seq: m.Seq}
}

func (f Forwarder) forward(ctx context.Context, o supervise.Outbound) (supervise.Message, error) {
	h, err := HostOf(f.Config, o.Host)
	if err != nil {
		return supervise.Message{}, err
	}
	session := o.Session
	if session == "" {
		if session, err = f.Caller.SessionOf(ctx, h, o.Role); err != nil {
			return supervise.Message{}, err
		}
	}
	return f.Caller.Send(ctx, h, session, supervise.MessageRequest{ID: o.ID, Thread: o.Thread, To: o.Role, From: o.Origin, Text: o.Text})
}

// SelfHost is this host's name in the sender of the messages it sends
// another host (ROLE@SELF): its hostname, "localhost" when it has none.
func SelfHost() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "localhost"
}

// Runtimes are the runtimes of a session's supervisor on host name (party
// runtimes --host), through the API bridge: --session's, else the host's
// one party session's.
func (l Local) Runtimes(ctx context.Context, name string) ([]supervise.Runtime, error) {
	h, _, err := l.hostOf(name)
	if err != nil {
		return nil, err
	}
	sess := l.Session
	if sess == "" {
		if sess, err = l.Caller.TheSession(ctx, h, session.ErrUnresolved); err != nil {
			return nil, err
		}
	}
	return l.Caller.Runtimes(ctx, h, sess)
}

// Trigger records req for its role on host name through the API bridge
// (Caller.Trigger). The session there is --session, else the one party
// session there whose panes carry the role; a zero timeout is the
// configuration's supervise.turn_timeout. The call there is the
// operator's, so a runtime (inside an agent's pane) may not make it.
func (l Local) Trigger(ctx context.Context, name string, req supervise.TriggerRequest, wait bool, timeout time.Duration) (supervise.Trigger, bool, error) {
	if err := l.operatorOnly("trigger", req.Role, name); err != nil {
		return supervise.Trigger{}, false, err
	}
	h, cfg, err := l.hostOf(name)
	if err != nil {
		return supervise.Trigger{}, false, err
	}
	session, err := l.sessionFor(ctx, h, req.Role)
	if err != nil {
		return supervise.Trigger{}, false, err
	}
	if timeout == 0 {
		timeout = cfg.Supervise.TurnTimeout
	}
	return l.Caller.Trigger(ctx, h, session, req, wait, timeout)
}

// Started is a team started on another host (party start --host): what
// the party there printed of it (its start --json), the host, and the
// command that attaches a terminal to it.
type Started struct {
	session.Result
	Host   string `json:"host"`
	Attach string `json:"attach"`
}

// String is the team as party start prints it, with its host.
func (s Started) String() string {
	head, rest, _ := strings.Cut(s.Result.String(), ":")
	return head + " on " + s.Host + ":" + rest
}

// Start is party start on host name: party start there, run by ssh with
// argv (Caller.Party), detached (--no-attach). Only plain words cross
// (startArgs): a flag whose value is free text is a usage error naming
// the flag, before any ssh runs. From inside an agent's pane it is
// refused, as the operator's other calls to another host are.
func (l Local) Start(ctx context.Context, name string, opts session.StartOptions) (Started, error) {
	s := Started{Host: name}
	if l.InPane {
		return s, fmt.Errorf("%w: a runtime cannot start a team on %s: the call there would be the operator's", supervise.ErrForbidden, name)
	}
	args, err := l.startArgs(opts)
	if err != nil {
		return s, err
	}
	h, _, err := l.hostOf(name)
	if err != nil {
		return s, err
	}
	if err := l.Caller.Party(ctx, h, nil, &s.Result, args...); err != nil {
		if errors.Is(err, hosts.ErrLost) {
			err = fmt.Errorf("the team may have started there (party hosts %s): %w", name, err)
		}
		return s, err
	}
	s.Attach = strings.Join([]string{"ssh", "-t", h.Dest, h.Program, "attach", "--session=" + s.Session}, " ")
	return s, nil
}

// startArgs are the words of party start on another host for opts:
// --session, --no-attach, the flags given, each flag with a value as one
// word --FLAG=VALUE that must be a plain word (hosts.CheckWord). A pane
// crosses as ROLE or ROLE=AGENT, both plain names (roles.ValidRole): a
// command line is free text (configure agents.NAME.command there).
func (l Local) startArgs(opts session.StartOptions) ([]string, error) {
	args, err := l.sessionFlag()
	if err != nil {
		return nil, err
	}
	args = append([]string{"start"}, append(args, "--no-attach")...)
	args = appendOn(args, flagOn{opts.Replace, "--replace"}, flagOn{opts.Review, "--review"}, flagOn{opts.Supervise, "--supervise"},
		flagOn{opts.Dashboard, "--dashboard"}, flagOn{opts.Notify, "--notify"}, flagOn{opts.Fresh, "--fresh"}, flagOn{opts.Restore, "--restore"})
	for _, p := range opts.Panes {
		role, cmd, hasCmd := strings.Cut(p, "=")
		if !roles.ValidRole(role) || (hasCmd && !roles.ValidRole(cmd)) {
			return nil, fmt.Errorf("%w: --pane %q cannot go to another host: only ROLE or ROLE=AGENT (plain names) cross; a command line is free text (set agents.NAME.command there)", usage.Err, p)
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
			return nil, fmt.Errorf("%w: --%s %q cannot go to another host: only plain words (letters, digits, '.', '_', '/', '=', ':', '@', '%%', '+', '-') go on a remote command line", usage.Err, v.flag, v.value)
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

// Elsewhere is the host a bare role is on when this host lacks it (err,
// the local resolution's failure, is notHere), among the configured
// hosts, all looked at at once, each within seconds (Caller.Where, in
// --session's session when named): found on one host, that host, said
// on stderr; on several, ROLE_AMBIGUOUS naming them (exit 3); on none,
// or with no host configured, err, naming the hosts that could not be
// looked at. A role found here never comes here: it costs no look at
// any host. "all" is this host's.
func (l Local) Elsewhere(ctx context.Context, role string, err error) (string, error) {
	if !notHere(err) || role == "all" {
		return "", err
	}
	cfg, cerr := l.Config()
	if cerr != nil || len(cfg.Hosts) == 0 {
		return "", err
	}
	list, lerr := Named(cfg, nil)
	if lerr != nil {
		return "", err
	}
	found, failed := l.Caller.Where(ctx, list, l.Session, role)
	switch len(found) {
	case 0:
		if len(failed) > 0 {
			var names []string
			for n, ferr := range failed {
				names = append(names, n+" ("+l.Caller.Classify(ferr)+")")
			}
			slices.Sort(names)
			return "", fmt.Errorf("%w; not on the hosts that answered, and not looked at on %s", err, strings.Join(names, ", "))
		}
		return "", err
	case 1:
		if l.Stderr != nil {
			fmt.Fprintf(l.Stderr, "party: no pane here has role %s; it is on host %s: %s@%s\n", role, found[0], role, found[0])
		}
		return found[0], nil
	}
	return "", fmt.Errorf("no pane here has role %q, and %d hosts have it (%s): name one, %s@HOST: %w", role, len(found), strings.Join(found, ", "), role, roles.ErrAmbiguous)
}
