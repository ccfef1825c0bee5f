package mcp

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
)

// Identity is who a client of party mcp over HTTP is, from its request's
// bearer token alone (never from a payload field): the operator (named,
// or not), or the runtime of Role, whose token Token is.
type Identity struct {
	Operator bool
	// Name is a named operator's (Operators): the sender of its messages,
	// the actor of its task changes; "" is the anonymous operator.
	Name  string
	Role  string
	Token string // the runtime's token; "" for the operator
}

// key is the identity as the SDK keeps it with a session: each later
// request of the session must carry a token of the same identity.
func (id Identity) key() string {
	switch {
	case id.Operator && id.Name != "":
		return "operator:" + id.Name
	case id.Operator:
		return "operator"
	}
	// The token too: a pane respawned has a new one, served anew.
	return "runtime:" + id.Role + ":" + state.HashToken(id.Token)[:16]
}

// SessionTimeout closes an HTTP session its client left: no request for
// this long (a call in flight holds it open).
const SessionTimeout = 30 * time.Minute

// ErrBadToken is a bearer token that is neither the operator's nor a
// runtime's of the session.
var ErrBadToken = errors.New("the bearer token is neither an operator's nor a runtime's")

// HTTPOptions are what an HTTP server of party's tools takes.
type HTTPOptions struct {
	// Verify is the identity of a bearer token, or an error wrapping
	// ErrBadToken.
	Verify func(ctx context.Context, token string) (Identity, error)
	// Server is the server of party's tools acting as id.
	Server func(id Identity) *Server
	// Operator is the operator's bearer token. On a unix socket (Unix),
	// which only its owner can open, a request without a token is the
	// operator's.
	Operator string
	Unix     bool
}

// HTTP is party's MCP server over streamable HTTP: each session is served
// by the Server of the identity of the bearer token the session was
// opened with (one per identity, made at its first session); a request of the session with a token of
// another identity is refused (403), one without a valid token 401.
type HTTP struct {
	opts    HTTPOptions
	handler http.Handler

	// stopping ends when Serve's context does: every call in flight is
	// cancelled then (the SDK does not cancel a streamable session's
	// calls when the session closes).
	stopping context.Context

	mu      sync.Mutex
	servers map[string]*sdk.Server // by Identity.key: one per identity, for all its sessions
	posts   map[string]*post       // by callHeader: the POSTs whose calls a client may leave
}

// callHeader carries the key of a POST (ServeHTTP sets it, over any a
// client sent) to the SDK's handler of the calls it holds: a client that
// leaves while they run (its process killed, its connection closed)
// cancels them, as a stdio client's EOF does. The SDK does not: without
// an event store a stream left is never resumed, yet its calls go on.
const callHeader = "X-Party-Call"

// post is what ServeHTTP and the calls of one POST share: the calls'
// cancels, and whether its client left before they started.
type post struct {
	cancels []context.CancelFunc
	left    time.Time // the client left; zero while it is there
}

// leftPostsKept is how long a POST its client left is kept for calls of
// it not started yet: a session closed meanwhile never starts them.
const leftPostsKept = time.Minute

// NewHTTP is an HTTP server of party's tools.
func NewHTTP(opts HTTPOptions) *HTTP {
	h := &HTTP{opts: opts, servers: map[string]*sdk.Server{}, posts: map[string]*post{}, stopping: context.Background()}
	streamable := sdk.NewStreamableHTTPHandler(h.server, &sdk.StreamableHTTPOptions{SessionTimeout: SessionTimeout})
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		id, err := opts.Verify(ctx, token)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", auth.ErrInvalidToken, err)
		}
		return &auth.TokenInfo{UserID: id.key(), Extra: map[string]any{identityKey: id}}, nil
	}
	var hd http.Handler = auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(streamable)
	if opts.Unix {
		next := hd
		hd = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") == "" {
				r = r.Clone(r.Context())
				r.Header.Set("Authorization", "Bearer "+opts.Operator)
			}
			next.ServeHTTP(w, r)
		})
	}
	h.handler = hd
	return h
}

// identityKey is where a session's Identity is in its token's Extra.
const identityKey = "party.identity"

func (h *HTTP) server(r *http.Request) *sdk.Server {
	ti := auth.TokenInfoFromContext(r.Context())
	if ti == nil {
		return nil // RequireBearerToken lets nothing through without one
	}
	id, _ := ti.Extra[identityKey].(Identity)
	h.mu.Lock()
	defer h.mu.Unlock()
	srv, ok := h.servers[id.key()]
	if !ok {
		// The SDK asks at every request; the server is made once.
		srv = h.opts.Server(id).srv
		srv.AddReceivingMiddleware(h.cancelOnStop)
		h.servers[id.key()] = srv
	}
	return srv
}

// cancelOnStop cancels a call when Serve stops, or when the client of
// the POST that holds it left (callHeader).
func (h *HTTP) cancelOnStop(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		h.mu.Lock()
		stopping := h.stopping
		var key string
		if extra := req.GetExtra(); extra != nil && extra.Header != nil {
			key = extra.Header.Get(callHeader)
		}
		if p := h.posts[key]; p != nil {
			if !p.left.IsZero() {
				cancel()
			}
			p.cancels = append(p.cancels, cancel)
		}
		h.mu.Unlock()
		defer context.AfterFunc(stopping, cancel)()
		return next(ctx, method, req)
	}
}

// ServeHTTP answers one request. A POST's calls are cancelled when its
// client leaves before they end (callHeader).
func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		h.handler.ServeHTTP(w, r)
		return
	}
	key := rand.Text()
	r = r.Clone(r.Context())
	r.Header.Set(callHeader, key)
	h.mu.Lock()
	h.posts[key] = &post{}
	h.mu.Unlock()
	h.handler.ServeHTTP(w, r)
	// The request's context ends here only when its client left: the
	// server ends it after this returns.
	left := r.Context().Err() != nil
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	for k, p := range h.posts {
		if !p.left.IsZero() && now.Sub(p.left) > leftPostsKept {
			delete(h.posts, k)
		}
	}
	p := h.posts[key]
	if !left {
		delete(h.posts, key)
		return
	}
	for _, cancel := range p.cancels {
		cancel()
	}
	p.left = now
}

// Serve answers on ln until ctx ends; then it closes every session, and
// returns once the calls in flight have ended (a talk cancelled so is
// taken back first). Serve closes ln.
func (h *HTTP) Serve(ctx context.Context, ln net.Listener, logf func(string, ...any)) error {
	h.mu.Lock()
	h.stopping = ctx
	h.mu.Unlock()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, MaxHeaderBytes: 64 << 10,
		ErrorLog: log.New(supervise.LogWriter(logf), "", 0)}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	h.mu.Lock()
	var sessions []*sdk.ServerSession
	for _, s := range h.servers {
		for ss := range s.Sessions() {
			sessions = append(sessions, ss)
		}
	}
	h.mu.Unlock()
	for _, ss := range sessions {
		_ = ss.Close()
	}
	for _, ss := range sessions {
		_ = ss.Wait()
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// OperatorToken is the operator's bearer token for party mcp over HTTP,
// kept in the file path (0600), made on first use.
func OperatorToken(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	tok := state.NewToken()
	return tok, state.WriteFile(path, []byte(tok+"\n"), 0o600)
}
