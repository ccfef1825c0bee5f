package tmux

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/partyhq/party/core/mux"
)

// Notifications are the client's other notifications, one line each
// (%subscription-changed, %window-close, %layout-change, …); lines that
// come while the channel is full are dropped.
func (cc *Control) Notifications() <-chan string { return cc.notify }

// Output is one %output notification of a control client: bytes a pane
// printed. A UTF-8 character may be split across two notifications, so
// consumers decode per pane as a byte stream.
type Output struct {
	Pane string
	Data []byte
}

// Control is a control-mode client (tmux -C) attached to one session. It
// streams what the session's panes print and runs commands over the same
// connection, which is much cheaper than a tmux process per command.
//
// One goroutine reads the connection; it exits when the client exits (the
// session ended, Close was called, or the server died), closing Output.
type Control struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	output chan Output
	notify chan string
	mu     sync.Mutex // serializes commands: replies come back in order
	reply  chan controlReply
	done   chan struct{}
	err    error // why the reader stopped, valid after done is closed
}

type controlReply struct {
	body string
	err  error
}

// ErrControlClosed is a command on a control client that has exited.
var ErrControlClosed = errors.New("control client closed")

// Control attaches a control client to session. The client never resizes
// the session's windows (ignore-size). With output false tmux sends it no
// %output at all (no-output), for callers that only run commands; else
// Output must be drained by the caller.
func (c *Client) Control(ctx context.Context, session string, output bool) (*Control, error) {
	flags := "ignore-size"
	if !output {
		flags += ",no-output"
	}
	argv := c.Argv("-C", "attach-session", "-t", exactSession(session), "-f", flags)
	// -C is a client flag: it goes before the command, after the socket.
	argv = moveFlag(argv, "-C")
	cmd := exec.Command(argv[0], argv[1:]...)
	if r, ok := c.Runner.(ExecRunner); ok && r.Env != nil {
		cmd.Env = r.Env
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The client dies with party, however party dies (kill -9 included):
	// a client left attached to a server wedges it.
	dieWithParent(cmd.SysProcAttr)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("control client: %w", err)
	}
	cc := &Control{
		cmd: cmd, stdin: stdin,
		output: make(chan Output, 256),
		notify: make(chan string, 16),
		reply:  make(chan controlReply, 1),
		done:   make(chan struct{}),
	}
	first := make(chan error, 1)
	go cc.read(stdout, first)
	select {
	case err := <-first:
		if err != nil {
			_ = cc.Close()
			return nil, fmt.Errorf("control client for %q: %w: %s", session, err, strings.TrimSpace(stderr.String()))
		}
	case <-ctx.Done():
		_ = cc.Close()
		return nil, ctx.Err()
	}
	return cc, nil
}

// moveFlag moves flag to just after the socket arguments (before the
// command name) in argv.
func moveFlag(argv []string, flag string) []string {
	var out []string
	for _, a := range argv {
		if a != flag {
			out = append(out, a)
		}
	}
	i := 2 // tmux -u
	for i < len(out) && (out[i] == "-L" || out[i] == "-S" || out[i] == "-f") {
		i += 2
	}
	return append(out[:i], append([]string{flag}, out[i:]...)...)
}

// Output returns the stream of pane output. It is closed when the client
// exits.
func (cc *Control) Output() <-chan Output { return cc.output }

// Done is closed when the client has exited.
func (cc *Control) Done() <-chan struct{} { return cc.done }

// Err says why the client exited, once Done is closed.
func (cc *Control) Err() error {
	<-cc.done
	return cc.err
}

// safeArg says whether a is what an argument of a command over a control
// connection may be: one or more of the bytes of safeBytes, nothing
// tmux's parser gives a meaning to inside single quotes, and the
// separators of Query's formats (\x1e, \x1f). (A table, not a regexp:
// every query's formats go through it.)
func safeArg(a string) bool {
	for i := 0; i < len(a); i++ {
		if !safeBytes[a[i]] {
			return false
		}
	}
	return a != ""
}

var safeBytes = func() (t [256]bool) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_%@=:.,+#{}/|*\x1e\x1f-") {
		t[c] = true
	}
	return t
}()

// Command runs one tmux command over the connection and returns its
// output. Arguments are limited to a safe character set (ids, numbers,
// flags, formats): user text never goes through a control connection.
func (cc *Control) Command(ctx context.Context, args ...string) (string, error) {
	out, err := cc.Commands(ctx, args)
	if err != nil {
		return "", err
	}
	return out[0], nil
}

// Commands runs several commands written to the connection at once, so
// that tmux runs them one after the other with nothing in between (no
// pane output is read between them), and returns their outputs.
func (cc *Control) Commands(ctx context.Context, cmds ...[]string) ([]string, error) {
	var lines strings.Builder
	for _, args := range cmds {
		for i, a := range args {
			if !safeArg(a) {
				return nil, fmt.Errorf("control command argument %q: %w", a, ErrCommand)
			}
			if i > 0 {
				lines.WriteByte(' ')
			}
			lines.WriteString("'" + a + "'") // safeArg has no quotes; '#' must not start a comment
		}
		lines.WriteByte('\n')
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	select {
	case <-cc.done:
		return nil, ErrControlClosed
	default:
	}
	if _, err := io.WriteString(cc.stdin, lines.String()); err != nil {
		return nil, fmt.Errorf("control command %s: %w", cmds[0][0], ErrControlClosed)
	}
	out := make([]string, 0, len(cmds))
	var failed error
	for i := range cmds {
		select {
		case r := <-cc.reply:
			if r.err != nil && failed == nil {
				// As a tmux process would have failed: its message, classified.
				failed = &CmdError{Args: append([]string{"tmux"}, cmds[i]...), Stderr: r.body, ExitCode: 1, Err: classify(r.body)}
			}
			out = append(out, r.body)
		case <-cc.done:
			return nil, ErrControlClosed
		case <-ctx.Done():
			// The replies will still come; a later command must not take them.
			left := len(cmds) - i
			go func() {
				for ; left > 0; left-- {
					select {
					case <-cc.reply:
					case <-cc.done:
						return
					}
				}
			}()
			return nil, ctx.Err()
		}
	}
	return out, failed
}

// Capture returns the screen of pane over the control connection, wrapped
// lines joined and trailing spaces removed, like Client.Capture.
func (cc *Control) Capture(ctx context.Context, pane string) (string, error) {
	out, err := cc.Command(ctx, "capture-pane", "-p", "-J", "-t", pane)
	if err != nil {
		return "", err
	}
	return trimCapture(out), nil
}

// Close detaches the client and waits for it to exit.
func (cc *Control) Close() error {
	cc.stdin.Close() // an empty line or EOF detaches a control client
	<-cc.done
	_ = cc.cmd.Wait()
	return nil
}

// read parses the control stream until it ends. The first %begin/%end
// block is the reply to the attach itself and is reported on first.
//
// A reply is "%begin TIME NUMBER FLAGS", its lines, then "%end" or "%error"
// with the same TIME NUMBER FLAGS. A line of the reply (a pane's text in a
// capture) can start with "%end ": only the guard with the numbers of its
// %begin ends the reply.
func (cc *Control) read(r io.Reader, first chan<- error) {
	defer close(cc.done)
	defer close(cc.output)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	var (
		guard []byte // the TIME NUMBER FLAGS of the open reply; nil outside one
		// body gathers a reply's lines; its bytes are kept for the next
		// one (up to keepBody), and each reply is one string of its size.
		body     bytes.Buffer
		attached bool
	)
	for sc.Scan() {
		line := sc.Bytes() // valid until the next Scan
		if guard != nil {
			end, isEnd := bytes.CutPrefix(line, []byte("%end "))
			failed, isError := bytes.CutPrefix(line, []byte("%error "))
			if (isEnd && bytes.Equal(end, guard)) || (isError && bytes.Equal(failed, guard)) {
				guard = nil
				var err error
				if isError {
					err = ErrCommand
				}
				if !attached {
					attached = true
					first <- err
					continue
				}
				cc.reply <- controlReply{body: body.String(), err: err}
				if body.Cap() > keepBody {
					body = bytes.Buffer{}
				}
				continue
			}
			body.Write(line)
			body.WriteByte('\n')
			continue
		}
		switch {
		case bytes.HasPrefix(line, []byte("%begin ")):
			guard = bytes.Clone(line[len("%begin "):])
			body.Reset()
		case bytes.HasPrefix(line, []byte("%output ")):
			rest := line[len("%output "):]
			pane, data, _ := bytes.Cut(rest, []byte(" "))
			cc.output <- Output{Pane: string(pane), Data: unescapeOutput(data)}
		case bytes.HasPrefix(line, []byte("%exit")):
			cc.err = errors.New(strings.TrimSpace(string(line[len("%exit"):])))
		case bytes.HasPrefix(line, []byte("%")):
			select { // a notification nobody reads is dropped, never blocks
			case cc.notify <- string(line):
			default:
			}
		}
	}
	if !attached {
		first <- errors.New("control client exited before attaching")
	}
	if cc.err == nil {
		cc.err = sc.Err()
	}
}

// keepBody bounds the buffer a control client keeps for its next reply:
// a long capture's is let go.
const keepBody = 1 << 20

// unescapeOutput decodes %output data: tmux writes bytes below 0x20 and
// the backslash as \ooo octal escapes.
func unescapeOutput(s []byte) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			out = append(out, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
			i += 3
			continue
		}
		out = append(out, s[i])
	}
	return out
}

func isOctal(b byte) bool { return b >= '0' && b <= '7' }

// PaneState describes whether pane id is alive, over the control
// connection (no tmux process). Only ID, PID, Dead and DeadStatus are set.
// A pane whose process is a zombie the server did not reap (tmux #4559) is
// reaped first.
func (cc *Control) PaneState(ctx context.Context, id string) (mux.Pane, error) {
	for try := 0; ; try++ {
		out, err := cc.Command(ctx, "display-message", "-p", "-t", id, "#{pane_id}|#{pane_dead}|#{pane_dead_status}|#{pane_pid}|#{pid}")
		if err != nil {
			return mux.Pane{}, fmt.Errorf("pane %s: %w", id, err)
		}
		f := strings.Split(strings.TrimSpace(out), "|")
		if len(f) != 5 || f[0] != id {
			return mux.Pane{}, fmt.Errorf("pane %s: %w", id, mux.ErrNoPane)
		}
		pid, _ := strconv.Atoi(f[3])
		p := mux.Pane{ID: id, PID: pid, Dead: f[1] == "1", DeadStatus: f[2]}
		if (p.Dead && p.DeadStatus != "") || try > 0 || !IsZombie(pid) {
			return p, nil
		}
		server, _ := strconv.Atoi(f[4])
		reapZombie(pid, server)
	}
}

// Rows is Client.Rows over the connection: the scrollback's size, the rows
// as they are, then joined, of one instant.
func (cc *Control) Rows(ctx context.Context, pane string, history int) (mux.Rows, error) {
	start := strconv.Itoa(-history)
	out, err := cc.Commands(ctx,
		[]string{"display-message", "-p", "-t", pane, "#{pane_id}|#{history_size}|#{alternate_on}|#{history_limit}"},
		[]string{"capture-pane", "-p", "-N", "-t", pane, "-S", start},
		[]string{"capture-pane", "-p", "-J", "-t", pane, "-S", start})
	if err != nil {
		return mux.Rows{}, fmt.Errorf("capture %s: %w", pane, err)
	}
	return parseRows(pane, out[0], "|", out[1], out[2], history)
}

// CaptureHistory is Capture with up to history lines of scrollback.
func (cc *Control) CaptureHistory(ctx context.Context, pane string, history int) (string, error) {
	out, err := cc.Command(ctx, "capture-pane", "-p", "-J", "-t", pane, "-S", strconv.Itoa(-history))
	if err != nil {
		return "", err
	}
	return trimCapture(out), nil
}
