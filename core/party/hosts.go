package party

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/exitcode"
	"github.com/partyhq/party/core/hosts"
	"github.com/partyhq/party/core/roles"
	"github.com/partyhq/party/core/supervise"
)

// Version is this party's version: its module's, else the VCS revision
// it was built from ("+dirty" with uncommitted changes), else "devel".
// $PARTY_TEST_VERSION replaces it: tests only, to play a host that runs
// another party.
func Version(getenv func(string) string) string {
	if v := getenv("PARTY_TEST_VERSION"); v != "" {
		return v
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return "devel-" + rev
}

// VersionInfo is what party version prints.
type VersionInfo struct {
	Version string `json:"version"`
	Bridge  int    `json:"bridge"` // the API bridge's protocol (core/hosts)
}

// Versions is this party's version and its bridge's protocol.
func Versions(env *Env) VersionInfo {
	return VersionInfo{Version: Version(env.Getenv), Bridge: hosts.Protocol}
}

// sshRunner is the runner of ssh: env's, else os/exec.
func (e *Env) sshRunner() hosts.Runner {
	if e.SSH != nil {
		return e.SSH
	}
	return hosts.ExecRunner{}
}

// hostOf is the host name names: the configured one (hosts.NAME.ssh and
// .party), else an SSH destination given as a name, checked as configured ones
// are (hosts.ErrName, exit 2).
func hostOf(cfg config.Config, name string) (hosts.Host, error) {
	if c, ok := cfg.Hosts[name]; ok {
		// hosts.NAME.party alone: NAME is the destination.
		h := hosts.Host{Name: name, Dest: cmp.Or(c.SSH, name), Program: cmp.Or(c.Party, hosts.DefaultProgram), Configured: true}
		return h, h.Check()
	}
	h := hosts.Host{Name: name, Dest: name, Program: hosts.DefaultProgram}
	return h, h.Check()
}

// HostView is a host as party hosts shows it.
type HostView struct {
	hosts.Host
	Reachable bool                `json:"reachable"`
	Version   string              `json:"version,omitempty"`
	Error     *exitcode.ErrorInfo `json:"error,omitempty"`
	Sessions  []HostSession       `json:"sessions"`
	// Elapsed is how long the look at it took, in milliseconds.
	Elapsed int64 `json:"elapsed_ms"`
}

// HostSession is a party session on a host: its roles, and the runtimes
// its supervisor manages (read through the API bridge), or why they
// could not be read.
type HostSession struct {
	Name     string              `json:"name"`
	Roles    []string            `json:"roles"`
	Runtimes []supervise.Runtime `json:"runtimes"`
	Error    *exitcode.ErrorInfo `json:"error,omitempty"`
}

// Rows are the host as party hosts prints it: one row per session.
func (v HostView) Rows() [][]string {
	state := "up"
	if v.Error != nil {
		state = v.Error.Code
		if v.Reachable {
			state = "up, " + state
		}
	}
	base := []string{v.Name, v.Dest, state, dashIf(v.Version)}
	if len(v.Sessions) == 0 {
		return [][]string{append(base, "-", "-")}
	}
	var rows [][]string
	for _, s := range v.Sessions {
		rts := make([]string, 0, len(s.Runtimes))
		for _, r := range s.Runtimes {
			rts = append(rts, r.Role+":"+string(r.Status))
		}
		runtimes := strings.Join(rts, ",")
		if s.Error != nil {
			runtimes = s.Error.Code
		}
		rows = append(rows, append(slices.Clone(base), s.Name, dashIf(runtimes)))
	}
	return rows
}

// HostHeader is the header of HostView's rows.
var HostHeader = []string{"HOST", "SSH", "STATE", "VERSION", "SESSION", "RUNTIMES"}

func dashIf(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Bounds of party hosts: the look at whether a host answers (ssh's own
// ConnectTimeout is 5 s), and the whole look at one host.
const (
	probeWait = 8 * time.Second
	hostWait  = 30 * time.Second
)

// Hosts looks at each configured host and each of names (a configured
// host's name, or an SSH destination), all at once: whether it answers
// and runs this party's version, and its sessions with their runtimes.
// A host that does not answer is one with an Error within probeWait; a
// name that is no plain token is hosts.ErrName (exit 2).
func Hosts(ctx context.Context, env *Env, names []string) ([]HostView, error) {
	cfg, err := env.Config()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var list []hosts.Host
	add := func(name string) error {
		if seen[name] {
			return nil
		}
		seen[name] = true
		h, err := hostOf(cfg, name)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrUsage, err)
		}
		list = append(list, h)
		return nil
	}
	for _, n := range names {
		if err := add(n); err != nil {
			return nil, err
		}
	}
	if len(names) == 0 {
		configured := make([]string, 0, len(cfg.Hosts))
		for n := range cfg.Hosts {
			configured = append(configured, n)
		}
		slices.Sort(configured)
		for _, n := range configured {
			if err := add(n); err != nil {
				return nil, err
			}
		}
	}
	views := make([]HostView, len(list))
	var wg sync.WaitGroup
	for i, h := range list {
		wg.Go(func() { views[i] = lookAtHost(ctx, env, h) })
	}
	wg.Wait()
	return views, nil
}

// lookAtHost is what party hosts shows of h.
func lookAtHost(ctx context.Context, env *Env, h hosts.Host) (v HostView) {
	start := env.Clock.Now()
	v = HostView{Host: h, Sessions: []HostSession{}}
	defer func() { v.Elapsed = env.Clock.Now().Sub(start).Milliseconds() }()
	ctx, cancel := context.WithTimeout(ctx, hostWait)
	defer cancel()
	remote, err := remoteVersion(ctx, env, h)
	if err != nil {
		v.Error = exitcode.ErrorOf(err)
		return v
	}
	v.Reachable, v.Version = true, remote
	if err := hosts.CheckVersion(h.Name, remote, Version(env.Getenv)); err != nil {
		v.Error = exitcode.ErrorOf(err)
		return v
	}
	sessions, err := remoteSessions(ctx, env, h)
	if err != nil {
		v.Error = exitcode.ErrorOf(err)
		return v
	}
	for _, s := range sessions {
		hs := HostSession{Name: s.Name, Roles: s.Roles, Runtimes: []supervise.Runtime{}}
		rts, err := hostRuntimes(ctx, env, h, s.Name)
		if err != nil {
			hs.Error = exitcode.ErrorOf(err)
		} else {
			hs.Runtimes = rts
		}
		v.Sessions = append(v.Sessions, hs)
	}
	return v
}

// remoteVersion is the version of the party on h (party version --json
// there), within probeWait.
func remoteVersion(ctx context.Context, env *Env, h hosts.Host) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, probeWait)
	defer cancel()
	out, err := hosts.Run(ctx, env.sshRunner(), h, "version", "--json")
	if err != nil {
		return "", err
	}
	var vi VersionInfo
	if err := json.Unmarshal(out, &vi); err != nil || vi.Version == "" {
		return "", &hosts.Error{Host: h.Name, Reason: hosts.ReasonNoBridge, Exit: 0, Stderr: fmt.Sprintf("party version --json said %.80q", out)}
	}
	return vi.Version, nil
}

// listedSession is a session as party ls --json lists it.
type listedSession struct {
	Name  string   `json:"name"`
	Roles []string `json:"roles"`
}

// remoteSessions are the party sessions of h's tmux server (party ls
// --json there); no server there is none.
func remoteSessions(ctx context.Context, env *Env, h hosts.Host) ([]listedSession, error) {
	out, err := hosts.Run(ctx, env.sshRunner(), h, "ls", "--json")
	if err != nil {
		var failed struct {
			Error *exitcode.ErrorInfo `json:"error"`
		}
		if json.Unmarshal(out, &failed) == nil && failed.Error != nil {
			if failed.Error.Code == "NO_SERVER" {
				return nil, nil
			}
			return nil, &hosts.RemoteError{Host: h.Name, Code: failed.Error.Code, Message: failed.Error.Message}
		}
		return nil, err
	}
	var list []listedSession
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("host %s: party ls --json: %w", h.Name, err)
	}
	return list, nil
}

// hostRuntimes are the runtimes of session's supervisor on h, through
// the API bridge.
func hostRuntimes(ctx context.Context, env *Env, h hosts.Host, session string) ([]supervise.Runtime, error) {
	c, err := HostClient(ctx, env, h, session)
	if err != nil {
		return nil, err
	}
	defer c.HTTP.CloseIdleConnections()
	return c.Runtimes(ctx)
}

// HostClient is a client of the API of session's supervisor on h as the
// operator, through the API bridge (party supervise bridge there): HTTP
// on one ssh connection, made now (so that an ssh failure, another
// version or no supervisor there is its error) and reused for the
// client's life; HTTP.CloseIdleConnections ends it. A connection that
// broke is made again on the next call.
func HostClient(ctx context.Context, env *Env, h hosts.Host, session string) (*supervise.Client, error) {
	local := Version(env.Getenv)
	first, _, err := hosts.Dial(ctx, env.sshRunner(), h, session, local)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	return supervise.NewClient(func(ctx context.Context) (net.Conn, error) {
		mu.Lock()
		defer mu.Unlock()
		if c := first; c != nil {
			first = nil
			return c, nil
		}
		c, _, err := hosts.Dial(ctx, env.sshRunner(), h, session, local)
		return c, err
	}), nil
}

// Bridge is the remote end of the API bridge (party supervise bridge):
// it says hello (this party's version) on out and copies in to the API
// socket of the session's supervisor and back until either side closes.
// When it cannot (no such session, no supervisor serving), the hello
// says why, with the error's code, and so does its error.
func Bridge(ctx context.Context, env *Env, in io.Reader, out io.Writer) error {
	hello := hosts.Hello{Version: Version(env.Getenv)}
	conn, name, err := bridgeSocket(ctx, env)
	hello.Session = name
	if err != nil {
		code, _ := Classify(err)
		hello.Error = &hosts.RemoteError{Code: code, Message: err.Error()}
		if serr := hosts.Serve(ctx, hello, nil, in, out); serr != nil {
			return errors.Join(err, serr)
		}
		return err
	}
	return hosts.Serve(ctx, hello, conn, in, out)
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

// hostTrigger is Trigger for a role on another host (ROLE@HOST): the
// request, text and all, goes in the body of the API call over the
// bridge, never on a command line. The session there is --session, else
// the one party session there whose panes carry the role. The call there
// is the operator's, so a runtime (inside an agent's pane) may not make
// it: what one agent sends another host is the cross-host inbox's, which
// is not built yet.
func hostTrigger(ctx context.Context, env *Env, name string, opts TriggerOptions) (TriggerResult, error) {
	if env.Getenv("PARTY_RUNTIME_TOKEN") != "" {
		return TriggerResult{}, fmt.Errorf("%w: a runtime cannot trigger a role on another host (%s): the call there would be the operator's", supervise.ErrForbidden, name)
	}
	cfg, err := env.Config()
	if err != nil {
		return TriggerResult{}, err
	}
	h, err := hostOf(cfg, name)
	if err != nil {
		return TriggerResult{}, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if opts.Role == "" {
		return TriggerResult{}, fmt.Errorf("%w: ROLE@HOST names no role", ErrUsage)
	}
	session, err := hostSessionOf(ctx, env, h, opts.Role)
	if err != nil {
		return TriggerResult{}, err
	}
	c, err := HostClient(ctx, env, h, session)
	if err != nil {
		return TriggerResult{}, err
	}
	defer c.HTTP.CloseIdleConnections()
	t, created, err := c.Submit(ctx, opts.TriggerRequest)
	res := TriggerResult{Trigger: t, Created: created}
	if err != nil || !opts.Wait {
		return res, err
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = cfg.Supervise.TurnTimeout
	}
	deadline := env.Clock.Now().Add(timeout)
	for {
		left := deadline.Sub(env.Clock.Now())
		got, err := c.AwaitTrigger(ctx, t.ID, max(0, min(left, supervise.MaxWait)))
		if err != nil {
			// The bridge broke: the turn there goes on.
			return res, fmt.Errorf("host %s: waiting for trigger %s (it goes on there: party trigger show): %w", h.Name, t.ID, err)
		}
		res.Trigger = got
		if !got.Status.Open() || left <= 0 {
			break
		}
	}
	res.Trigger, err = supervise.Ended(res.Trigger, timeout)
	return res, err
}

// hostSessionOf is the session on h that a command for role acts on:
// --session, else the one party session there whose panes carry role.
func hostSessionOf(ctx context.Context, env *Env, h hosts.Host, role string) (string, error) {
	if env.Session != "" {
		return env.Session, nil
	}
	sessions, err := remoteSessions(ctx, env, h)
	if err != nil {
		return "", err
	}
	var hits []string
	for _, s := range sessions {
		if slices.Contains(s.Roles, role) {
			hits = append(hits, s.Name)
		}
	}
	switch len(hits) {
	case 0:
		return "", fmt.Errorf("no party session on host %s has a pane with role %q: %w", h.Name, role, roles.ErrNotFound)
	case 1:
		return hits[0], nil
	}
	return "", fmt.Errorf("role %q is in %d sessions on host %s (%s): give --session: %w", role, len(hits), h.Name, strings.Join(hits, ", "), roles.ErrAmbiguous)
}
