package mcp

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/state"
)

// httpServer serves party's tools over HTTP on a unix socket (unix) or
// loopback TCP, the operator's token "op-token", bot's "bot-token"; it
// returns the URL, the socket, and the identities servers were made for.
func httpServer(t *testing.T, unix bool) (url, sock string, ids func() []Identity) {
	t.Helper()
	var (
		mu   sync.Mutex
		made []Identity
	)
	h := NewHTTP(HTTPOptions{Operator: "op-token", Unix: unix,
		Verify: func(_ context.Context, token string) (Identity, error) {
			switch {
			case state.SameToken(token, "op-token"):
				return Identity{Operator: true}, nil
			case state.SameToken(token, "bot-token"), state.SameToken(token, "bot-token-2"):
				return Identity{Role: "bot", Token: token}, nil
			}
			return Identity{}, ErrBadToken
		},
		Server: func(id Identity) *Server {
			mu.Lock()
			made = append(made, id)
			mu.Unlock()
			return NewServer(&fakeOps{}, Options{})
		}})
	var ln net.Listener
	var err error
	url = "http://localhost/"
	if unix {
		sock = filepath.Join(t.TempDir(), "mcp.sock")
		ln, err = net.Listen("unix", sock)
	} else {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
		url = "http://" + ln.Addr().String() + "/"
	}
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.Serve(ctx, ln, t.Logf) }()
	t.Cleanup(func() { cancel(); assert.NoError(t, <-served) })
	return url, sock, func() []Identity { mu.Lock(); defer mu.Unlock(); return append([]Identity(nil), made...) }
}

// headerRT sends every request with the header Authorization: auth.
type headerRT struct {
	auth *string
	next http.RoundTripper
}

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if *h.auth != "" {
		r.Header.Set("Authorization", *h.auth)
	}
	return h.next.RoundTrip(r)
}

func connect(t *testing.T, url, sock string, auth *string) (*sdk.ClientSession, error) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	if sock != "" {
		base.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}
	}
	tr := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: headerRT{auth, base}}, MaxRetries: -1}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func TestHTTPIdentityFromBearerToken(t *testing.T) {
	tests := []struct {
		name    string
		unix    bool
		auth    string
		want    *Identity // nil: refused
		wantErr string
	}{
		{name: "tcp, the operator's token", auth: "Bearer op-token", want: &Identity{Operator: true}},
		{name: "tcp, a runtime's token", auth: "bearer bot-token", want: &Identity{Role: "bot", Token: "bot-token"}},
		{name: "tcp, no token", wantErr: "Unauthorized"},
		{name: "tcp, a forged token", auth: "Bearer forged", wantErr: "Unauthorized"},
		{name: "unix, no token: the operator", unix: true, want: &Identity{Operator: true}},
		{name: "unix, a runtime's token", unix: true, auth: "Bearer bot-token", want: &Identity{Role: "bot", Token: "bot-token"}},
		{name: "unix, a forged token", unix: true, auth: "Bearer forged", wantErr: "Unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, sock, ids := httpServer(t, tt.unix)
			auth := tt.auth
			cs, err := connect(t, url, sock, &auth)
			if tt.want == nil {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.Empty(t, ids(), "no server for a refused client")
				return
			}
			require.NoError(t, err)
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "runtimes"})
			require.NoError(t, err)
			assert.False(t, res.IsError)
			assert.Equal(t, []Identity{*tt.want}, ids())
		})
	}
}

// A session opened as one identity cannot go on with another's token.
func TestHTTPSessionKeepsItsIdentity(t *testing.T) {
	url, _, _ := httpServer(t, false)
	auth := "Bearer bot-token"
	cs, err := connect(t, url, "", &auth)
	require.NoError(t, err)
	auth = "Bearer op-token"
	_, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "runtimes"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Forbidden")
}

// A role's new token (its pane respawned) is served by a server of its
// own: the old one would call with the old token.
func TestHTTPNewTokenNewServer(t *testing.T) {
	url, _, ids := httpServer(t, false)
	for _, tok := range []string{"bot-token", "bot-token-2", "bot-token"} {
		auth := "Bearer " + tok
		cs, err := connect(t, url, "", &auth)
		require.NoError(t, err)
		_, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "runtimes"})
		require.NoError(t, err)
	}
	assert.Equal(t, []Identity{{Role: "bot", Token: "bot-token"}, {Role: "bot", Token: "bot-token-2"}}, ids())
}

// operatorHTTP serves ops over HTTP on loopback to every token as the
// operator; stop ends Serve and returns what it returned (once).
func operatorHTTP(t *testing.T, ops Ops) (url string, stop func() error) {
	h := NewHTTP(HTTPOptions{Operator: "op-token",
		Verify: func(context.Context, string) (Identity, error) { return Identity{Operator: true}, nil },
		Server: func(Identity) *Server { return NewServer(ops, Options{}) }})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.Serve(ctx, ln, t.Logf) }()
	var once sync.Once
	var serr error
	return "http://" + ln.Addr().String() + "/", func() error {
		once.Do(func() { cancel(); serr = <-served })
		return serr
	}
}

// Serve stopped while a talk is in flight: the talk is cancelled (taken
// back), and Serve returns once it has ended.
func TestHTTPStopCancelsCallsInFlight(t *testing.T) {
	ops := &fakeOps{talkStart: make(chan struct{})}
	url, stop := operatorHTTP(t, ops)
	auth := "Bearer op-token"
	cs, err := connect(t, url, "", &auth)
	require.NoError(t, err)
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "talk", Arguments: map[string]any{"role": "w", "text": "x"}})
		called <- err
	}()
	<-ops.talkStart
	require.NoError(t, stop())
	assert.True(t, ops.talkEnded.Load(), "the talk ended before Serve returned")
	assert.Error(t, <-called, "the client is told its session is gone")
	_ = cs.Close()
}

// A client that leaves while its talk runs (its process killed: the
// connection closed, no notifications/cancelled): the talk is cancelled
// (taken back), as a stdio client's end of input does.
func TestHTTPClientLeftCancelsItsCall(t *testing.T) {
	ops := &fakeOps{talkStart: make(chan struct{}), talkDone: make(chan struct{})}
	url, stop := operatorHTTP(t, ops)
	t.Cleanup(func() { assert.NoError(t, stop()) })

	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	auth := "Bearer op-token"
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
		return c, err
	}
	tr := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: headerRT{&auth, base}}, MaxRetries: -1}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	require.NoError(t, err)
	go func() {
		_, _ = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "talk", Arguments: map[string]any{"role": "w", "text": "x"}})
	}()
	<-ops.talkStart
	mu.Lock()
	for _, c := range conns {
		_ = c.Close()
	}
	mu.Unlock()
	<-ops.talkDone // never, were the call not cancelled: the test's deadline
	assert.True(t, ops.talkEnded.Load())
	_ = cs.Close()
}
