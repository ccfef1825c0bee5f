package tmux

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/mux"
)

// Runner runs one tmux process.
type Runner interface {
	// Run executes argv (argv[0] is the tmux binary) with stdin, returning
	// stdout. A non-zero exit is a *CmdError.
	Run(ctx context.Context, argv []string, stdin []byte) ([]byte, error)
}

// CmdError is a tmux command that failed.
type CmdError struct {
	Args     []string
	Stderr   string
	ExitCode int
	Err      error // a classification: mux.ErrNoServer, mux.ErrNoSession, mux.ErrNoPane, or the exec error
}

func (e *CmdError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("tmux %s: %s", verb(e.Args), msg)
}

// Unwrap returns the classification of the failure.
func (e *CmdError) Unwrap() error { return e.Err }

func verb(args []string) string {
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch a {
		case "-L", "-S", "-f":
			i++
			continue
		}
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// ExecRunner runs tmux with os/exec. Env, when set, replaces the
// environment of the tmux process (which a new server inherits).
type ExecRunner struct {
	Env []string
}

// Run implements Runner.
func (r ExecRunner) Run(ctx context.Context, argv []string, stdin []byte) ([]byte, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if r.Env != nil {
		cmd.Env = r.Env
	}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A new server must not keep our stdio or process group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err := cmd.Run()
	if err == nil {
		return stdout.Bytes(), nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("tmux %s: %w", verb(argv), ctx.Err())
	}
	ce := &CmdError{Args: argv, Stderr: stderr.String(), ExitCode: -1, Err: err}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		ce.ExitCode = ee.ExitCode()
		ce.Err = classify(ce.Stderr)
	}
	return stdout.Bytes(), ce
}

// classify maps tmux's stderr to a sentinel error.
func classify(stderr string) error {
	switch {
	case strings.Contains(stderr, "no server running"),
		strings.Contains(stderr, "error connecting to"),
		strings.Contains(stderr, "server exited unexpectedly"):
		return mux.ErrNoServer
	case strings.Contains(stderr, "can't find session"),
		strings.Contains(stderr, "session not found"):
		return mux.ErrNoSession
	case strings.Contains(stderr, "can't find pane"),
		strings.Contains(stderr, "can't find window"),
		strings.Contains(stderr, "no current target"): // the pane's session is gone

		return mux.ErrNoPane
	}
	return ErrCommand
}

// lostServer reports a command whose client lost its connection to a
// server that may still be up: "server exited unexpectedly", or a connect
// that failed for another reason than a missing socket or a refused one
// (tmux prints "no server running" for those).
func lostServer(err error) bool {
	var ce *CmdError
	if !errors.As(err, &ce) || !errors.Is(ce.Err, mux.ErrNoServer) {
		return false
	}
	return !strings.Contains(ce.Stderr, "no server running") && !strings.Contains(ce.Stderr, "No such file or directory")
}

// ErrCommand is a tmux command that failed for another reason; the
// CmdError's Stderr says why.
var ErrCommand = errors.New("tmux command failed")

// Socket selects the tmux server. At most one of Name and Path is set; with
// neither, tmux picks the server of $TMUX, else its default socket.
type Socket struct {
	Name string // -L
	Path string // -S
}

// SocketFromEnv fills the unset parts of s from PARTY_TMUX_SOCKET and
// PARTY_TMUX_SOCKET_PATH. Flags (already in s) win over the environment.
func SocketFromEnv(s Socket, getenv func(string) string) Socket {
	if s.Name != "" || s.Path != "" {
		return s
	}
	if v := getenv("PARTY_TMUX_SOCKET_PATH"); v != "" {
		return Socket{Path: v}
	}
	if v := getenv("PARTY_TMUX_SOCKET"); v != "" {
		return Socket{Name: v}
	}
	return Socket{}
}

// ErrSocket is a socket path (-S, PARTY_TMUX_SOCKET_PATH) that names
// something other than a socket: tmux would only say that no server runs
// there.
var ErrSocket = errors.New("not a socket")

// Check refuses a socket path that names something other than a socket (a
// file, a directory), or that cannot be looked at, with ErrSocket. A path
// where nothing is yet is fine: a server started there makes it.
func (s Socket) Check() error {
	if s.Path == "" {
		return nil
	}
	fi, err := os.Stat(s.Path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("socket path %s: %v: %w", s.Path, err, ErrSocket)
	case fi.Mode().Type() != os.ModeSocket:
		what := "file"
		if fi.IsDir() {
			what = "directory"
		}
		return fmt.Errorf("socket path %s is a %s, not a tmux server's socket: %w", s.Path, what, ErrSocket)
	}
	return nil
}

func (s Socket) args() []string {
	switch {
	case s.Path != "":
		return []string{"-S", s.Path}
	case s.Name != "":
		return []string{"-L", s.Name}
	}
	return nil
}

// String describes the socket for messages.
func (s Socket) String() string {
	switch {
	case s.Path != "":
		return s.Path
	case s.Name != "":
		return "-L " + s.Name
	}
	if t := os.Getenv("TMUX"); t != "" {
		return strings.SplitN(t, ",", 2)[0]
	}
	return "default"
}

// Client talks to one tmux server.
type Client struct {
	Bin    string // tmux binary, default "tmux"
	Socket Socket
	// Config is passed as -f when a command may start the server
	// (new-session); tests use /dev/null.
	Config string
	Runner Runner
	// Queries, when set, answers the commands that only read (listings,
	// display-message -p, capture-pane -p) over a control connection of
	// the same server, with no tmux process each, while it lives and the
	// arguments fit it (ours: ids, flags, formats); any other command, and
	// a query once it has closed, runs a tmux process.
	Queries *Control
	// Clock paces the retries of a command the server dropped and the
	// wait for a server that lost its last session to exit; nil is
	// clock.Real.
	Clock clock.Clock
	tok   string
}

// New returns a client for socket using runner.
func New(socket Socket, runner Runner) *Client {
	return &Client{Bin: "tmux", Socket: socket, Runner: runner, Clock: clock.Real{}, tok: token()}
}

// clock is the client's Clock, clock.Real when it has none.
func (c *Client) clock() clock.Clock {
	if c.Clock == nil {
		return clock.Real{}
	}
	return c.Clock
}

func token() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Run runs one tmux command (args after the socket flags) and returns its
// stdout.
func (c *Client) Run(ctx context.Context, args ...string) ([]byte, error) {
	return c.RunStdin(ctx, nil, args...)
}

// RunStdin is Run with stdin for the tmux process. A socket path that
// names something other than a socket is refused before tmux runs
// (Socket.Check).
func (c *Client) RunStdin(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	if err := c.Socket.Check(); err != nil {
		return nil, err
	}
	if stdin == nil {
		if out, ok, err := c.query(ctx, args); ok {
			return []byte(out), err
		}
	}
	return c.Runner.Run(ctx, c.Argv(args...), stdin)
}

// runText is Run for a caller that wants the output as text: a query's
// over the control connection is its reply, not a copy.
func (c *Client) runText(ctx context.Context, args ...string) (string, error) {
	if err := c.Socket.Check(); err != nil {
		return "", err
	}
	if out, ok, err := c.query(ctx, args); ok {
		return out, err
	}
	out, err := c.Runner.Run(ctx, c.Argv(args...), nil)
	return string(out), err
}

// query runs args over the control connection (Queries) when they only
// read and fit it; ok false when they ran nowhere.
func (c *Client) query(ctx context.Context, args []string) (out string, ok bool, err error) {
	cc := c.Queries
	if cc == nil {
		return "", false, nil
	}
	cmds, fits := queries(args)
	if !fits {
		return "", false, nil
	}
	outs, err := cc.Commands(ctx, cmds...)
	if errors.Is(err, ErrControlClosed) {
		return "", false, nil
	}
	return strings.Join(outs, ""), true, err
}

// queries splits args at cmdSep into commands when every one of them only
// reads and every argument can travel over a control connection.
func queries(args []string) ([][]string, bool) {
	var cmds [][]string
	for start := 0; start <= len(args); {
		end := slices.Index(args[start:], cmdSep)
		if end < 0 {
			end = len(args) - start
		}
		cmd := args[start : start+end]
		if !readOnly(cmd) {
			return nil, false
		}
		for _, a := range cmd {
			if !safeArg(a) {
				return nil, false
			}
		}
		cmds = append(cmds, cmd)
		start += end + 1
	}
	return cmds, len(cmds) > 0
}

// readOnly says whether the tmux command args only reads.
func readOnly(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "list-panes", "list-windows", "list-sessions", "list-clients":
		return true
	case "display-message", "capture-pane":
		return slices.Contains(args[1:], "-p")
	}
	return false
}

// Argv is the full argv that runs the tmux command args on this server.
// Every argument reaches the command exactly as given: one that ends in
// ';' is escaped (EscapeArg), and only this package's cmdSep separates
// two commands.
func (c *Client) Argv(args ...string) []string {
	bin := c.Bin
	if bin == "" {
		bin = "tmux"
	}
	argv := append([]string{bin, "-u"}, c.Socket.args()...)
	if c.Config != "" && len(args) > 0 && args[0] == "new-session" {
		argv = append(argv, "-f", c.Config)
	}
	for _, a := range args {
		if a == cmdSep {
			argv = append(argv, ";")
			continue
		}
		argv = append(argv, EscapeArg(a))
	}
	return argv
}

// SocketArgs is the socket selection as a command-line fragment for
// messages, e.g. "-L test".
func (c *Client) SocketArgs() string { return strings.Join(c.Socket.args(), " ") }

// seps returns the field and record separators of this client's formats.
func (c *Client) seps() (string, string) {
	if c.tok == "" {
		c.tok = token()
	}
	return "\x1f" + c.tok + "\x1f", "\x1e" + c.tok + "\x1e"
}

// Query runs a listing command (list-panes, list-sessions, display-message
// -p) with format fields and returns one row of values per record. The
// field and record separators carry a per-client random token, so no value
// can forge them.
func (c *Client) Query(ctx context.Context, fields []string, args ...string) ([][]string, error) {
	fsep, rsep := c.seps()
	format := strings.Join(fields, fsep) + rsep
	if args[0] == "display-message" {
		args = append(args, format) // display-message takes its format as the message
	} else {
		args = append(args, "-F", format)
	}
	out, err := c.runText(ctx, args...)
	// A query only reads, so a connection the server dropped mid-command
	// is asked again: a live server answers, a dead one says so.
	for try := 1; err != nil && try <= 3 && lostServer(err); try++ {
		if c.clock().Sleep(ctx, time.Duration(try)*50*time.Millisecond) != nil {
			return nil, err
		}
		out, err = c.runText(ctx, args...)
	}
	if err != nil {
		return nil, err
	}
	var rows [][]string
	for _, rec := range strings.Split(out, rsep) {
		rec = strings.TrimPrefix(rec, "\n")
		if rec == "" {
			continue
		}
		row := strings.Split(rec, fsep)
		if len(row) != len(fields) {
			return nil, fmt.Errorf("tmux %s: got %d fields, want %d: %w", args[0], len(row), len(fields), ErrCommand)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// Resolve returns the socket path tmux will use, following tmux's own rules:
// -S as given; -L NAME (or the default) under $TMUX_TMPDIR (else /tmp) in
// tmux-UID; with neither, the server of $TMUX when set.
func (s Socket) Resolve(getenv func(string) string) string {
	if s.Path != "" {
		return s.Path
	}
	name := s.Name
	if name == "" {
		if t := getenv("TMUX"); t != "" {
			return strings.SplitN(t, ",", 2)[0]
		}
		name = "default"
	}
	dir := getenv("TMUX_TMPDIR")
	if dir == "" {
		dir = "/tmp"
	}
	return filepath.Join(dir, fmt.Sprintf("tmux-%d", os.Getuid()), name)
}
