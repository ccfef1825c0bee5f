package tmux

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/partyhq/party/core/mux"
)

// Spawn describes the program of a new pane.
type Spawn struct {
	Cwd  string
	Env  []string // KEY=VALUE, set in the pane with -e
	Argv []string // empty: the default shell
	// Window names the window NewSession makes (new-session -n); the
	// other commands name theirs themselves or make none.
	Window string
}

// args are the arguments of a command that starts a pane. The directory is
// a Literal (tmux expands -c as a format); -e values and the command's
// words are not expanded, and Argv escapes any that ends in ';'.
func (s Spawn) args() []string {
	var a []string
	if s.Cwd != "" {
		a = append(a, "-c", Literal(s.Cwd))
	}
	for _, e := range s.Env {
		a = append(a, "-e", e)
	}
	if len(s.Argv) == 0 {
		return a
	}
	a = append(a, "--")
	if len(s.Argv) == 1 {
		// tmux hands a single-word command to "sh -c"; env execs it
		// directly so no shell ever parses it.
		return append(a, "env", "--", s.Argv[0])
	}
	return append(a, s.Argv...)
}

// NewSession creates a detached session of one window sized w x h running
// spawn, and returns its first pane's id. opts are set by the same tmux
// process before the server handles anything else, so an option such as
// remain-on-exit is in place even for a program that exits at once. The
// name must pass CheckSessionName; a session that tmux named otherwise is
// killed and refused.
func (c *Client) NewSession(ctx context.Context, name string, w, h int, spawn Spawn, opts ...Option) (string, error) {
	if err := CheckSessionName(name); err != nil {
		return "", err
	}
	fsep, _ := c.seps()
	args := []string{"new-session", "-d", "-P", "-F", "#{pane_id}" + fsep + "#{session_name}", "-s", Literal(name),
		"-x", strconv.Itoa(w), "-y", strconv.Itoa(h)}
	if spawn.Window != "" {
		args = append(args, "-n", Literal(spawn.Window))
	}
	args = append(args, spawn.args()...)
	if len(opts) > 0 {
		args = append(append(args, cmdSep), setArgs(opts)...)
	}
	out, err := c.Run(ctx, args...)
	// A server losing its last session to another process (a concurrent
	// `party stop`) takes our command down with it; the command did not
	// run, and the next try starts a new server.
	for try := 1; err != nil && serverExiting(err) && try <= 5; try++ {
		if err := c.clock().Sleep(ctx, time.Duration(try)*10*time.Millisecond); err != nil {
			return "", fmt.Errorf("new session %q: %w", name, err)
		}
		out, err = c.Run(ctx, args...)
	}
	if err != nil {
		return "", fmt.Errorf("new session %q: %w", name, err)
	}
	id, got, _ := strings.Cut(strings.TrimSuffix(string(out), "\n"), fsep)
	if got != name {
		if strings.HasPrefix(id, "%") {
			_, _ = c.Run(context.WithoutCancel(ctx), "kill-session", "-t", id)
		}
		return "", fmt.Errorf("new session %q: tmux named it %q: %w", name, got, ErrName)
	}
	return id, nil
}

// SplitWindow splits the window of pane target, runs spawn in the new pane,
// re-tiles the window and returns the new pane's id.
func (c *Client) SplitWindow(ctx context.Context, target string, spawn Spawn) (string, error) {
	args := []string{"split-window", "-d", "-P", "-F", "#{pane_id}", "-t", target}
	out, err := c.Run(ctx, append(args, spawn.args()...)...)
	if err != nil {
		return "", fmt.Errorf("split window of %s: %w", target, err)
	}
	id := strings.TrimSpace(string(out))
	if _, err := c.Run(ctx, "select-layout", "-t", target, "tiled"); err != nil {
		return "", fmt.Errorf("tile window of %s: %w", target, err)
	}
	return id, nil
}

// SplitBottom adds a full-width pane of lines rows at the bottom of the
// current window of session, running spawn, and returns its id.
func (c *Client) SplitBottom(ctx context.Context, session string, lines int, spawn Spawn) (string, error) {
	args := []string{"split-window", "-d", "-f", "-v", "-l", strconv.Itoa(lines), "-P", "-F", "#{pane_id}", "-t", SessionTarget(session)}
	out, err := c.Run(ctx, append(args, spawn.args()...)...)
	if err != nil {
		return "", fmt.Errorf("split window of %s: %w", session, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// NewWindow runs spawn in a new window named name of session, in the
// background (the current window stays), and returns its pane's id.
func (c *Client) NewWindow(ctx context.Context, session, name string, spawn Spawn) (string, error) {
	args := []string{"new-window", "-d", "-P", "-F", "#{pane_id}", "-t", SessionTarget(session), "-n", Literal(name)}
	out, err := c.Run(ctx, append(args, spawn.args()...)...)
	if err != nil {
		return "", fmt.Errorf("new window %s in %s: %w", name, session, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// RespawnPane restarts pane id with spawn, killing what runs there.
func (c *Client) RespawnPane(ctx context.Context, id string, spawn Spawn) error {
	if _, err := c.Run(ctx, append([]string{"respawn-pane", "-k", "-t", id}, spawn.args()...)...); err != nil {
		return fmt.Errorf("respawn pane %s: %w", id, err)
	}
	return nil
}

// Option is one option to set: Scope is "-p" (pane), "-w" (window) or ""
// (session); Target the pane or session target.
type Option struct {
	Scope, Target, Name, Value string
}

// SetOptions sets opts in one tmux process. Option values are not
// expanded by tmux, and Argv keeps a trailing ';'.
func (c *Client) SetOptions(ctx context.Context, opts ...Option) error {
	for len(opts) > 0 {
		n := fitting(opts)
		if _, err := c.Run(ctx, setArgs(opts[:n])...); err != nil {
			return fmt.Errorf("set options: %w", err)
		}
		opts = opts[n:]
	}
	return nil
}

// maxCommand bounds the bytes of the arguments of one tmux command line:
// the client sends them to the server in one message, of at most 16 KiB
// with its header in tmux 3.3 ("command too long" beyond: a supervised
// start of 93 panes failed on its options).
const maxCommand = 12 << 10

// fitting is how many of opts, at least one, make one command line of no
// more than maxCommand bytes.
func fitting(opts []Option) int {
	size := 0
	for i, o := range opts {
		// Each argument travels with its terminating NUL; one more for
		// the separator between commands.
		n := len("set-option") + len(o.Scope) + len("-t") + len(o.Target) + len(o.Name) + len(o.Value) + 7
		if i > 0 && size+n > maxCommand {
			return i
		}
		size += n
	}
	return len(opts)
}

// setArgs chains one set-option per option.
func setArgs(opts []Option) []string {
	var args []string
	for i, o := range opts {
		if i > 0 {
			args = append(args, cmdSep)
		}
		args = append(args, "set-option")
		if o.Scope != "" {
			args = append(args, o.Scope)
		}
		args = append(args, "-t", o.Target, o.Name, o.Value)
	}
	return args
}

// SessionTarget is the exact-match target of session name.
func SessionTarget(name string) string { return exactSession(name) }

// HasSession reports whether session name exists. A missing server means
// no session.
func (c *Client) HasSession(ctx context.Context, name string) (bool, error) {
	_, err := c.Run(ctx, "has-session", "-t", exactSession(name))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, mux.ErrNoSession), errors.Is(err, mux.ErrNoServer):
		return false, nil
	}
	return false, err
}

// KillSession kills session name. When that was the server's last
// session, the server exits; KillSession waits (up to serverExitWait) until
// it has, so that the next command starts a new server instead of reaching
// the exiting one ("server exited unexpectedly", one `party stop; party
// start` in twelve on a quiet machine).
func (c *Client) KillSession(ctx context.Context, name string) error {
	if _, err := c.Run(ctx, "kill-session", "-t", exactSession(name)); err != nil {
		return fmt.Errorf("kill session %q: %w", name, err)
	}
	c.awaitEmptyServerExit(ctx)
	return nil
}

// serverExitWait bounds awaitEmptyServerExit; a server exits within
// milliseconds of losing its last session.
const serverExitWait = 2 * time.Second

// awaitEmptyServerExit returns once the server is gone, has a session, or
// is set to stay up without one (exit-empty off).
func (c *Client) awaitEmptyServerExit(ctx context.Context) {
	clk := c.clock()
	deadline := clk.Now().Add(serverExitWait)
	for first := true; clk.Now().Before(deadline); first = false {
		out, err := c.Run(ctx, "list-sessions", "-F", "x")
		switch {
		case err != nil && !serverExiting(err):
			return // gone (or failing for a reason of its own)
		case err == nil && len(out) > 0:
			return // sessions left: the server stays
		case err == nil && first:
			if v, err := c.Run(ctx, "show-options", "-gv", "exit-empty"); err == nil && strings.TrimSpace(string(v)) == "off" {
				return
			}
		}
		if clk.Sleep(ctx, 5*time.Millisecond) != nil {
			return
		}
	}
}

// serverExiting reports whether err is tmux's client reaching a server
// that exits under it: the command did not run, and the next one starts a
// new server.
func serverExiting(err error) bool {
	var ce *CmdError
	return errors.As(err, &ce) && strings.Contains(ce.Stderr, "server exited unexpectedly")
}

// Session is one session as listed.
type Session struct {
	Name     string `json:"name"`
	StateDir string `json:"state_dir,omitempty"`
	Windows  int    `json:"windows"`
	Attached int    `json:"attached"`
	Created  int64  `json:"created"`
}

// ListSessions lists the sessions of the server; no server means none.
func (c *Client) ListSessions(ctx context.Context) ([]Session, error) {
	rows, err := c.Query(ctx, []string{"#{session_name}", "#{@party_state_dir}", "#{session_windows}",
		"#{session_attached}", "#{session_created}"}, "list-sessions")
	if errors.Is(err, mux.ErrNoServer) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	out := make([]Session, len(rows))
	for i, r := range rows {
		w, _ := strconv.Atoi(r[2])
		a, _ := strconv.Atoi(r[3])
		t, _ := strconv.ParseInt(r[4], 10, 64)
		out[i] = Session{Name: r[0], StateDir: r[1], Windows: w, Attached: a, Created: t}
	}
	return out, nil
}

// PaneSession returns the session name of pane id.
func (c *Client) PaneSession(ctx context.Context, id string) (string, error) {
	// display-message falls back to another pane when id is gone: compare.
	rows, err := c.Query(ctx, []string{"#{session_name}", "#{pane_id}"}, "display-message", "-p", "-t", id)
	if err != nil {
		return "", fmt.Errorf("session of pane %s: %w", id, err)
	}
	if len(rows) != 1 || rows[0][1] != id {
		return "", fmt.Errorf("session of pane %s: %w", id, mux.ErrNoPane)
	}
	return rows[0][0], nil
}

// SessionInfo is what party keeps on a session.
type SessionInfo struct {
	Name       string
	SocketPath string
	StateDir   string // @party_state_dir, empty for sessions party did not start
}

// SessionInfo returns the socket path and party state dir of session.
func (c *Client) SessionInfo(ctx context.Context, session string) (SessionInfo, error) {
	rows, err := c.Query(ctx, []string{"#{session_name}", "#{socket_path}", "#{@party_state_dir}"}, "display-message", "-p", "-t", exactSession(session))
	if err != nil {
		return SessionInfo{}, fmt.Errorf("session %q: %w", session, err)
	}
	if len(rows) != 1 || rows[0][0] != session {
		return SessionInfo{}, fmt.Errorf("session %q: %w", session, mux.ErrNoSession)
	}
	return SessionInfo{Name: rows[0][0], SocketPath: rows[0][1], StateDir: rows[0][2]}, nil
}

// Snapshot is every pane of the server with its session's party info, read
// with one tmux command.
type Snapshot struct {
	Panes    []mux.Pane
	Sessions []SessionInfo // in first-seen order
}

// Snapshot lists every pane of every session. No server is an empty
// snapshot.
func (c *Client) Snapshot(ctx context.Context) (Snapshot, error) {
	fields := append(append([]string{}, paneFields...), "#{@party_state_dir}", "#{socket_path}")
	rows, err := c.Query(ctx, fields, "list-panes", "-a")
	if errors.Is(err, mux.ErrNoServer) {
		return Snapshot{}, nil
	}
	if err != nil {
		return Snapshot{}, fmt.Errorf("list panes: %w", err)
	}
	if c.reapZombies(rows) {
		if rows, err = c.Query(ctx, fields, "list-panes", "-a"); err != nil {
			return Snapshot{}, fmt.Errorf("list panes: %w", err)
		}
	}
	var s Snapshot
	seen := map[string]bool{}
	n := len(paneFields)
	for _, r := range rows {
		p := parsePane(r[:n])
		s.Panes = append(s.Panes, p)
		if !seen[p.Session] {
			seen[p.Session] = true
			s.Sessions = append(s.Sessions, SessionInfo{Name: p.Session, StateDir: r[n], SocketPath: r[n+1]})
		}
	}
	return s, nil
}

// Session returns the info of session name.
func (s Snapshot) Session(name string) (SessionInfo, bool) {
	for _, i := range s.Sessions {
		if i.Name == name {
			return i, true
		}
	}
	return SessionInfo{}, false
}

// PanesOf returns the panes of session name, in window then pane order.
func (s Snapshot) PanesOf(name string) []mux.Pane {
	var out []mux.Pane
	for _, p := range s.Panes {
		if p.Session == name {
			out = append(out, p)
		}
	}
	return out
}

// LastKey is when a client attached to the server last pressed a key while
// it showed pane id (the newest of them), and whether any client shows it.
// Control-mode clients (party's own watchers, or iTerm2's) are not
// counted: they send commands, not key presses.
func (c *Client) LastKey(ctx context.Context, id string) (time.Time, bool, error) {
	rows, err := c.Query(ctx, []string{"#{pane_id}", "#{client_activity}", "#{client_control_mode}"}, "list-clients")
	if err != nil {
		return time.Time{}, false, fmt.Errorf("clients of pane %s: %w", id, err)
	}
	var last time.Time
	shown := false
	for _, r := range rows {
		if r[0] != id || r[2] == "1" {
			continue // another pane's, or party's own control client
		}
		shown = true
		if sec, err := strconv.ParseInt(r[1], 10, 64); err == nil {
			if t := time.Unix(sec, 0); t.After(last) {
				last = t
			}
		}
	}
	return last, shown, nil
}
