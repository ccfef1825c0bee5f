package supervise

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Server is the supervisor's HTTP+JSON API over a Service: on a unix
// socket only its owner can open, or on a loopback TCP address with a
// bearer token.
//
// Routes:
//
//	POST /v1/triggers                TriggerRequest → 201 Trigger (200 when the id existed)
//	GET  /v1/triggers                ?status= &role= &thread= &open=1 &limit= → 200 {"triggers": [Trigger…]}
//	GET  /v1/triggers/{id}           ?wait=D → 200 Trigger (with wait: once over, or after D)
//	GET  /v1/events                  ?after=SEQ &limit= &wait=D → 200 {"events": [AuditEvent…]}
//	GET  /v1/runtimes                → 200 {"runtimes": [Runtime…]}
//	POST /v1/messages                MessageRequest → 201 Message
//	POST /v1/inbox/read              ReadRequest → 200 {"messages": [Message…]} (marked read)
//	GET  /v1/threads/{id}/messages   → 200 {"messages": [Message…]}
//	POST /v1/threads/{id}/unblock    → 200 Thread
//	POST /v1/heartbeat               HeartbeatRequest → 200 {"ok": true}
//	POST /v1/runtimes/{role}/stop    StopRequest → 200 Runtime (once its agent ended)
//	GET  /v1/health                  → 200 {"ok": true}
//	GET  /metrics                    → the Prometheus metrics
//
// A ?wait= long poll answers at the first change of the store that meets
// it (Service.Changed), never later than MaxWait.
//
// A call carrying X-Party-Runtime-Token is a runtime's: who it is comes
// from that token only (Service.Caller), never from the body, and what it
// may do from the one table Rules, as at the party command. Errors are
// {"error": {"code": …, "message": …}} with the status and code of
// HTTPStatus.
type Server struct {
	Service Service
	Metrics *Metrics
	// Token is the bearer token a TCP listener requires
	// (Authorization: Bearer <Token>); with no Token, TCP answers 401 to
	// everything.
	Token string
	// MaxBody is the largest request body taken (413 beyond); 0 is 1 MiB.
	MaxBody int64
	// Logf logs the server's failures (500s, the http.Server's errors);
	// nil logs them through the log package.
	Logf func(format string, args ...any)
}

// RuntimeTokenHeader is the header of a runtime's token.
const RuntimeTokenHeader = "X-Party-Runtime-Token"

// DefaultMaxBody is the request body limit when Server.MaxBody is 0.
const DefaultMaxBody = 1 << 20

// readTimeout bounds the reading of a whole request: a body of
// DefaultMaxBody over a local socket takes milliseconds, so a body cut
// short of its Content-Length is answered 400 after this long.
const readTimeout = 10 * time.Second

// The API's own errors, which HTTPStatus maps with the Service's.
var (
	errBadJSON      = fmt.Errorf("%w: bad JSON", ErrBadInput)
	errTooLarge     = fmt.Errorf("%w: request body too large", ErrBadInput)
	errUnauthorized = errors.New("missing or wrong bearer token")
	errNoRoute      = fmt.Errorf("%w: no such route", ErrNotFound)
	errMethod       = errors.New("method not allowed")
)

// apiErrors is the one table of the API's errors: what an error answers
// with (first match), and the sentinel a Client's *APIError unwraps to
// (the first row of its code that has one).
var apiErrors = []struct {
	err    error
	status int
	code   string
}{
	{errUnauthorized, http.StatusUnauthorized, "UNAUTHORIZED"},
	{errMethod, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED"},
	{errTooLarge, http.StatusRequestEntityTooLarge, "TOO_LARGE"},
	{errBadJSON, http.StatusBadRequest, "BAD_JSON"},
	{ErrToken, http.StatusForbidden, "BAD_TOKEN"},
	{ErrForbidden, http.StatusForbidden, "FORBIDDEN"},
	{ErrBlocked, http.StatusConflict, "THREAD_AUTO_BLOCKED"},
	{ErrIDConflict, http.StatusConflict, "CONFLICT"},
	{ErrUnmanaged, http.StatusConflict, "FALLBACK_REQUIRED"},
	{ErrNotFound, http.StatusNotFound, "NOT_FOUND"},
	{ErrBadInput, http.StatusBadRequest, "BAD_REQUEST"},
	{ErrNotRunning, http.StatusServiceUnavailable, "NOT_RUNNING"},
}

// HTTPStatus is the status and code the API answers err with. An
// *APIError (an answer the Client got) keeps its own.
func HTTPStatus(err error) (status int, code string) {
	var api *APIError
	switch {
	case err == nil:
		return http.StatusOK, ""
	case errors.As(err, &api):
		return api.Status, api.Code
	}
	for _, e := range apiErrors {
		if errors.Is(err, e.err) {
			return e.status, e.code
		}
	}
	return http.StatusInternalServerError, "INTERNAL"
}

// sentinelOf is the package error an answer's code stands for, or nil.
func sentinelOf(code string) error {
	for _, e := range apiErrors {
		if e.code != code {
			continue
		}
		for _, s := range []error{ErrToken, ErrForbidden, ErrBlocked, ErrIDConflict, ErrUnmanaged, ErrNotFound, ErrBadInput, ErrNotRunning} {
			if errors.Is(e.err, s) {
				return s
			}
		}
	}
	return nil
}

// errorBody is the shape of every error answer.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Handler is the API's handler; tcp requires the bearer token on every
// route.
func (s *Server) Handler(tcp bool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/triggers", s.handle(s.submit))
	mux.HandleFunc("GET /v1/triggers", s.handle(s.triggers))
	mux.HandleFunc("GET /v1/triggers/{id}", s.handle(s.trigger))
	mux.HandleFunc("GET /v1/events", s.handle(s.events))
	mux.HandleFunc("GET /v1/runtimes", s.handle(s.runtimes))
	mux.HandleFunc("POST /v1/messages", s.handle(s.send))
	mux.HandleFunc("POST /v1/inbox/read", s.handle(s.read))
	mux.HandleFunc("GET /v1/threads/{id}/messages", s.handle(s.messages))
	mux.HandleFunc("POST /v1/threads/{id}/unblock", s.handle(s.unblock))
	mux.HandleFunc("POST /v1/heartbeat", s.handle(s.heartbeat))
	mux.HandleFunc("POST /v1/runtimes/{role}/stop", s.handle(s.stop))
	mux.HandleFunc("GET /v1/health", func(w http.ResponseWriter, r *http.Request) {
		writeAnswer(w, http.StatusOK, map[string]bool{"ok": true})
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		if s.Metrics == nil {
			s.fail(w, fmt.Errorf("%w: this supervisor keeps no metrics", ErrNotFound))
			return
		}
		s.Metrics.Handler().ServeHTTP(w, r)
	})
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The mux would redirect a path that is not clean
		// (/v1/triggers/../x, //) to its clean form; the API names each
		// route one way and never redirects.
		if p := r.URL.Path; p != "/" && path.Clean(p) != strings.TrimSuffix(p, "/") {
			s.fail(w, fmt.Errorf("%w: the path %q is not in its clean form", errNoRoute, p))
			return
		}
		if _, pattern := mux.Handler(r); pattern == "" {
			// The mux's own answer: a redirect, or a 404 or 405 that
			// jsonErrors turns into our shape.
			w = &jsonErrors{ResponseWriter: w, s: s}
		}
		mux.ServeHTTP(w, r)
	})
	if tcp {
		h = s.bearer(h)
	}
	return h
}

// bearer lets through the requests with the right bearer token.
func (s *Server) bearer(next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(s.Token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The scheme is case-insensitive (RFC 7235, section 2.1).
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		ok := strings.EqualFold(scheme, "Bearer")
		// Hashes make the comparison constant-time whatever the lengths.
		sum := sha256.Sum256([]byte(got))
		if !ok || s.Token == "" || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="party"`)
			s.fail(w, errUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) submit(w http.ResponseWriter, r *http.Request, c Caller) (int, any, error) {
	var req TriggerRequest
	if err := s.decode(w, r, &req); err != nil {
		return 0, nil, err
	}
	t, created, err := s.Service.Submit(r.Context(), c, req)
	if err != nil {
		return 0, nil, err
	}
	w.Header().Set("Location", "/v1/triggers/"+url.PathEscape(t.ID))
	if created {
		return http.StatusCreated, t, nil
	}
	return http.StatusOK, t, nil
}

// trigger is one trigger; with ?wait=D it answers once the trigger is
// over, or after D (at most MaxWait) with it still open.
func (s *Server) trigger(w http.ResponseWriter, r *http.Request, c Caller) (int, any, error) {
	id := r.PathValue("id")
	var t Trigger
	err := s.longPoll(r, func() (bool, error) {
		var err error
		t, err = s.Service.Trigger(r.Context(), c, id)
		return err != nil || !t.Status.Open(), err
	})
	return http.StatusOK, t, err
}

// triggers lists the triggers: ?status=, ?role=, ?thread=, ?open=1,
// ?since= (RFC 3339), ?before=ID, ?limit= (the newest that many).
func (s *Server) triggers(w http.ResponseWriter, r *http.Request, c Caller) (int, any, error) {
	q := r.URL.Query()
	f := TriggerFilter{Role: q.Get("role"), Thread: q.Get("thread"), Open: q.Get("open") == "1", Before: q.Get("before")}
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return 0, nil, fmt.Errorf("%w: since=%q: want an RFC 3339 time", ErrBadInput, v)
		}
		f.Since = t
	}
	if v := q.Get("status"); v != "" {
		st, err := ParseTriggerStatus(v)
		if err != nil {
			return 0, nil, fmt.Errorf("%w: %w", ErrBadInput, err)
		}
		f.Status = st
	}
	var err error
	if f.Limit, err = queryInt(q, "limit"); err != nil {
		return 0, nil, err
	}
	ts, err := s.Service.Triggers(r.Context(), c, f)
	return http.StatusOK, struct {
		Triggers []Trigger `json:"triggers"`
	}{nonNil(ts)}, err
}

// events are the audit trail after ?after=SEQ, at most ?limit= (1000 when
// absent); with ?wait=D an empty answer waits up to D for the next.
func (s *Server) events(w http.ResponseWriter, r *http.Request, c Caller) (int, any, error) {
	q := r.URL.Query()
	after, err := queryInt(q, "after")
	if err != nil {
		return 0, nil, err
	}
	limit, err := queryInt(q, "limit")
	if err != nil {
		return 0, nil, err
	}
	if limit == 0 {
		limit = 1000
	}
	var evs []AuditEvent
	err = s.longPoll(r, func() (bool, error) {
		var err error
		evs, err = s.Service.Events(r.Context(), c, int64(after), limit)
		return err != nil || len(evs) > 0, err
	})
	return http.StatusOK, struct {
		Events []AuditEvent `json:"events"`
	}{nonNil(evs)}, err
}

func (s *Server) runtimes(w http.ResponseWriter, r *http.Request, c Caller) (int, any, error) {
	rs, err := s.Service.Runtimes(r.Context(), c)
	return http.StatusOK, struct {
		Runtimes []Runtime `json:"runtimes"`
	}{nonNil(rs)}, err
}

func (s *Server) send(w http.ResponseWriter, r *http.Request, c Caller) (int, any, error) {
	var req MessageRequest
	if err := s.decode(w, r, &req); err != nil {
		return 0, nil, err
	}
	m, err := s.Service.Send(r.Context(), c, req)
	return http.StatusCreated, m, err
}

// read is the calling runtime's unread messages, marked read.
func (s *Server) read(w http.ResponseWriter, r *http.Request, c Caller) (int, any, error) {
	var req ReadRequest
	if err := s.decode(w, r, &req); err != nil {
		return 0, nil, err
	}
	msgs, err := s.Service.Read(r.Context(), c, req.Thread)
	return http.StatusOK, messages{nonNil(msgs)}, err
}

// messages are a thread's messages.
func (s *Server) messages(w http.ResponseWriter, r *http.Request, c Caller) (int, any, error) {
	msgs, err := s.Service.Messages(r.Context(), c, r.PathValue("id"))
	return http.StatusOK, messages{nonNil(msgs)}, err
}

type messages struct {
	Messages []Message `json:"messages"`
}

func (s *Server) heartbeat(w http.ResponseWriter, r *http.Request, c Caller) (int, any, error) {
	var req HeartbeatRequest
	if err := s.decode(w, r, &req); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]bool{"ok": true}, s.Service.Heartbeat(r.Context(), c, req.Status)
}

// stop stops a runtime (the operator's call: Rules).
func (s *Server) stop(w http.ResponseWriter, r *http.Request, c Caller) (int, any, error) {
	var req StopRequest
	if err := s.decode(w, r, &req); err != nil {
		return 0, nil, err
	}
	var grace time.Duration
	if req.Grace != "" {
		d, err := time.ParseDuration(req.Grace)
		if err != nil || d < 0 || d > MaxWait {
			return 0, nil, fmt.Errorf("%w: grace %q: want a duration such as 5s, at most %s", ErrBadInput, req.Grace, MaxWait)
		}
		grace = d
	}
	rt, err := s.Service.Stop(r.Context(), c, r.PathValue("role"), grace)
	return http.StatusOK, rt, err
}

// unblock lets a blocked thread go on (the operator's call: Rules).
func (s *Server) unblock(w http.ResponseWriter, r *http.Request, c Caller) (int, any, error) {
	th, err := s.Service.Unblock(r.Context(), c, r.PathValue("id"))
	return http.StatusOK, th, err
}

// MaxWait bounds a long poll's ?wait=: a client's answer comes within it.
const MaxWait = 50 * time.Second

// longPoll calls look until it says done, or the request's ?wait=
// duration (none: once) has passed, waking at each change of the
// Service, never on a timer.
func (s *Server) longPoll(r *http.Request, look func() (done bool, err error)) error {
	var wait time.Duration
	if v := r.URL.Query().Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("%w: wait=%q: want a duration such as 30s", ErrBadInput, v)
		}
		wait = min(d, MaxWait)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		changed := s.Service.Changed()
		done, err := look()
		if done || err != nil || wait == 0 {
			return err
		}
		select {
		case <-changed:
		case <-timer.C:
			return nil
		case <-r.Context().Done():
			return r.Context().Err()
		}
	}
}

// queryInt is the query's non-negative integer key, 0 when absent.
func queryInt(q url.Values, key string) (int, error) {
	v := q.Get(key)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: %s=%q: want a whole number", ErrBadInput, key, v)
	}
	return n, nil
}

// nonNil is items, an empty list for none (JSON [] rather than null).
func nonNil[T any](items []T) []T {
	if items == nil {
		return []T{}
	}
	return items
}

// handle answers a route: who makes the call (from its runtime token
// alone), then what f answers, or its error in the error shape.
func (s *Server) handle(f func(w http.ResponseWriter, r *http.Request, c Caller) (int, any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := s.caller(r)
		if err != nil {
			s.fail(w, err)
			return
		}
		status, v, err := f(w, r, c)
		if err != nil && r.Context().Err() != nil {
			return // the caller left (a long poll given up): nobody to answer
		}
		if err != nil {
			s.fail(w, err)
			return
		}
		writeAnswer(w, status, v)
	}
}

// caller is who makes the call, from its runtime token alone.
func (s *Server) caller(r *http.Request) (Caller, error) {
	return s.Service.Caller(r.Context(), r.Header.Get(RuntimeTokenHeader))
}

// decode reads the body's one JSON value into v: no unknown field, no key
// in another case than its field's (encoding/json alone would take
// "TEXT" for "text"), nothing after it, no more than MaxBody bytes.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	max := s.MaxBody
	if max <= 0 {
		max = DefaultMaxBody
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		return bodyError(err, max)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%w: empty body", errBadJSON)
		}
		return fmt.Errorf("%w: %v", errBadJSON, err)
	}
	var extra json.RawMessage
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err == nil:
		return fmt.Errorf("%w: more than one JSON value in the body", errBadJSON)
	default:
		return fmt.Errorf("%w: data after the JSON value", errBadJSON)
	}
	return exactKeys(body, v)
}

// exactKeys says which key of the JSON object body names a field of the
// struct v points to in another case than the field's own.
func exactKeys(body []byte, v any) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &keys); err != nil {
		return fmt.Errorf("%w: %v", errBadJSON, err)
	}
	known := map[string]bool{}
	t := reflect.TypeOf(v).Elem()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		known[name] = true
	}
	for k := range keys {
		if !known[k] {
			return fmt.Errorf("%w: unknown field %q (keys are matched exactly)", errBadJSON, k)
		}
	}
	return nil
}

// bodyError is why a body could not be read: too large, or cut short or
// too slow. The network error itself names the API's socket and stays in
// the daemon's log.
func bodyError(err error, max int64) error {
	var big *http.MaxBytesError
	if errors.As(err, &big) {
		return fmt.Errorf("%w: over %d bytes", errTooLarge, max)
	}
	return fmt.Errorf("%w: the body ended before its Content-Length, or did not come within the read timeout (%s)", errBadJSON, readTimeout)
}

// fail answers err in the error shape.
func (s *Server) fail(w http.ResponseWriter, err error) {
	status, code := HTTPStatus(err)
	if status >= 500 {
		s.logf("supervisor API: %d %s: %v", status, code, err)
	}
	var b errorBody
	b.Error.Code, b.Error.Message = code, err.Error()
	writeAnswer(w, status, b)
}

func (s *Server) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
		return
	}
	log.Printf(format, args...)
}

func writeAnswer(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Del("Content-Length")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// jsonErrors turns the mux's plain-text 404 and 405 into the API's error
// shape (keeping its Allow header); anything else goes through.
type jsonErrors struct {
	http.ResponseWriter
	s        *Server
	replaced bool
}

func (j *jsonErrors) WriteHeader(status int) {
	switch status {
	case http.StatusNotFound:
		j.replaced = true
		j.s.fail(j.ResponseWriter, errNoRoute)
	case http.StatusMethodNotAllowed:
		j.replaced = true
		j.s.fail(j.ResponseWriter, errMethod)
	default:
		j.ResponseWriter.WriteHeader(status)
	}
}

func (j *jsonErrors) Write(p []byte) (int, error) {
	if j.replaced {
		return len(p), nil
	}
	return j.ResponseWriter.Write(p)
}

// Serve answers on ln until ctx ends, then shuts down (letting the calls
// under way finish for a few seconds) and returns nil. tcp requires the
// bearer token. Serve closes ln (a ListenUnix socket's file goes with it).
func (s *Server) Serve(ctx context.Context, ln net.Listener, tcp bool) error {
	srv := &http.Server{
		Handler:           s.Handler(tcp),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       readTimeout,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(logWriter(s.logf), "", 0),
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.logf("api: %v", err)
	}
	return nil
}

// logWriter sends the http.Server's log lines to logf.
type logWriter func(format string, args ...any)

func (f logWriter) Write(p []byte) (int, error) {
	f("%s", strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// ListenUnix listens on the unix socket path, which only its owner can
// open (0600, whatever the umask). A socket file left at path by a process
// gone is replaced; a socket someone answers on is ErrRunning; any other
// file there is an error and stays. The parent directory must exist.
// Closing the listener removes the socket.
func ListenUnix(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("supervisor socket %s: %w", path, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("supervisor socket %s: %s is not a directory", path, dir)
	}
	if err := removeStale(path); err != nil {
		return nil, err
	}
	// Bind in a private directory, make the socket 0600, then link it to
	// path: nobody else can connect before its mode is set, and a file
	// that appeared at path meanwhile is not clobbered.
	tmp, err := os.MkdirTemp(dir, ".sv")
	if err != nil {
		return nil, fmt.Errorf("supervisor socket %s: %w", path, err)
	}
	defer os.RemoveAll(tmp)
	bound := filepath.Join(tmp, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: bound, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("supervisor socket %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(false)
	fail := func(err error) (net.Listener, error) {
		ln.Close()
		return nil, fmt.Errorf("supervisor socket %s: %w", path, err)
	}
	if err := os.Chmod(bound, 0o600); err != nil {
		return fail(err)
	}
	if err := os.Link(bound, path); err != nil {
		return fail(err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fail(err)
	}
	return &unixListener{UnixListener: ln, path: path, fi: fi}, nil
}

// removeStale removes the socket at path if nobody answers on it.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("supervisor socket %s: %w", path, err)
	}
	if fi.Mode().Type() != os.ModeSocket {
		return fmt.Errorf("supervisor socket %s: a file that is not a socket is there (%s); not removing it", path, fi.Mode().Type())
	}
	conn, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		conn.Close()
		return fmt.Errorf("supervisor socket %s: %w (something answers on it)", path, ErrRunning)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("supervisor socket %s: is it stale? %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("supervisor socket %s: removing the stale socket: %w", path, err)
	}
	return nil
}

// unixListener is ListenUnix's listener: its address is path, and closing
// it removes path if path is still its socket.
type unixListener struct {
	*net.UnixListener
	path string
	fi   os.FileInfo
	once sync.Once
}

func (l *unixListener) Addr() net.Addr { return &net.UnixAddr{Name: l.path, Net: "unix"} }

func (l *unixListener) Close() error {
	err := l.UnixListener.Close()
	l.once.Do(func() {
		if fi, e := os.Lstat(l.path); e == nil && os.SameFile(fi, l.fi) {
			os.Remove(l.path)
		}
	})
	return err
}

// ListenTCP listens on addr, which must be a loopback address:
// 127.0.0.0/8, ::1 or localhost (which is 127.0.0.1). Any other host, and
// no host (every interface), is ErrBadInput.
func ListenTCP(addr string) (net.Listener, error) {
	hostport, err := CheckListen(addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", hostport)
	if err != nil {
		return nil, fmt.Errorf("supervisor address %q: %w", addr, err)
	}
	return ln, nil
}

// CheckListen says whether addr is a loopback HOST:PORT the API may listen
// on, and returns it as it is bound (localhost is 127.0.0.1, never looked
// up); else an error wrapping ErrBadInput.
func CheckListen(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("supervisor address %q: %v: %w", addr, err, ErrBadInput)
	}
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	} else if ip, err := netip.ParseAddr(host); err != nil || !ip.Unmap().IsLoopback() || ip.Zone() != "" {
		return "", fmt.Errorf("supervisor address %q: the API listens on TCP on a loopback address only (127.0.0.0/8, ::1, localhost): %w", addr, ErrBadInput)
	}
	return net.JoinHostPort(host, port), nil
}
