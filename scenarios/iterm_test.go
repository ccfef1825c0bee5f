package scenarios

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/testscript"
)

// ptyClient is a program run on a pseudo-terminal, as a person's terminal
// runs it: a plain tmux client, or party attach, which in control mode
// makes it play iTerm2's part. Everything the program writes to its
// terminal is kept.
type ptyClient struct {
	cmd  *exec.Cmd
	tty  *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func (c *ptyClient) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.out.Bytes())
}

// ptyClients are the running clients of each script, by name.
var ptyClients sync.Map // *testscript.TestScript -> map[string]*ptyClient

func clientsOf(ts *testscript.TestScript) map[string]*ptyClient {
	m, _ := ptyClients.LoadOrStore(ts, map[string]*ptyClient{})
	return m.(map[string]*ptyClient)
}

// cmdPtyClient runs and reads programs on pseudo-terminals (120x40):
//
//	ptyclient start NAME [-env K=V]... -- PROG [ARGS...]
//	ptyclient opening NAME          control mode's ESC P1000p opens the output
//	ptyclient cc NAME COMMAND...    send a control-mode command, print its reply
//	ptyclient wait NAME REGEXP      wait until the output (escaped: ESC as \e, BEL as \a) matches
//	ptyclient bell NAME             wait for a BEL of its own (not one ending an OSC)
//	ptyclient show NAME             print the output, escaped
//	ptyclient stop NAME             detach (control mode: an empty line) and wait for the exit
//
// "! ptyclient opening NAME" asserts a plain client.
func cmdPtyClient(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: ptyclient start|opening|cc|wait|show|stop NAME ...")
	}
	if neg && args[0] != "opening" {
		ts.Fatalf("ptyclient %s: no ! form", args[0])
	}
	clients := clientsOf(ts)
	name := args[1]
	if args[0] == "start" {
		startPtyClient(ts, clients, name, args[2:])
		return
	}
	c := clients[name]
	if c == nil {
		ts.Fatalf("ptyclient %s: no client %q", args[0], name)
	}
	switch args[0] {
	case "opening":
		got := c.waitMode(ts)
		if got == neg {
			ts.Fatalf("client %s: control mode opening %v, want %v; output:\n%s", name, got, !neg, escapeTerm(c.bytes()))
		}
	case "cc":
		words := make([]string, len(args)-2)
		for i, a := range args[2:] {
			if strings.Contains(a, "'") {
				ts.Fatalf("ptyclient cc: no ' in the words of a command")
			}
			// tmux's parser: '#' starts a comment, ';' ends a command.
			words[i] = "'" + a + "'"
		}
		fmt.Fprint(ts.Stdout(), c.command(ts, strings.Join(words, " ")))
	case "wait":
		if len(args) != 3 {
			ts.Fatalf("usage: ptyclient wait NAME REGEXP")
		}
		re, err := regexp.Compile(args[2])
		ts.Check(err)
		deadline := time.Now().Add(waitLimit)
		for !re.MatchString(escapeTerm(c.bytes())) {
			if time.Now().After(deadline) {
				ts.Fatalf("client %s never showed %q; its output:\n%s", name, args[2], escapeTerm(c.bytes()))
			}
			time.Sleep(20 * time.Millisecond)
		}
	case "bell":
		deadline := time.Now().Add(waitLimit)
		for !hasBell(c.bytes()) {
			if time.Now().After(deadline) {
				ts.Fatalf("client %s never rang the bell; its output:\n%s", name, escapeTerm(c.bytes()))
			}
			time.Sleep(20 * time.Millisecond)
		}
	case "show":
		fmt.Fprint(ts.Stdout(), escapeTerm(c.bytes()))
	case "stop":
		if isControl(c.bytes()) {
			_, _ = c.tty.Write([]byte("\n"))
		} else {
			_ = c.cmd.Process.Signal(syscall.SIGTERM)
		}
		select {
		case <-c.done:
		case <-time.After(waitLimit):
			ts.Fatalf("client %s did not exit; its output:\n%s", name, escapeTerm(c.bytes()))
		}
		delete(clients, name)
	default:
		ts.Fatalf("ptyclient: unknown command %q", args[0])
	}
}

func startPtyClient(ts *testscript.TestScript, clients map[string]*ptyClient, name string, args []string) {
	if clients[name] != nil {
		ts.Fatalf("ptyclient: %s runs already", name)
	}
	env := append(scriptEnv(ts), "PARTY_TMUX_SOCKET="+ts.Getenv("SOCK"), "PARTY_TMUX_CONFIG="+ts.Getenv("PARTY_TMUX_CONFIG"),
		"XDG_RUNTIME_DIR="+ts.Getenv("XDG_RUNTIME_DIR"), "PARTY_MOCK_SCRIPT="+ts.Getenv("PARTY_MOCK_SCRIPT"))
	for len(args) > 1 && args[0] == "-env" {
		env = append(env, args[1])
		args = args[2:]
	}
	if len(args) < 2 || args[0] != "--" {
		ts.Fatalf("usage: ptyclient start NAME [-env K=V]... -- PROG [ARGS...]")
	}
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Env, cmd.Dir = env, ts.Getenv("WORK")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	ts.Check(err)
	c := &ptyClient{cmd: cmd, tty: tty, done: make(chan struct{})}
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := tty.Read(buf)
			c.mu.Lock()
			c.out.Write(buf[:n])
			c.mu.Unlock()
			if err != nil {
				break
			}
		}
		_ = cmd.Wait()
		close(c.done)
	}()
	clients[name] = c
	ts.Defer(func() {
		select {
		case <-c.done:
		default:
			_ = cmd.Process.Kill()
			<-c.done
		}
		tty.Close()
		ptyClients.Delete(ts)
	})
}

// isControl says whether out is control mode's: it opens with ESC P1000p
// (after what party printed on stderr before it attached, on the same
// terminal).
func isControl(out []byte) bool {
	i := bytes.Index(out, []byte("\x1bP1000p"))
	return i >= 0 && !bytes.Contains(out[:i], []byte("\x1b"))
}

// waitMode waits until the client's output shows whether it is in
// control mode: the opening, or another escape first (a plain client
// draws the screen).
func (c *ptyClient) waitMode(ts *testscript.TestScript) bool {
	deadline := time.Now().Add(waitLimit)
	for {
		b := c.bytes()
		if isControl(b) {
			return true
		}
		if bytes.IndexByte(b, 0x1b) >= 0 {
			return false
		}
		if time.Now().After(deadline) {
			ts.Fatalf("the client wrote no escape sequence; its output:\n%s", escapeTerm(b))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ccBlock matches a reply of control mode to a client's own command
// (flags 1): %begin TIME NUM 1 … %end|%error TIME NUM 1.
var ccBlock = regexp.MustCompile(`(?s)%begin \d+ (\d+) 1\r?\n(.*?)%(end|error) \d+ (\d+) 1\r?\n`)

// command sends one control-mode command and returns its reply's lines;
// an %error reply fails the script.
func (c *ptyClient) command(ts *testscript.TestScript, line string) string {
	before := len(c.bytes())
	_, err := c.tty.Write([]byte(line + "\n"))
	ts.Check(err)
	deadline := time.Now().Add(waitLimit)
	for time.Now().Before(deadline) {
		out := c.bytes()[before:]
		for _, m := range ccBlock.FindAllSubmatch(out, -1) {
			if string(m[1]) != string(m[4]) {
				continue
			}
			body := strings.ReplaceAll(string(m[2]), "\r\n", "\n")
			if string(m[3]) == "error" {
				ts.Fatalf("control mode %q: %s", line, body)
			}
			return body
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Fatalf("control mode %q: no reply; output:\n%s", line, escapeTerm(c.bytes()[before:]))
	return ""
}

// hasBell says whether out holds a BEL that does not end an OSC string.
func hasBell(out []byte) bool {
	inOSC := false
	for i, c := range out {
		switch {
		case c == 0x1b && i+1 < len(out) && out[i+1] == ']':
			inOSC = true
		case inOSC && (c == 0x07 || c == 0x1b && i+1 < len(out) && out[i+1] == '\\'):
			inOSC = false
		case c == 0x07:
			return true
		}
	}
	return false
}

// escapeTerm shows terminal output as text: ESC as \e, BEL as \a, CR
// dropped before LF, other control bytes as \xNN.
func escapeTerm(b []byte) string {
	var s strings.Builder
	for i, c := range b {
		switch {
		case c == 0x1b:
			s.WriteString(`\e`)
		case c == 0x07:
			s.WriteString(`\a`)
		case c == '\r' && i+1 < len(b) && b[i+1] == '\n':
		case c == '\n' || c == '\t' || c >= 0x20 && c != 0x7f:
			s.WriteByte(c)
		default:
			s.WriteString(`\x` + strconv.FormatUint(uint64(c)|0x100, 16)[1:])
		}
	}
	return s.String()
}
