package hosts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// Host is a host as the configuration names it (hosts.NAME.ssh,
// hosts.NAME.party), or an SSH destination given as a name.
type Host struct {
	Name    string `json:"name"`
	Dest    string `json:"ssh"`
	Program string `json:"party"` // the remote party program ("party": the remote PATH's)
	// Configured says the configuration names it; an unconfigured
	// destination given as a host name is not.
	Configured bool `json:"configured"`
}

// DefaultProgram is the remote party program when hosts.NAME.party is
// not set: the one on the remote PATH.
const DefaultProgram = "party"

// ConnectTimeout bounds ssh's connection and handshake
// (-o ConnectTimeout), in seconds.
const ConnectTimeout = 5

// ServerAliveInterval and ServerAliveCountMax bound how long a
// connection whose host stopped answering (a network that went away
// without a word) stays open: ssh asks every ServerAliveInterval seconds
// and gives up after ServerAliveCountMax unanswered asks, within 40 s,
// so that a long call (talk --wait, a bridge's long poll) never hangs.
const (
	ServerAliveInterval = 10
	ServerAliveCountMax = 3
)

// Check checks h's name, destination and program.
func (h Host) Check() error {
	if h.Configured {
		if err := CheckName(h.Name); err != nil {
			return err
		}
	}
	if err := CheckDest(h.Dest); err != nil {
		return err
	}
	return CheckProgram(h.program())
}

func (h Host) program() string {
	if h.Program == "" {
		return DefaultProgram
	}
	return h.Program
}

// Argv is the ssh command line that runs party with args on h: ssh in
// batch mode (never a password prompt), with the user's own SSH config
// and keys, ConnectTimeout, ServerAliveInterval and ServerAliveCountMax,
// no terminal (-T) and "--" before the
// destination, so that nothing after it is read as an ssh option. The
// remote words are built by RemoteCommand.
func (h Host) Argv(args ...string) ([]string, error) {
	if err := h.Check(); err != nil {
		return nil, err
	}
	words, err := RemoteCommand(h.program(), args...)
	if err != nil {
		return nil, err
	}
	argv := []string{"ssh", "-o", "BatchMode=yes", "-o", fmt.Sprintf("ConnectTimeout=%d", ConnectTimeout),
		"-o", fmt.Sprintf("ServerAliveInterval=%d", ServerAliveInterval), "-o", fmt.Sprintf("ServerAliveCountMax=%d", ServerAliveCountMax),
		"-T", "--", h.Dest}
	return append(argv, words...), nil
}

// Reason is why ssh could not run party on a host.
type Reason int

// The reasons of an *Error.
const (
	ReasonSSH      Reason = iota // ssh failed another way (its exit status 255)
	ReasonTimeout                // no answer in time
	ReasonAuth                   // the host refused the user's keys
	ReasonHostKey                // the host's key is unknown or changed
	ReasonRefused                // nothing listens there
	ReasonResolve                // the name does not resolve
	ReasonNoParty                // the host has no party program there
	ReasonNoBridge               // the remote party lacks the command (an older party)
	ReasonFailed                 // the remote party ran and failed
	ReasonLost                   // the connection broke while the remote party ran
)

func (r Reason) String() string {
	return [...]string{"ssh failed", "timed out", "authentication failed", "host key not verified",
		"connection refused", "name not resolved", "no party there", "the party there lacks the command (an older party?)", "remote party failed",
		"connection lost"}[r]
}

// The sentinels of the reasons; every one but ErrNoParty, ErrNoBridge
// and ErrRemote is also ErrUnreachable.
var (
	ErrUnreachable = errors.New("host unreachable")
	// ErrLost is a connection that broke after the remote party started:
	// what it was doing there (a turn) goes on.
	ErrLost     = fmt.Errorf("%w: connection lost", ErrUnreachable)
	ErrTimeout  = fmt.Errorf("%w: timed out", ErrUnreachable)
	ErrAuth     = fmt.Errorf("%w: authentication failed", ErrUnreachable)
	ErrHostKey  = fmt.Errorf("%w: host key not verified", ErrUnreachable)
	ErrNoParty  = errors.New("no party on the host")
	ErrNoBridge = errors.New("the remote party lacks the command")
	ErrRemote   = errors.New("the remote party failed")
)

var reasonErrs = map[Reason]error{
	ReasonSSH: ErrUnreachable, ReasonTimeout: ErrTimeout, ReasonAuth: ErrAuth, ReasonHostKey: ErrHostKey,
	ReasonRefused: ErrUnreachable, ReasonResolve: ErrUnreachable, ReasonNoParty: ErrNoParty,
	ReasonNoBridge: ErrNoBridge, ReasonFailed: ErrRemote, ReasonLost: ErrLost,
}

// Error is a run of ssh that failed: why (Reason), ssh's exit status and
// the last of its stderr.
type Error struct {
	Host   string
	Reason Reason
	Exit   int // -1: killed (a timeout)
	Stderr string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("host %s: %s", e.Host, e.Reason)
	if e.Exit >= 0 {
		msg += fmt.Sprintf(" (exit %d)", e.Exit)
	}
	if s := lastLines(e.Stderr, 3); s != "" {
		msg += ": " + s
	}
	return msg
}

// Unwrap is the sentinel of e's Reason.
func (e *Error) Unwrap() error { return reasonErrs[e.Reason] }

// lastLines is the last n non-empty lines of s, joined by "; ".
func lastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}

// stderrReasons tell ssh's own failures (exit status 255) apart by what
// it wrote.
var stderrReasons = []struct {
	re     *regexp.Regexp
	reason Reason
}{
	{regexp.MustCompile(`(?i)host key verification failed|remote host identification has changed|no \S+ host key is known`), ReasonHostKey},
	{regexp.MustCompile(`(?i)permission denied|too many authentication failures|no supported authentication methods`), ReasonAuth},
	// A host that stopped answering during the session (ServerAlive).
	{regexp.MustCompile(`(?im)^timeout, server \S+ not responding`), ReasonLost},
	{regexp.MustCompile(`(?i)timed out|timeout`), ReasonTimeout},
	{regexp.MustCompile(`(?i)connection refused`), ReasonRefused},
	{regexp.MustCompile(`(?i)could not resolve|name or service not known|nodename nor servname`), ReasonResolve},
	// After the session began (never kex_exchange_identification's,
	// which is a connection that never became one).
	{regexp.MustCompile(`(?im)^(connection to \S+ closed by remote host|connection (closed|reset) by \S+ port \d+|client_loop: |.*broken pipe)`), ReasonLost},
}

// StartedLine is the line a party run by another host's party writes to
// its stderr once it checked the caller's version (remote.CallerFlag),
// before it acts: ssh's failure (exit 255) after it is a connection lost
// while the party there ran (ReasonLost), whatever ssh's LogLevel let it
// say.
const StartedLine = "party: started here for a party on another host"

// Classify is the *Error of ssh's run on host that exited with exit and
// wrote stderr; killed says it was stopped at its deadline. Exit 255 is
// ssh's own failure, told by its stderr (after StartedLine: a connection
// lost); 127 and 126 are the remote
// shell's: no party program there (or not runnable); a remote party's
// usage error (2) that names an unknown command is a party without the
// bridge; any other status is the remote party's own failure.
func Classify(host string, exit int, stderr string, killed bool) *Error {
	e := &Error{Host: host, Exit: exit, Stderr: stderr, Reason: ReasonFailed}
	switch {
	case killed:
		e.Reason, e.Exit = ReasonTimeout, -1
	case exit == 255 && strings.Contains(stderr, StartedLine):
		e.Reason = ReasonLost
		e.Stderr = strings.Replace(stderr, StartedLine, "", 1)
	case exit == 255:
		e.Reason = ReasonSSH
		for _, r := range stderrReasons {
			if r.re.MatchString(stderr) {
				e.Reason = r.reason
				break
			}
		}
	case exit == 127 || exit == 126:
		e.Reason = ReasonNoParty
	case exit == 2 && strings.Contains(stderr, "unknown command"):
		e.Reason = ReasonNoBridge
	}
	return e
}

// Runner starts processes (ssh) with argv only.
type Runner interface {
	// Start starts argv with its stdin and stdout as pipes.
	Start(argv []string) (Proc, error)
}

// Proc is a started process: Read reads its stdout, Write writes its
// stdin, Close closes its stdin.
type Proc interface {
	io.ReadWriteCloser
	// Wait waits for it to exit: its exit status (-1 when a signal
	// ended it) and the last of its stderr.
	Wait() (exit int, stderr string)
	// Kill ends it at once.
	Kill()
}

// ExecRunner runs processes with os/exec.
type ExecRunner struct{}

// maxStderr bounds what is kept of a process's stderr.
const maxStderr = 16 << 10

// Start implements Runner.
func (ExecRunner) Start(argv []string) (Proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	// Its own process group: a Ctrl-C of the terminal reaches party,
	// which ends it (Kill) after saying so.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &execProc{cmd: cmd, stderr: &tailBuffer{max: maxStderr}}
	cmd.Stderr = p.stderr
	var err error
	if p.in, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if p.out, err = cmd.StdoutPipe(); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s: %w", argv[0], err)
	}
	return p, nil
}

type execProc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    io.ReadCloser
	stderr *tailBuffer
}

func (p *execProc) Read(b []byte) (int, error)  { return p.out.Read(b) }
func (p *execProc) Write(b []byte) (int, error) { return p.in.Write(b) }
func (p *execProc) Close() error                { return p.in.Close() }
func (p *execProc) Kill()                       { _ = p.cmd.Process.Kill() }

func (p *execProc) Wait() (int, string) {
	err := p.cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, p.stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), p.stderr.String()
	}
	return -1, p.stderr.String()
}

// SetReadDeadline sets the deadline of reads of its stdout.
func (p *execProc) SetReadDeadline(t time.Time) error {
	if f, ok := p.out.(interface{ SetReadDeadline(time.Time) error }); ok {
		return f.SetReadDeadline(t)
	}
	return nil
}

// tailBuffer keeps the last max bytes written to it.
// os/exec writes it from one goroutine, and it is read after Wait.
type tailBuffer struct {
	max int
	b   bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b.Write(p)
	if over := t.b.Len() - t.max; over > 0 {
		t.b.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return t.b.String() }

// Run runs party with args on h to its end and returns its stdout. A
// failure is an *Error; ctx's deadline kills ssh (ReasonTimeout).
func Run(ctx context.Context, r Runner, h Host, args ...string) ([]byte, error) {
	return RunInput(ctx, r, h, nil, args...)
}

// RunInput is Run with stdin on the remote party's stdin: the way text a
// person or an agent wrote reaches a remote party run with argv (party
// send ROLE - there), never on the remote command line. The remote
// party's stdout is returned with its failure too (its --json error).
func RunInput(ctx context.Context, r Runner, h Host, stdin io.Reader, args ...string) ([]byte, error) {
	argv, err := h.Argv(args...)
	if err != nil {
		return nil, err
	}
	p, err := r.Start(argv)
	if err != nil {
		return nil, err
	}
	if stdin == nil {
		_ = p.Close() // nothing on stdin
	} else {
		go func() {
			// A remote party that ended early (its failure is its
			// exit) stops reading: the copy's error says nothing more.
			_, _ = io.Copy(p, stdin)
			_ = p.Close()
		}()
	}
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(p, 64<<20))
		done <- result{b, err}
	}()
	var res result
	killed := false
	select {
	case res = <-done:
	case <-ctx.Done():
		p.Kill()
		killed = true
		res = <-done
	}
	exit, stderr := p.Wait()
	if killed || exit != 0 {
		return res.out, Classify(h.Name, exit, stderr, killed)
	}
	return res.out, res.err
}
