package supervise

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// apiFake is a Service over maps. The token "tok-worker" is the
// runtime worker's; the role "ghost" does not exist, "human" is
// unmanaged; the thread "stuck" is blocked.
type apiFake struct {
	mu       sync.Mutex
	triggers map[string]Trigger
	seq      int64
	submits  []TriggerRequest
	callers  []Caller // the callers Submit saw
	sends    []Caller // the callers Send saw
	messages []MessageRequest
	tokens   []string // the tokens Caller saw
}

func newAPIFake() *apiFake { return &apiFake{triggers: map[string]Trigger{}} }

func (f *apiFake) Submit(_ context.Context, c Caller, req TriggerRequest) (Trigger, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.submits = append(f.submits, req)
	f.callers = append(f.callers, c)
	switch {
	case req.Text == "":
		return Trigger{}, false, fmt.Errorf("empty text: %w", ErrBadInput)
	case req.Role == "ghost":
		return Trigger{}, false, fmt.Errorf("role %q: %w", req.Role, ErrNotFound)
	case req.Role == "human":
		return Trigger{}, false, fmt.Errorf("role %q: %w", req.Role, ErrUnmanaged)
	case req.Thread == "stuck":
		return Trigger{}, false, fmt.Errorf("thread %q: %w", req.Thread, ErrBlocked)
	case req.Role == "boom":
		return Trigger{}, false, errors.New("disk on fire")
	}
	if req.ID == "" {
		req.ID = fmt.Sprintf("t%d", len(f.triggers)+1)
	}
	if t, ok := f.triggers[req.ID]; ok {
		if t.Text != req.Text || t.Role != req.Role {
			return Trigger{}, false, fmt.Errorf("trigger %s: %w", req.ID, ErrIDConflict)
		}
		return t, false, nil
	}
	thread := req.Thread
	if thread == "" {
		thread = "default"
	}
	t := Trigger{ID: req.ID, Role: req.Role, Thread: thread, Reason: req.Reason, Text: req.Text, Status: Queued,
		Force: req.Force, Actor: req.Actor, Why: req.Why, Created: time.Unix(1700000000, 0).UTC()}
	f.triggers[t.ID] = t
	return t, true, nil
}

func (f *apiFake) Trigger(_ context.Context, _ Caller, id string) (Trigger, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.triggers[id]
	if !ok {
		return Trigger{}, fmt.Errorf("trigger %s: %w", id, ErrNotFound)
	}
	return t, nil
}

func (f *apiFake) Runtimes(context.Context, Caller) ([]Runtime, error) {
	return []Runtime{{ID: "s/worker", Role: "worker", Workspace: "/w", Agent: "claude", Status: Ready, Target: "s:1.0"}}, nil
}

func (f *apiFake) Send(_ context.Context, c Caller, req MessageRequest) (Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sends = append(f.sends, c)
	f.messages = append(f.messages, req)
	if req.Thread == "stuck" {
		return Message{}, fmt.Errorf("thread %s: %w", req.Thread, ErrBlocked)
	}
	from := req.From
	if c.Runtime != "" {
		from = c.Runtime
	}
	f.seq++
	return Message{Seq: f.seq, Thread: req.Thread, From: from, To: req.To, Text: req.Text}, nil
}

// Outsend records req in the outbox, from the caller's runtime when it
// has one.
func (f *apiFake) Outsend(_ context.Context, c Caller, req OutboundRequest) (Outbound, bool, error) {
	from := req.From
	if c.Runtime != "" {
		from = c.Runtime
	}
	return Outbound{ID: req.ID, Thread: req.Thread, From: from, Role: req.To, Text: req.Text, Forward: Forward{Host: req.Host, State: FwdPending}}, true, nil
}

func (f *apiFake) Outbox(_ context.Context, _ Caller, _ string) ([]Outbound, error) { return nil, nil }

func (f *apiFake) Unblock(_ context.Context, _ Caller, thread string) (Thread, error) {
	if thread != "blocked" {
		return Thread{}, fmt.Errorf("thread %s: %w", thread, ErrNotFound)
	}
	return Thread{ID: thread}, nil
}

func (f *apiFake) Triggers(context.Context, Caller, TriggerFilter) ([]Trigger, error) {
	return nil, errNotInFake
}

func (f *apiFake) Events(context.Context, Caller, int64, int) ([]AuditEvent, error) {
	return nil, errNotInFake
}

func (f *apiFake) Read(context.Context, Caller, string) ([]Message, error) { return nil, errNotInFake }

func (f *apiFake) Messages(context.Context, Caller, string) ([]Message, error) {
	return nil, errNotInFake
}

func (f *apiFake) Heartbeat(context.Context, Caller, string) error { return errNotInFake }

func (f *apiFake) Talked(context.Context, Caller, TalkRecord) error { return errNotInFake }

func (f *apiFake) Changed() <-chan struct{} { return nil }

func (f *apiFake) Stop(context.Context, Caller, string, time.Duration) (Runtime, error) {
	return Runtime{}, errNotInFake
}

// errNotInFake answers what the fake does not do (accessOps serves the
// real Ops for those).
var errNotInFake = fmt.Errorf("not in the fake: %w", ErrNotFound)

func (f *apiFake) Caller(_ context.Context, token string) (Caller, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens = append(f.tokens, token)
	switch token {
	case "":
		return Caller{}, nil
	case "tok-worker":
		return Caller{Runtime: "worker"}, nil
	}
	return Caller{}, fmt.Errorf("runtime token: %w", ErrToken)
}

// sockDir is a directory short enough for unix sockets, removed with
// the test.
func sockDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "sv")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// serve runs s on ln until the test ends, and checks Serve returned nil.
func serveAPI(t *testing.T, s *Server, ln net.Listener, tcp bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln, tcp) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after its context ended")
		}
	})
}

// unixServer serves a fake service on a socket and returns the socket's
// path, the service and a client of it.
func unixServer(t *testing.T) (string, *apiFake, *Server, *Client) {
	t.Helper()
	path := filepath.Join(sockDir(t), "api.sock")
	ln, err := ListenUnix(path)
	require.NoError(t, err)
	f := newAPIFake()
	s := &Server{Service: f, Metrics: NewMetrics(), Logf: t.Logf}
	serveAPI(t, s, ln, false)
	c := NewUnixClient(path)
	t.Cleanup(c.HTTP.CloseIdleConnections)
	return path, f, s, c
}

// call makes a raw request through c's transport and returns the status,
// the header and the body.
func apiCall(t *testing.T, c *Client, method, path, body string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, c.Base+path, strings.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.HTTP.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(b)
}

// apiErrorCode checks an error answer's shape and returns its code.
func apiErrorCode(t *testing.T, h http.Header, body string) string {
	t.Helper()
	assert.Equal(t, "application/json", h.Get("Content-Type"))
	var e struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&e), body)
	require.NotNil(t, e.Error, body)
	assert.NotEmpty(t, e.Error.Message, body)
	return e.Error.Code
}

func TestRoutes(t *testing.T) {
	_, f, _, c := unixServer(t)

	status, h, body := apiCall(t, c, "POST", "/v1/triggers", `{"id":"a1","role":"worker","text":"hello"}`)
	require.Equal(t, http.StatusCreated, status, body)
	assert.Equal(t, "application/json", h.Get("Content-Type"))
	assert.Equal(t, "/v1/triggers/a1", h.Get("Location"))
	var tr Trigger
	require.NoError(t, json.Unmarshal([]byte(body), &tr))
	assert.Equal(t, "a1", tr.ID)
	assert.Equal(t, Queued, tr.Status)
	assert.Equal(t, "default", tr.Thread)

	// The same id again is the recorded trigger, 200.
	status, _, body = apiCall(t, c, "POST", "/v1/triggers", `{"id":"a1","role":"worker","text":"hello"}`)
	require.Equal(t, http.StatusOK, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), &tr))
	assert.Equal(t, "a1", tr.ID)

	status, _, body = apiCall(t, c, "GET", "/v1/triggers/a1", "")
	require.Equal(t, http.StatusOK, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), &tr))
	assert.Equal(t, "hello", tr.Text)

	status, _, body = apiCall(t, c, "GET", "/v1/runtimes", "")
	require.Equal(t, http.StatusOK, status, body)
	var rs struct {
		Runtimes []Runtime `json:"runtimes"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &rs))
	require.Len(t, rs.Runtimes, 1)
	assert.Equal(t, "worker", rs.Runtimes[0].Role)

	status, _, body = apiCall(t, c, "POST", "/v1/messages", `{"thread_id":"th","to":"worker","from":"bridge","text":"hi"}`)
	require.Equal(t, http.StatusCreated, status, body)
	var m Message
	require.NoError(t, json.Unmarshal([]byte(body), &m))
	assert.Equal(t, "bridge", m.From)
	assert.Equal(t, []Caller{{}}, f.sends, "no runtime token: the operator")

	status, _, body = apiCall(t, c, "GET", "/v1/health", "")
	require.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"ok":true}`, body)

	status, _, body = apiCall(t, c, "POST", "/v1/threads/blocked/unblock", "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"thread_id":"blocked"`)
	status, _, body = apiCall(t, c, "POST", "/v1/threads/nope/unblock", "")
	require.Equal(t, http.StatusNotFound, status, body)

	status, h, body = apiCall(t, c, "GET", "/metrics", "")
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, h.Get("Content-Type"), "text/plain")
	assert.Contains(t, body, "go_goroutines")
}

func TestErrorAnswers(t *testing.T) {
	_, f, s, c := unixServer(t)
	s.MaxBody = 256
	big := `{"role":"worker","text":"` + strings.Repeat("x", 300) + `"}`
	_, _, _ = apiCall(t, c, "POST", "/v1/triggers", `{"id":"a1","role":"worker","text":"one"}`)

	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"bad JSON", "POST", "/v1/triggers", `{"role":`, 400, "BAD_JSON"},
		{"wrong type", "POST", "/v1/triggers", `{"role":3,"text":"x"}`, 400, "BAD_JSON"},
		{"empty body", "POST", "/v1/triggers", ``, 400, "BAD_JSON"},
		{"unknown field", "POST", "/v1/triggers", `{"role":"worker","text":"x","runtime":"worker"}`, 400, "BAD_JSON"},
		{"key in another case", "POST", "/v1/triggers", `{"role":"worker","TEXT":"x"}`, 400, "BAD_JSON"},
		{"message key in another case", "POST", "/v1/messages", `{"To":"worker","text":"x"}`, 400, "BAD_JSON"},
		{"unclean path", "GET", "/v1/triggers/../triggers/a1", "", 404, "NOT_FOUND"},
		{"doubled slash", "GET", "/v1//runtimes", "", 404, "NOT_FOUND"},
		{"trailing data", "POST", "/v1/triggers", `{"role":"worker","text":"x"} junk`, 400, "BAD_JSON"},
		{"second value", "POST", "/v1/triggers", `{"role":"worker","text":"x"}{}`, 400, "BAD_JSON"},
		{"message trailing data", "POST", "/v1/messages", `{"to":"worker","text":"x"}]`, 400, "BAD_JSON"},
		{"too large", "POST", "/v1/triggers", big, 413, "TOO_LARGE"},
		{"message too large", "POST", "/v1/messages", big, 413, "TOO_LARGE"},
		{"bad input", "POST", "/v1/triggers", `{"role":"worker","text":""}`, 400, "BAD_REQUEST"},
		{"unknown role", "POST", "/v1/triggers", `{"role":"ghost","text":"x"}`, 404, "NOT_FOUND"},
		{"unmanaged", "POST", "/v1/triggers", `{"role":"human","text":"x"}`, 409, "FALLBACK_REQUIRED"},
		{"id conflict", "POST", "/v1/triggers", `{"id":"a1","role":"worker","text":"two"}`, 409, "CONFLICT"},
		{"blocked", "POST", "/v1/messages", `{"thread_id":"stuck","to":"worker","text":"x"}`, 409, "THREAD_AUTO_BLOCKED"},
		{"internal", "POST", "/v1/triggers", `{"role":"boom","text":"x"}`, 500, "INTERNAL"},
		{"bad since", "GET", "/v1/triggers?since=yesterday", "", 400, "BAD_REQUEST"},
		{"bad limit", "GET", "/v1/triggers?limit=-2", "", 400, "BAD_REQUEST"},
		{"unknown id", "GET", "/v1/triggers/nope", "", 404, "NOT_FOUND"},
		{"unknown route", "GET", "/v1/nothing", "", 404, "NOT_FOUND"},
		{"wrong method", "DELETE", "/v1/triggers/a1", "", 405, "METHOD_NOT_ALLOWED"},
		{"GET a POST route", "GET", "/v1/messages", "", 405, "METHOD_NOT_ALLOWED"},
		{"POST a GET route", "POST", "/v1/runtimes", "{}", 405, "METHOD_NOT_ALLOWED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, h, body := apiCall(t, c, tc.method, tc.path, tc.body)
			assert.Equal(t, tc.status, status, body)
			assert.Equal(t, tc.code, apiErrorCode(t, h, body))
			if tc.status == 405 {
				assert.NotEmpty(t, h.Get("Allow"))
			}
			assert.Empty(t, h.Get("Location"), "the API never redirects")
		})
	}
	assert.Len(t, f.triggers, 1, "no failed call recorded a trigger")
}

func TestForgedRuntimeToken(t *testing.T) {
	_, f, _, c := unixServer(t)

	status, h, body := apiCall(t, c, "POST", "/v1/messages", `{"thread_id":"th","to":"boss","from":"worker","text":"x"}`,
		RuntimeTokenHeader, "tok-forged")
	assert.Equal(t, http.StatusForbidden, status)
	assert.Equal(t, "BAD_TOKEN", apiErrorCode(t, h, body))
	status, h, body = apiCall(t, c, "POST", "/v1/triggers", `{"role":"boss","text":"x"}`, RuntimeTokenHeader, "tok-forged")
	assert.Equal(t, http.StatusForbidden, status)
	assert.Equal(t, "BAD_TOKEN", apiErrorCode(t, h, body))
	assert.Empty(t, f.sends, "a forged token reaches no Send")
	assert.Empty(t, f.submits, "a forged token reaches no Submit")
	assert.Equal(t, []string{"tok-forged", "tok-forged"}, f.tokens)

	// The real token makes the call the runtime's, whatever the body says.
	status, _, body = apiCall(t, c, "POST", "/v1/messages", `{"thread_id":"th","to":"boss","from":"boss","text":"x"}`,
		RuntimeTokenHeader, "tok-worker")
	require.Equal(t, http.StatusCreated, status, body)
	assert.Equal(t, []Caller{{Runtime: "worker"}}, f.sends)
	status, _, body = apiCall(t, c, "POST", "/v1/triggers", `{"role":"boss","text":"x"}`,
		RuntimeTokenHeader, "tok-worker")
	require.Equal(t, http.StatusCreated, status, body)
	require.Len(t, f.submits, 1)
	assert.Equal(t, []Caller{{Runtime: "worker"}}, f.callers, "a trigger with a runtime's token is the runtime's")
}

func TestSocketMode(t *testing.T) {
	path, _, _, _ := unixServer(t)
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSocket, fi.Mode().Type())
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "nothing but the socket is left in its directory")
}

func TestSocketModeWhateverTheUmask(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	path := filepath.Join(sockDir(t), "open.sock")
	ln, err := ListenUnix(path)
	require.NoError(t, err)
	defer ln.Close()
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	assert.Equal(t, path, ln.Addr().String())
}

func TestDefaultBodyLimit(t *testing.T) {
	_, _, _, c := unixServer(t)
	text := strings.Repeat("x", DefaultMaxBody)
	status, h, body := apiCall(t, c, "POST", "/v1/triggers", `{"role":"worker","text":"`+text+`"}`)
	assert.Equal(t, http.StatusRequestEntityTooLarge, status)
	assert.Equal(t, "TOO_LARGE", apiErrorCode(t, h, body))
	status, _, body = apiCall(t, c, "POST", "/v1/triggers", `{"role":"worker","text":"`+text[:DefaultMaxBody-100]+`"}`)
	assert.Equal(t, http.StatusCreated, status, body[:min(len(body), 200)])
}

func TestListenUnix(t *testing.T) {
	dir := sockDir(t)

	t.Run("stale socket is replaced", func(t *testing.T) {
		path := filepath.Join(dir, "stale.sock")
		old, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
		require.NoError(t, err)
		old.SetUnlinkOnClose(false)
		require.NoError(t, old.Close()) // the file stays, nobody answers
		ln, err := ListenUnix(path)
		require.NoError(t, err)
		conn, err := net.Dial("unix", path)
		require.NoError(t, err)
		conn.Close()
		require.NoError(t, ln.Close())
		_, err = os.Lstat(path)
		assert.ErrorIs(t, err, os.ErrNotExist, "closing the listener removes its socket")
	})

	t.Run("live socket is kept", func(t *testing.T) {
		path := filepath.Join(dir, "live.sock")
		ln, err := ListenUnix(path)
		require.NoError(t, err)
		defer ln.Close()
		_, err = ListenUnix(path)
		assert.ErrorIs(t, err, ErrRunning)
		conn, err := net.Dial("unix", path)
		require.NoError(t, err, "the first listener still answers")
		conn.Close()
	})

	t.Run("a file that is not a socket stays", func(t *testing.T) {
		path := filepath.Join(dir, "file.sock")
		require.NoError(t, os.WriteFile(path, []byte("mine"), 0o600))
		_, err := ListenUnix(path)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not a socket")
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, "mine", string(b))
		require.NoError(t, os.Remove(path))
	})

	t.Run("the parent must exist", func(t *testing.T) {
		_, err := ListenUnix(filepath.Join(dir, "nodir", "x.sock"))
		assert.ErrorIs(t, err, os.ErrNotExist)
	})

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "no socket or temporary directory left behind")
}

func TestTCP(t *testing.T) {
	ln, err := ListenTCP("127.0.0.1:0")
	require.NoError(t, err)
	base := "http://" + ln.Addr().String()
	s := &Server{Service: newAPIFake(), Metrics: NewMetrics(), Token: "s3cret", Logf: t.Logf}
	serveAPI(t, s, ln, true)
	hc := &http.Client{Timeout: 10 * time.Second}
	t.Cleanup(hc.CloseIdleConnections)

	get := func(path, auth string) (int, http.Header, string) {
		req, err := http.NewRequest("GET", base+path, nil)
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := hc.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	for _, auth := range []string{"", "Bearer wrong", "Bearer s3cret2", "s3cret", "Basic s3cret", "Bearer "} {
		for _, path := range []string{"/v1/health", "/metrics", "/v1/runtimes", "/v1/nothing"} {
			status, h, body := get(path, auth)
			assert.Equal(t, http.StatusUnauthorized, status, "%s with %q", path, auth)
			assert.Equal(t, "UNAUTHORIZED", apiErrorCode(t, h, body))
			assert.Contains(t, h.Get("WWW-Authenticate"), "Bearer")
		}
	}
	status, _, body := get("/v1/health", "Bearer s3cret")
	assert.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"ok":true}`, body)
	// The scheme is case-insensitive (RFC 7235); the token is not.
	for _, auth := range []string{"bearer s3cret", "BEARER s3cret"} {
		status, _, body = get("/v1/health", auth)
		assert.Equal(t, http.StatusOK, status, "%q: %s", auth, body)
	}
	status, _, _ = get("/v1/health", "Bearer S3CRET")
	assert.Equal(t, http.StatusUnauthorized, status)

	// Through the client.
	c := &Client{HTTP: hc, Base: base, Token: "s3cret"}
	rs, err := c.Runtimes(context.Background())
	require.NoError(t, err)
	assert.Len(t, rs, 1)
	c.Token = "nope"
	_, err = c.Runtimes(context.Background())
	var api *APIError
	require.ErrorAs(t, err, &api)
	assert.Equal(t, http.StatusUnauthorized, api.Status)
	assert.Equal(t, "UNAUTHORIZED", api.Code)
}

func TestTCPWithoutTokenRefusesAll(t *testing.T) {
	h := (&Server{Service: newAPIFake()}).Handler(true)
	for _, auth := range []string{"", "Bearer ", "Bearer x"} {
		req, _ := http.NewRequest("GET", "/v1/health", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := &apiRecorder{header: http.Header{}}
		h.ServeHTTP(rec, req)
		assert.Equal(t, http.StatusUnauthorized, rec.status, "%q", auth)
	}
}

type apiRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *apiRecorder) Header() http.Header         { return r.header }
func (r *apiRecorder) Write(p []byte) (int, error) { return r.body.Write(p) }
func (r *apiRecorder) WriteHeader(s int)           { r.status = s }

func TestListenTCPLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0", "10.0.0.1:0", "example.com:0", "[::ffff:10.0.0.1]:0", "nonsense"} {
		ln, err := ListenTCP(addr)
		if ln != nil {
			ln.Close()
		}
		require.Error(t, err, addr)
		assert.ErrorIs(t, err, ErrBadInput, addr)
		assert.Contains(t, err.Error(), addr)
	}
	for _, addr := range []string{"127.0.0.1:0", "127.0.0.2:0", "localhost:0"} {
		ln, err := ListenTCP(addr)
		require.NoError(t, err, addr)
		ip := ln.Addr().(*net.TCPAddr).IP
		assert.True(t, ip.IsLoopback(), "%s listens on %s", addr, ip)
		ln.Close()
	}
	if ln, err := ListenTCP("[::1]:0"); err == nil { // a host without IPv6 cannot, which is fine
		assert.True(t, ln.Addr().(*net.TCPAddr).IP.IsLoopback())
		ln.Close()
	} else {
		assert.NotErrorIs(t, err, ErrBadInput)
	}
}

func TestClient(t *testing.T) {
	ctx := context.Background()
	_, f, _, c := unixServer(t)

	tr, created, err := c.Submit(ctx, TriggerRequest{ID: "c1", Role: "worker", Text: "do it"})
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, "c1", tr.ID)
	tr, created, err = c.Submit(ctx, TriggerRequest{ID: "c1", Role: "worker", Text: "do it"})
	require.NoError(t, err)
	assert.False(t, created, "the same id again is not created")
	assert.Equal(t, "do it", tr.Text)

	got, err := c.Trigger(ctx, "c1")
	require.NoError(t, err)
	assert.Equal(t, tr, got)
	_, err = c.Trigger(ctx, "a/b?c")
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = c.Trigger(ctx, "")
	assert.ErrorIs(t, err, ErrBadInput)

	rs, err := c.Runtimes(ctx)
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.Equal(t, "s:1.0", rs[0].Target)

	m, err := c.Send(ctx, MessageRequest{Thread: "th", To: "worker", From: "bridge", Text: "hi"})
	require.NoError(t, err)
	assert.Equal(t, "bridge", m.From)

	for _, tc := range []struct {
		req  TriggerRequest
		want error
		code string
	}{
		{TriggerRequest{Role: "ghost", Text: "x"}, ErrNotFound, "NOT_FOUND"},
		{TriggerRequest{Role: "human", Text: "x"}, ErrUnmanaged, "FALLBACK_REQUIRED"},
		{TriggerRequest{ID: "c1", Role: "worker", Text: "other"}, ErrIDConflict, "CONFLICT"},
		{TriggerRequest{Role: "worker", Thread: "stuck", Text: "x"}, ErrBlocked, "THREAD_AUTO_BLOCKED"},
		{TriggerRequest{Role: "worker"}, ErrBadInput, "BAD_REQUEST"},
	} {
		_, _, err := c.Submit(ctx, tc.req)
		assert.ErrorIs(t, err, tc.want, tc.code)
		var api *APIError
		require.ErrorAs(t, err, &api)
		assert.Equal(t, tc.code, api.Code)
		status, code := HTTPStatus(err)
		assert.Equal(t, api.Status, status)
		assert.Equal(t, tc.code, code, "HTTPStatus keeps a wire error's code")
	}
	_, _, err = c.Submit(ctx, TriggerRequest{Role: "boom", Text: "x"})
	var api *APIError
	require.ErrorAs(t, err, &api)
	assert.Equal(t, "INTERNAL", api.Code)
	assert.Contains(t, api.Message, "disk on fire")
	assert.NoError(t, api.Unwrap())

	// A runtime's client.
	rc := &Client{HTTP: c.HTTP, Base: c.Base, RuntimeToken: "tok-worker"}
	m, err = rc.Send(ctx, MessageRequest{Thread: "th", To: "boss", From: "boss", Text: "done"})
	require.NoError(t, err)
	assert.Equal(t, "worker", m.From)
	rc.RuntimeToken = "tok-stale"
	_, err = rc.Send(ctx, MessageRequest{Thread: "th", To: "boss", Text: "done"})
	assert.ErrorIs(t, err, ErrToken)
	assert.Equal(t, []Caller{{}, {Runtime: "worker"}}, f.sends)

	text, err := c.Metrics(ctx)
	require.NoError(t, err)
	assert.Contains(t, text, "# TYPE go_goroutines gauge")
}

func TestClientNotRunning(t *testing.T) {
	ctx := context.Background()
	dir := sockDir(t)

	// No socket file.
	c := NewUnixClient(filepath.Join(dir, "none.sock"))
	_, err := c.Runtimes(ctx)
	assert.ErrorIs(t, err, ErrNotRunning)
	status, code := HTTPStatus(err)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, "NOT_RUNNING", code)

	// A socket file nobody listens on.
	path := filepath.Join(dir, "dead.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	require.NoError(t, err)
	ln.SetUnlinkOnClose(false)
	require.NoError(t, ln.Close())
	c = NewUnixClient(path)
	_, _, err = c.Submit(ctx, TriggerRequest{Role: "worker", Text: "x"})
	assert.ErrorIs(t, err, ErrNotRunning)

	// A supervisor that took the connection and died on it: no answer,
	// which is not the same as nobody there.
	path = filepath.Join(dir, "dying.sock")
	ln, err = net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	require.NoError(t, err)
	go func() {
		// It reads the request, then dies before answering.
		if conn, err := ln.Accept(); err == nil {
			_, _ = http.ReadRequest(bufio.NewReader(conn))
			_ = conn.Close()
		}
	}()
	c = NewUnixClient(path)
	_, _, err = c.Submit(ctx, TriggerRequest{ID: "t1", Role: "worker", Text: "x"})
	assert.ErrorIs(t, err, ErrNoAnswer)
	assert.NotErrorIs(t, err, ErrNotRunning, "it may have taken the request: not to be made again blindly")
	require.NoError(t, ln.Close())

	// A TCP port nobody listens on.
	tl, err := ListenTCP("127.0.0.1:0")
	require.NoError(t, err)
	addr := tl.Addr().String()
	require.NoError(t, tl.Close())
	c = &Client{HTTP: &http.Client{Timeout: 5 * time.Second}, Base: "http://" + addr}
	_, err = c.Trigger(ctx, "x")
	assert.ErrorIs(t, err, ErrNotRunning)
}

func TestServeEndsWithContext(t *testing.T) {
	path := filepath.Join(sockDir(t), "end.sock")
	ln, err := ListenUnix(path)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- (&Server{Service: newAPIFake(), Logf: t.Logf}).Serve(ctx, ln, false) }()
	c := NewUnixClient(path)
	defer c.HTTP.CloseIdleConnections()
	_, err = c.Runtimes(context.Background())
	require.NoError(t, err)
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	_, err = os.Lstat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "the socket goes with the server")
	_, err = c.Runtimes(context.Background())
	assert.ErrorIs(t, err, ErrNotRunning)
}

func TestHTTPStatus(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		code   string
	}{
		{fmt.Errorf("x: %w", ErrBadInput), 400, "BAD_REQUEST"},
		{fmt.Errorf("x: %w", ErrNotFound), 404, "NOT_FOUND"},
		{fmt.Errorf("x: %w", ErrUnmanaged), 409, "FALLBACK_REQUIRED"},
		{fmt.Errorf("x: %w", ErrIDConflict), 409, "CONFLICT"},
		{fmt.Errorf("x: %w", ErrBlocked), 409, "THREAD_AUTO_BLOCKED"},
		{fmt.Errorf("x: %w", ErrToken), 403, "BAD_TOKEN"},
		{fmt.Errorf("x: %w", ErrNotRunning), 503, "NOT_RUNNING"},
		{errBadJSON, 400, "BAD_JSON"},
		{errTooLarge, 413, "TOO_LARGE"},
		{errUnauthorized, 401, "UNAUTHORIZED"},
		{errors.New("x"), 500, "INTERNAL"},
		{fmt.Errorf("x: %w", ErrStore), 500, "INTERNAL"},
	} {
		status, code := HTTPStatus(tc.err)
		assert.Equal(t, tc.status, status, tc.err.Error())
		assert.Equal(t, tc.code, code, tc.err.Error())
		// What a client gets back unwraps to the same sentinel.
		back := &APIError{Status: status, Code: code, Message: tc.err.Error()}
		for _, s := range []error{ErrBadInput, ErrNotFound, ErrUnmanaged, ErrIDConflict, ErrBlocked, ErrToken, ErrNotRunning} {
			assert.Equal(t, errors.Is(tc.err, s), errors.Is(back, s), "%s and %v", code, s)
		}
	}
}

// TestBodyCutShortNamesNoSocket: a body that ends before its
// Content-Length (or never comes) is a 400 saying so, not the network
// error, which names the API's socket.
func TestBodyCutShortNamesNoSocket(t *testing.T) {
	s := &Server{Service: newAPIFake()}
	cut := &net.OpError{Op: "read", Net: "unix", Addr: &net.UnixAddr{Name: "/run/party/secret/api.sock"}, Err: os.ErrDeadlineExceeded}
	r := httptest.NewRequest("POST", "/v1/triggers", io.MultiReader(strings.NewReader(`{"role":"w`), errReader{cut}))
	w := httptest.NewRecorder()
	s.Handler(false).ServeHTTP(w, r)
	assert.Equal(t, 400, w.Code, w.Body.String())
	assert.Equal(t, "BAD_JSON", apiErrorCode(t, w.Header(), w.Body.String()))
	assert.NotContains(t, w.Body.String(), "api.sock")
	assert.Contains(t, w.Body.String(), "Content-Length")
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
