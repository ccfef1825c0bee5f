package hosts

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/partyhq/party/core/clock"
)

// Protocol is the version of the bridge's protocol (the Hello and what
// follows it).
const Protocol = 1

// maxHello bounds the Hello line.
const maxHello = 4 << 10

// Hello is the first line the remote end of a bridge writes, as JSON:
// the protocol, the remote party's version and, when it cannot bridge,
// why (a stable code of the exit-code table and a message).
type Hello struct {
	Bridge  int          `json:"bridge"`
	Version string       `json:"version"`
	Session string       `json:"session,omitempty"`
	Error   *RemoteError `json:"error,omitempty"`
}

// RemoteError is an error the remote party reported: its stable code
// (the exit-code table's) and message.
type RemoteError struct {
	Host    string `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *RemoteError) Error() string { return fmt.Sprintf("host %s: %s", e.Host, e.Message) }

// ErrVersion is a host whose party is another version than this one.
var ErrVersion = errors.New("another party version")

// VersionError is a host whose party (Remote) is not this one (Local), or
// whose bridge speaks another protocol.
type VersionError struct {
	Host, Remote, Local string
	Protocol            int // the remote bridge's, when that differs
}

func (e *VersionError) Error() string {
	if e.Protocol != 0 && e.Protocol != Protocol {
		return fmt.Sprintf("host %s runs party %s, whose API bridge is protocol %d; this party %s speaks %d: install the same party on both",
			e.Host, e.Remote, e.Protocol, e.Local, Protocol)
	}
	return fmt.Sprintf("host %s runs party %s, this is party %s: install the same party version on both", e.Host, e.Remote, e.Local)
}

// Unwrap is ErrVersion.
func (e *VersionError) Unwrap() error { return ErrVersion }

// CheckVersion is a *VersionError when remote is not local.
func CheckVersion(host, remote, local string) error {
	if remote != local {
		return &VersionError{Host: host, Remote: remote, Local: local}
	}
	return nil
}

// helloWait bounds the wait for the Hello beyond ssh's own
// ConnectTimeout: the remote party's start and its look for the socket.
const helloWait = 10 * time.Second

// Dial starts the API bridge to session's supervisor on h (party
// supervise bridge --session=SESSION) and returns it as a net.Conn once
// its Hello came and says the remote party is version local. An ssh
// failure is an *Error, another version a *VersionError, a bridge the
// remote could not make (no supervisor there) a *RemoteError with the
// remote's code. Closing the conn ends ssh, killed if it has not exited a
// second later by clk.
func Dial(ctx context.Context, clk clock.Clock, r Runner, h Host, session, local string) (net.Conn, Hello, error) {
	if err := CheckSession(session); err != nil {
		return nil, Hello{}, err
	}
	argv, err := h.Argv("supervise", "bridge", "--session="+session)
	if err != nil {
		return nil, Hello{}, err
	}
	p, err := r.Start(argv)
	if err != nil {
		return nil, Hello{}, err
	}
	type result struct {
		line []byte
		err  error
	}
	br := bufio.NewReaderSize(p, maxHello)
	got := make(chan result, 1)
	go func() {
		line, err := br.ReadSlice('\n')
		got <- result{append([]byte(nil), line...), err}
	}()
	ctx, cancel := context.WithTimeout(ctx, time.Duration(ConnectTimeout)*time.Second+helloWait)
	defer cancel()
	var res result
	select {
	case res = <-got:
	case <-ctx.Done():
		p.Kill()
		<-got
		exit, stderr := p.Wait()
		return nil, Hello{}, Classify(h.Name, exit, stderr, true)
	}
	if res.err != nil {
		_ = p.Close()
		exit, stderr := p.Wait()
		if exit == 0 {
			exit = 1 // it ended without a word: not a bridge
		}
		return nil, Hello{}, Classify(h.Name, exit, stderr, false)
	}
	var hello Hello
	fail := func(err error) (net.Conn, Hello, error) {
		p.Kill()
		_, _ = p.Wait()
		return nil, hello, err
	}
	if err := json.Unmarshal(res.line, &hello); err != nil || hello.Bridge == 0 {
		return fail(&Error{Host: h.Name, Reason: ReasonNoBridge, Exit: -1, Stderr: fmt.Sprintf("not a bridge's hello: %.80q", res.line)})
	}
	if hello.Bridge != Protocol {
		return fail(&VersionError{Host: h.Name, Remote: hello.Version, Local: local, Protocol: hello.Bridge})
	}
	if err := CheckVersion(h.Name, hello.Version, local); err != nil {
		return fail(err)
	}
	if hello.Error != nil {
		hello.Error.Host = h.Name
		return fail(hello.Error)
	}
	return &procConn{Proc: p, r: br, host: h.Name, clock: clk}, hello, nil
}

// procConn is a bridge's process as a net.Conn: reads are its stdout
// (after the Hello), writes its stdin.
type procConn struct {
	Proc
	r     *bufio.Reader
	host  string
	clock clock.Clock
	once  sync.Once
}

func (c *procConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// Close closes ssh's stdin, which ends the remote bridge, and waits for
// ssh to exit (killing it if it does not within a second).
func (c *procConn) Close() error {
	c.once.Do(func() {
		_ = c.Proc.Close()
		done := make(chan struct{})
		go func() { _, _ = c.Wait(); close(done) }()
		timer := c.clock.NewTimer(time.Second)
		defer timer.Stop()
		select {
		case <-done:
		case <-timer.C():
			c.Kill()
			<-done
		}
	})
	return nil
}

func (c *procConn) LocalAddr() net.Addr  { return bridgeAddr("local") }
func (c *procConn) RemoteAddr() net.Addr { return bridgeAddr(c.host) }

func (c *procConn) SetDeadline(t time.Time) error { return c.SetReadDeadline(t) }

func (c *procConn) SetReadDeadline(t time.Time) error {
	if d, ok := c.Proc.(interface{ SetReadDeadline(time.Time) error }); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}

func (c *procConn) SetWriteDeadline(time.Time) error { return nil }

// bridgeAddr is a bridge's end as a net.Addr.
type bridgeAddr string

func (a bridgeAddr) Network() string { return "ssh" }
func (a bridgeAddr) String() string  { return string(a) }

// Serve is the remote end of a bridge: it writes hello, then, unless
// hello carries an error, copies in to conn and conn to out until the
// supervisor closes conn, or ctx ends. The end of in (the local side
// closed) is passed on as a half-close (CloseWrite) where conn has one, so
// an answer on its way still comes out; the supervisor then closes. conn
// is closed when it returns.
func Serve(ctx context.Context, hello Hello, conn net.Conn, in io.Reader, out io.Writer) error {
	hello.Bridge = Protocol
	b, err := json.Marshal(hello)
	if err != nil {
		return err
	}
	if _, err := out.Write(append(b, '\n')); err != nil {
		if conn != nil {
			_ = conn.Close()
		}
		return err
	}
	if hello.Error != nil || conn == nil {
		return nil
	}
	defer conn.Close()
	done := make(chan error, 2)
	go func() {
		_, err := io.Copy(conn, in)
		if cw, ok := conn.(interface{ CloseWrite() error }); ok && err == nil {
			_ = cw.CloseWrite() // the local side is done asking
			return
		}
		done <- err // it broke, or conn cannot half-close
	}()
	go func() {
		_, err := io.Copy(out, conn)
		done <- err // the supervisor closed
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
	}
	return err
}

// sessionRE is a session's name as a remote command may carry it.
var sessionRE = nameRE

// CheckSession says whether a remote session's name is a plain token
// that may go on a remote command line.
func CheckSession(name string) error {
	if !sessionRE.MatchString(name) {
		return fmt.Errorf("session name %q: only names of letters, digits, '.', '_' and '-' can be reached on another host: %w", name, ErrName)
	}
	return nil
}
