package remote

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/hosts"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/usage"
)

// Caller is what reaching other hosts takes from the party that asks.
type Caller struct {
	SSH     hosts.Runner
	Clock   clock.Clock
	Version string // this party's (Version)
	// Classify is an error's stable code in the one error table.
	Classify func(error) string
}

// ErrorInfo is an error as --json reports it: its stable code and its
// message.
type ErrorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// errorOf is err as --json reports it; nil for none.
func (c Caller) errorOf(err error) *ErrorInfo {
	if err == nil {
		return nil
	}
	return &ErrorInfo{Code: c.Classify(err), Message: err.Error()}
}

// HostOf is the host name names: the configured one (hosts.NAME.ssh and
// .party), else an SSH destination given as a name, checked as configured
// ones are (hosts.ErrName, exit 2).
func HostOf(cfg config.Config, name string) (hosts.Host, error) {
	h := hosts.Host{Name: name, Dest: name, Program: hosts.DefaultProgram}
	if c, ok := cfg.Hosts[name]; ok {
		// hosts.NAME.party alone: NAME is the destination.
		h = hosts.Host{Name: name, Dest: cmp.Or(c.SSH, name), Program: cmp.Or(c.Party, hosts.DefaultProgram), Configured: true}
	}
	if err := h.Check(); err != nil {
		return h, fmt.Errorf("%w: %w", usage.Err, err)
	}
	return h, nil
}

// Named are the hosts of names (a configured host's name, or an SSH
// destination), each once; no names is every configured host, by name.
func Named(cfg config.Config, names []string) ([]hosts.Host, error) {
	if len(names) == 0 {
		for n := range cfg.Hosts {
			names = append(names, n)
		}
		slices.Sort(names)
	}
	seen := map[string]bool{}
	var list []hosts.Host
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		h, err := HostOf(cfg, n)
		if err != nil {
			return nil, err
		}
		list = append(list, h)
	}
	return list, nil
}

// View is a host as party hosts shows it.
type View struct {
	hosts.Host
	Reachable bool       `json:"reachable"`
	Version   string     `json:"version,omitempty"`
	Error     *ErrorInfo `json:"error,omitempty"`
	Sessions  []Session  `json:"sessions"`
	// Elapsed is how long the look at it took, in milliseconds.
	Elapsed int64 `json:"elapsed_ms"`
}

// Session is a party session on a host: its roles, and the runtimes its
// supervisor manages (read through the API bridge), or why they could not
// be read.
type Session struct {
	Name     string              `json:"name"`
	Roles    []string            `json:"roles"`
	Runtimes []supervise.Runtime `json:"runtimes"`
	Error    *ErrorInfo          `json:"error,omitempty"`
}

// Rows are the host as party hosts prints it: one row per session.
func (v View) Rows() [][]string {
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

// Header is the header of View's rows.
var Header = []string{"HOST", "SSH", "STATE", "VERSION", "SESSION", "RUNTIMES"}

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

// LookAll is Look at each of list, all at once.
func (c Caller) LookAll(ctx context.Context, list []hosts.Host) []View {
	views := make([]View, len(list))
	var wg sync.WaitGroup
	for i, h := range list {
		wg.Go(func() { views[i] = c.Look(ctx, h) })
	}
	wg.Wait()
	return views
}

// Look is what party hosts shows of h: whether it answers (an Error
// within probeWait when not) and runs this party's version, and its
// sessions with their runtimes.
func (c Caller) Look(ctx context.Context, h hosts.Host) (v View) {
	start := c.Clock.Now()
	v = View{Host: h, Sessions: []Session{}}
	defer func() { v.Elapsed = c.Clock.Now().Sub(start).Milliseconds() }()
	ctx, cancel := context.WithTimeout(ctx, hostWait)
	defer cancel()
	remote, err := c.version(ctx, h)
	if err != nil {
		v.Error = c.errorOf(err)
		return v
	}
	v.Reachable, v.Version = true, remote
	if err := hosts.CheckVersion(h.Name, remote, c.Version); err != nil {
		v.Error = c.errorOf(err)
		return v
	}
	sessions, err := c.sessions(ctx, h)
	if err != nil {
		v.Error = c.errorOf(err)
		return v
	}
	for _, s := range sessions {
		hs := Session{Name: s.Name, Roles: s.Roles, Runtimes: []supervise.Runtime{}}
		rts, err := c.runtimes(ctx, h, s.Name)
		if err != nil {
			hs.Error = c.errorOf(err)
		} else {
			hs.Runtimes = rts
		}
		v.Sessions = append(v.Sessions, hs)
	}
	return v
}

// version is the version of the party on h (party version --json
// there), within probeWait.
func (c Caller) version(ctx context.Context, h hosts.Host) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, probeWait)
	defer cancel()
	out, err := hosts.Run(ctx, c.SSH, h, "version", "--json")
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

// sessions are the party sessions of h's tmux server (party ls --json
// there); no server there is none.
func (c Caller) sessions(ctx context.Context, h hosts.Host) ([]listedSession, error) {
	out, err := hosts.Run(ctx, c.SSH, h, "ls", "--json")
	if err != nil {
		var failed struct {
			Error *ErrorInfo `json:"error"`
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

// runtimes are the runtimes of session's supervisor on h, through the
// API bridge.
func (c Caller) runtimes(ctx context.Context, h hosts.Host, session string) ([]supervise.Runtime, error) {
	cl, err := c.Client(ctx, h, session)
	if err != nil {
		return nil, err
	}
	defer cl.HTTP.CloseIdleConnections()
	return cl.Runtimes(ctx)
}

// whereWait bounds the look at one host for a role (Where): ssh's
// ConnectTimeout (5 s) and party ls there.
const whereWait = 8 * time.Second

// Where are the names of the hosts of list on which a party session
// (session's, when named) has a pane with role (party ls --json there),
// all looked at at once, each within whereWait; the hosts that could not
// be looked at are in failed, with their errors.
func (c Caller) Where(ctx context.Context, list []hosts.Host, session, role string) (found []string, failed map[string]error) {
	has := make([]bool, len(list))
	errs := make([]error, len(list))
	var wg sync.WaitGroup
	for i, h := range list {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, whereWait)
			defer cancel()
			sessions, err := c.sessions(ctx, h)
			errs[i] = err
			has[i] = slices.ContainsFunc(sessions, func(s listedSession) bool {
				return (session == "" || s.Name == session) && slices.Contains(s.Roles, role)
			})
		})
	}
	wg.Wait()
	failed = map[string]error{}
	for i, h := range list {
		switch {
		case has[i]:
			found = append(found, h.Name)
		case errs[i] != nil:
			failed[h.Name] = errs[i]
		}
	}
	return found, failed
}
