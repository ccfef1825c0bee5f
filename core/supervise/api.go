package supervise

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"path"
	"reflect"
	"strings"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/state"
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
//	POST /v1/messages                MessageRequest → 201 Message (the one of its id when recorded already)
//	POST /v1/outbox                  OutboundRequest → 201 Outbound (200 when the id existed)
//	GET  /v1/outbox                  ?thread= → 200 {"outbox": [Outbound…]}
//	POST /v1/inbox/read              ReadRequest → 200 {"messages": [Message…]} (marked read)
//	GET  /v1/threads/{id}/messages   → 200 {"messages": [Message…]}
//	POST /v1/threads/{id}/unblock    → 200 Thread
//	POST /v1/heartbeat               HeartbeatRequest → 200 {"ok": true}
//	POST /v1/talks                   TalkRecord → 200 {"ok": true} (recorded in the audit)
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
	// Clock times a long poll's ?wait=; nil is clock.Real.
	Clock clock.Clock
}

// RuntimeTokenHeader is the header of a runtime's token.
const RuntimeTokenHeader = "X-Party-Runtime-Token"

// OperatorHeader names the operator making a call (Caller.Name): a label
// for the audit that only the operator may give (whoever reaches the API
// as the operator is one), refused with a runtime's token.
const OperatorHeader = "X-Party-Operator"

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
	mux.HandleFunc("POST /v1/outbox", s.handle(s.outsend))
	mux.HandleFunc("GET /v1/outbox", s.handle(s.outbox))
	mux.HandleFunc("POST /v1/inbox/read", s.handle(s.read))
	mux.HandleFunc("GET /v1/threads/{id}/messages", s.handle(s.messages))
	mux.HandleFunc("POST /v1/threads/{id}/unblock", s.handle(s.unblock))
	mux.HandleFunc("POST /v1/heartbeat", s.handle(s.heartbeat))
	mux.HandleFunc("POST /v1/talks", s.handle(s.talked))
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
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The scheme is case-insensitive (RFC 7235, section 2.1).
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || !state.SameToken(got, s.Token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="party"`)
			s.fail(w, errUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
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

// caller is who makes the call, from its runtime token alone, with the
// operator's name when it gave one.
func (s *Server) caller(r *http.Request) (Caller, error) {
	c, err := s.Service.Caller(r.Context(), r.Header.Get(RuntimeTokenHeader))
	name := r.Header.Get(OperatorHeader)
	if err != nil || name == "" {
		return c, err
	}
	if !c.Operator() {
		return c, fmt.Errorf("%s is the operator's, not a runtime's: %w", OperatorHeader, ErrBadInput)
	}
	if err := CheckID("operator name", name); err != nil {
		return c, err
	}
	c.Name = name
	return c, nil
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
