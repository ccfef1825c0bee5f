package hosts

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/shellwords"
)

func TestQuoteRoundTrips(t *testing.T) {
	for name, s := range map[string]string{
		"plain": "party", "empty": "", "quote": "it's", "quotes": `'''`, "meta": "$(touch pwned); `x` \"q\" | & > *",
		"newline": "a\nb", "backslash": `a\'b\`, "flag": "--session=x",
	} {
		t.Run(name, func(t *testing.T) {
			words, err := shellwords.SplitCommand("x " + Quote(s))
			require.NoError(t, err)
			assert.Equal(t, []string{"x", s}, words)
		})
	}
}

func FuzzQuoteRoundTrip(f *testing.F) {
	for _, s := range []string{"", "a", "it's", "$(x)", "`x`", `"q"`, "a b\tc", `\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsRune(s, 0) {
			return // no shell passes a NUL
		}
		words, err := shellwords.SplitCommand(Quote(s) + " " + Quote(s))
		if err != nil {
			t.Fatalf("Quote(%q) = %s does not parse: %v", s, Quote(s), err)
		}
		if len(words) != 2 || words[0] != s || words[1] != s {
			t.Fatalf("Quote(%q) parsed as %q, want it twice", s, words)
		}
	})
}

func TestChecks(t *testing.T) {
	tests := []struct {
		name  string
		check func(string) error
		ok    []string
		bad   []string
	}{
		{"name", CheckName, []string{"remote", "box-1", "a.b_c", "A9"}, []string{"", "-x", ".x", "a b", "a;b", "a$b", "a/b", "a\nb", strings.Repeat("a", 64)}},
		{"dest", CheckDest, []string{"remote", "me@box", "me@10.0.0.1", "box.example.com", "::1"[0:0] + "h:22"}, []string{"", "-oProxyCommand=x", "a b", "me@box;rm", "$(x)", "a`b`", "a\tb", "a'b", "a\x01"}},
		{"program", CheckProgram, []string{"party", "/usr/local/bin/party", "bin/party", "./party-1.2"}, []string{"", "-x", "~/party", "a b", "a;b", "$HOME/party", "a//b"}},
		{"word", CheckWord, []string{"supervise", "--json", "--session=s1"}, []string{"", "a b", "$(x)", "a;b", "'", "\"", "a\nb", "`x`"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, s := range tt.ok {
				assert.NoError(t, tt.check(s), s)
			}
			for _, s := range tt.bad {
				assert.ErrorIs(t, tt.check(s), ErrName, "%q", s)
			}
		})
	}
}

func TestArgv(t *testing.T) {
	h := Host{Name: "box", Dest: "me@box", Program: "/opt/party", Configured: true}
	argv, err := h.Argv("supervise", "bridge", "--session=s1")
	require.NoError(t, err)
	assert.Equal(t, []string{"ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "-o", "ServerAliveInterval=10", "-o", "ServerAliveCountMax=3", "-T", "--", "me@box",
		"'/opt/party'", "'supervise'", "'bridge'", "'--session=s1'"}, argv)

	argv, err = Host{Name: "me@box", Dest: "me@box"}.Argv("version", "--json")
	require.NoError(t, err)
	assert.Equal(t, []string{"'party'", "'version'", "'--json'"}, argv[12:], "the default program")

	_, err = h.Argv("trigger", "a b")
	assert.ErrorIs(t, err, ErrName, "free text never goes on the remote command line")
	_, err = Host{Name: "x", Dest: "-oProxyCommand=touch pwned"}.Argv("version")
	assert.ErrorIs(t, err, ErrName)
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name   string
		exit   int
		stderr string
		killed bool
		want   Reason
		is     error
	}{
		{"auth", 255, "me@127.0.0.1: Permission denied (publickey).\n", false, ReasonAuth, ErrAuth},
		{"host key", 255, "No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict checking.\nHost key verification failed.\n", false, ReasonHostKey, ErrHostKey},
		{"changed key", 255, "@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @\n", false, ReasonHostKey, ErrHostKey},
		{"timeout", 255, "ssh: connect to host 10.255.255.1 port 22: Connection timed out\n", false, ReasonTimeout, ErrTimeout},
		{"refused", 255, "ssh: connect to host 127.0.0.1 port 1: Connection refused\n", false, ReasonRefused, ErrUnreachable},
		{"resolve", 255, "ssh: Could not resolve hostname nope: Name or service not known\n", false, ReasonResolve, ErrUnreachable},
		{"other ssh", 255, "kex_exchange_identification: read: Connection reset by peer\n", false, ReasonSSH, ErrUnreachable},
		{"closed before", 255, "kex_exchange_identification: Connection closed by remote host\n", false, ReasonSSH, ErrUnreachable},
		{"lost", 255, "Connection to 127.0.0.1 closed by remote host.\n", false, ReasonLost, ErrLost},
		{"lost writing", 255, "client_loop: send disconnect: Broken pipe\n", false, ReasonLost, ErrLost},
		{"lost reading", 255, "Connection closed by 127.0.0.1 port 2222\r\n", false, ReasonLost, ErrLost},
		{"lost, reset", 255, "Connection reset by 10.0.0.1 port 22\n", false, ReasonLost, ErrLost},
		{"lost, ssh quiet", 255, StartedLine + "\n", false, ReasonLost, ErrLost},
		{"failed after it started", 3, StartedLine + "\n", false, ReasonFailed, ErrRemote},
		{"stopped answering", 255, "Timeout, server box not responding.\n", false, ReasonLost, ErrLost},
		{"killed", -1, "", true, ReasonTimeout, ErrTimeout},
		{"no party", 127, "sh: 1: party: not found\n", false, ReasonNoParty, ErrNoParty},
		{"not executable", 126, "sh: 1: /opt/party: Permission denied\n", false, ReasonNoParty, ErrNoParty},
		{"old party", 2, "party: unknown command \"bridge\" for \"party supervise\"\n", false, ReasonNoBridge, ErrNoBridge},
		{"failed", 1, "party: boom\n", false, ReasonFailed, ErrRemote},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Classify("box", tt.exit, tt.stderr, tt.killed)
			assert.Equal(t, tt.want, e.Reason, "got %s, want %s", e.Reason, tt.want)
			assert.ErrorIs(t, e, tt.is)
			assert.Contains(t, e.Error(), "host box: "+tt.want.String())
		})
	}
	assert.NotErrorIs(t, Classify("box", 127, "", false), ErrUnreachable, "no party there is not unreachable")
}

// fakeRunner starts a fakeProc whose remote end serve runs; it records
// the argv.
type fakeRunner struct {
	argv  [][]string
	serve func(in io.Reader, out io.Writer) (exit int, stderr string)
}

func (r *fakeRunner) Start(argv []string) (Proc, error) {
	r.argv = append(r.argv, argv)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &fakeProc{in: inW, out: outR, done: make(chan struct{})}
	go func() {
		p.exit, p.stderr = r.serve(inR, outW)
		_ = outW.Close()
		_ = inR.Close()
		close(p.done)
	}()
	return p, nil
}

type fakeProc struct {
	in     *io.PipeWriter
	out    *io.PipeReader
	done   chan struct{}
	exit   int
	stderr string
	kill   sync.Once
}

func (p *fakeProc) Read(b []byte) (int, error)  { return p.out.Read(b) }
func (p *fakeProc) Write(b []byte) (int, error) { return p.in.Write(b) }
func (p *fakeProc) Close() error                { return p.in.Close() }
func (p *fakeProc) Kill() {
	p.kill.Do(func() { p.in.CloseWithError(errors.New("killed")); p.out.CloseWithError(errors.New("killed")) })
}
func (p *fakeProc) Wait() (int, string) { <-p.done; return p.exit, p.stderr }

// helloServe writes hello and then serves HTTP on the rest of the pipe
// with h.
func helloServe(hello Hello, h http.Handler) func(io.Reader, io.Writer) (int, string) {
	return func(in io.Reader, out io.Writer) (int, string) {
		b, _ := json.Marshal(hello)
		if _, err := out.Write(append(b, '\n')); err != nil || hello.Error != nil {
			return 0, ""
		}
		c1, c2 := net.Pipe()
		l := &oneListener{c: make(chan net.Conn, 1)}
		l.c <- c2
		close(l.c)
		srv := &http.Server{Handler: h}
		go func() { _ = srv.Serve(l) }()
		go func() { _, _ = io.Copy(out, c1) }()
		_, _ = io.Copy(c1, in) // until the local side closes
		c1.Close()
		return 0, ""
	}
}

// oneListener accepts its one conn, then nothing.
type oneListener struct{ c chan net.Conn }

func (l *oneListener) Accept() (net.Conn, error) {
	if c, ok := <-l.c; ok {
		return c, nil
	}
	return nil, net.ErrClosed
}
func (l *oneListener) Close() error   { return nil }
func (l *oneListener) Addr() net.Addr { return bridgeAddr("fake") }

// TestRunInputCarriesTextOnStdin: the text goes to the remote party's
// stdin byte for byte, and only plain words go on its command line; a
// remote failure comes back with what the party printed.
func TestRunInputCarriesTextOnStdin(t *testing.T) {
	text := "$(touch pwned) `x` \"q\" 'x' $HOME\nline two\n"
	var got []byte
	r := &fakeRunner{serve: func(in io.Reader, out io.Writer) (int, string) {
		got, _ = io.ReadAll(in)
		_, _ = io.WriteString(out, `{"error":{"code":"ROLE_NOT_FOUND"}}`)
		return 3, ""
	}}
	out, err := RunInput(context.Background(), r, Host{Name: "box", Dest: "box"}, strings.NewReader(text), "send", "claude", "-", "--json")
	assert.Equal(t, text, string(got))
	assert.Equal(t, `{"error":{"code":"ROLE_NOT_FOUND"}}`, string(out))
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, ReasonFailed, e.Reason)
	assert.Equal(t, 3, e.Exit)
	require.Len(t, r.argv, 1)
	assert.Equal(t, []string{"'party'", "'send'", "'claude'", "'-'", "'--json'"}, r.argv[0][12:])
}

func TestDialCarriesHTTPOnOneConnection(t *testing.T) {
	calls := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		_, _ = io.WriteString(w, r.URL.Path)
	})
	r := &fakeRunner{serve: helloServe(Hello{Bridge: Protocol, Version: "v1"}, h)}
	box := Host{Name: "box", Dest: "box"}
	dials := 0
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		dials++
		c, _, err := Dial(ctx, clock.Real{}, r, box, "s1", "v1")
		return c, err
	}, MaxConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	for _, p := range []string{"/v1/runtimes", "/v1/health"} {
		resp, err := hc.Get("http://party" + p)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, p, string(b))
	}
	assert.Equal(t, 2, calls)
	assert.Equal(t, 1, dials, "one bridge for both calls")
	require.Len(t, r.argv, 1)
	assert.Equal(t, []string{"'party'", "'supervise'", "'bridge'", "'--session=s1'"}, r.argv[0][12:])
}

func TestDialRefuses(t *testing.T) {
	box := Host{Name: "box", Dest: "box"}
	tests := []struct {
		name  string
		serve func(io.Reader, io.Writer) (int, string)
		is    error
		check func(t *testing.T, err error)
	}{
		{"another version", helloServe(Hello{Bridge: Protocol, Version: "v2"}, nil), ErrVersion, func(t *testing.T, err error) {
			var ve *VersionError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, VersionError{Host: "box", Remote: "v2", Local: "v1"}, *ve)
			assert.Contains(t, err.Error(), "host box runs party v2, this is party v1")
		}},
		{"another protocol", helloServe(Hello{Bridge: Protocol + 1, Version: "v1"}, nil), ErrVersion, nil},
		{"no supervisor", helloServe(Hello{Bridge: Protocol, Version: "v1", Error: &RemoteError{Code: "NO_SUPERVISOR", Message: "no supervisor"}}, nil), nil, func(t *testing.T, err error) {
			var re *RemoteError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, "NO_SUPERVISOR", re.Code)
			assert.Equal(t, "box", re.Host)
		}},
		{"auth", func(io.Reader, io.Writer) (int, string) { return 255, "me@box: Permission denied (publickey).\n" }, ErrAuth, nil},
		{"no party", func(io.Reader, io.Writer) (int, string) { return 127, "bash: party: command not found\n" }, ErrNoParty, nil},
		{"not a bridge", func(_ io.Reader, out io.Writer) (int, string) {
			_, _ = io.WriteString(out, "hello there\n")
			return 0, ""
		}, ErrNoBridge, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, err := Dial(context.Background(), clock.Real{}, &fakeRunner{serve: tt.serve}, box, "s1", "v1")
			require.Error(t, err)
			assert.Nil(t, c)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			if tt.check != nil {
				tt.check(t, err)
			}
		})
	}
	_, _, err := Dial(context.Background(), clock.Real{}, &fakeRunner{}, box, "a b", "v1")
	assert.ErrorIs(t, err, ErrName, "a session name that is not a token never reaches ssh")
}

func TestServeCopiesBothWays(t *testing.T) {
	sup, conn := net.Pipe()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), Hello{Version: "v1", Session: "s1"}, conn, inR, outW) }()
	br := bufio.NewReader(outR)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	assert.JSONEq(t, `{"bridge":1,"version":"v1","session":"s1"}`, line)
	go func() { _, _ = inW.Write([]byte("GET /\r\n")) }()
	buf := make([]byte, 7)
	_, err = io.ReadFull(sup, buf)
	require.NoError(t, err)
	assert.Equal(t, "GET /\r\n", string(buf))
	go func() { _, _ = sup.Write([]byte("200 OK")) }()
	buf = make([]byte, 6)
	_, err = io.ReadFull(br, buf)
	require.NoError(t, err)
	assert.Equal(t, "200 OK", string(buf))
	sup.Close() // the supervisor closes: the bridge ends
	select {
	case err := <-done:
		assert.NoError(t, err, "the supervisor's close is the bridge's end")
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return once the supervisor closed")
	}
}

// TestServeHalfCloses: the local side that asked and closed still gets
// the answer (what a bridge used by a one-shot client must do).
func TestServeHalfCloses(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		req, _ := io.ReadAll(c) // until the half-close
		_, _ = c.Write(append([]byte("got "), req...))
	}()
	conn, err := net.Dial("unix", sock)
	require.NoError(t, err)
	var out strings.Builder
	require.NoError(t, Serve(context.Background(), Hello{Version: "v1"}, conn, strings.NewReader("ask"), &out))
	assert.Equal(t, `{"bridge":1,"version":"v1"}`+"\ngot ask", out.String())
}
