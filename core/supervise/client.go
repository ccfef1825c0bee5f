package supervise

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Client calls the supervisor's API (Server).
type Client struct {
	HTTP *http.Client
	// Base is the API's URL without the /v1 path: http://party for a
	// unix socket (NewUnixClient), http://127.0.0.1:PORT on TCP.
	Base string
	// Token is the TCP listener's bearer token; RuntimeToken a runtime's
	// token (the pane's), which makes the calls the runtime's.
	Token, RuntimeToken string
	// Operator is the operator's name its calls carry (OperatorHeader).
	Operator string
}

// NewUnixClient is a client of the supervisor on the unix socket
// socketPath.
func NewUnixClient(socketPath string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socketPath)
		},
		MaxIdleConns:          4,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: time.Minute,
	}
	return &Client{HTTP: &http.Client{Transport: tr, Timeout: 2 * time.Minute}, Base: "http://party"}
}

// NewClient is a client of a supervisor reached by dial: one connection
// at a time, kept for the client's life and reused by every call (the
// API bridge of another host, core/hosts, is an ssh process per
// connection). HTTP.CloseIdleConnections closes it.
func NewClient(dial func(ctx context.Context) (net.Conn, error)) *Client {
	tr := &http.Transport{
		DialContext:           func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) },
		MaxIdleConns:          1,
		MaxIdleConnsPerHost:   1,
		MaxConnsPerHost:       1,
		ResponseHeaderTimeout: time.Minute,
	}
	return &Client{HTTP: &http.Client{Transport: tr, Timeout: 2 * time.Minute}, Base: "http://party"}
}

// APIError is an error answer of the API. Unwrap is the package's error
// of its code, so errors.Is(err, ErrNotFound) holds across the wire.
type APIError struct {
	Status  int
	Code    string
	Message string
}

// Error is the supervisor's own message: the code is e.Code, and the
// sentinel errors.Is finds (Unwrap).
func (e *APIError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("supervisor API: HTTP %d: %s", e.Status, e.Message)
	}
	return e.Message
}

// Unwrap is the sentinel of e's code (nil for none).
func (e *APIError) Unwrap() error { return sentinelOf(e.Code) }

// Submit asks for a trigger; created is false when its id was recorded
// already (the recorded trigger comes back).
func (c *Client) Submit(ctx context.Context, req TriggerRequest) (t Trigger, created bool, err error) {
	status, err := c.do(ctx, http.MethodPost, "/v1/triggers", req, &t)
	return t, status == http.StatusCreated, err
}

// Trigger is the trigger id.
func (c *Client) Trigger(ctx context.Context, id string) (Trigger, error) {
	var t Trigger
	if id == "" {
		return t, fmt.Errorf("no trigger id: %w", ErrBadInput)
	}
	_, err := c.do(ctx, http.MethodGet, "/v1/triggers/"+url.PathEscape(id), nil, &t)
	return t, err
}

// Runtimes are the supervisor's runtimes.
func (c *Client) Runtimes(ctx context.Context) ([]Runtime, error) {
	var out struct {
		Runtimes []Runtime `json:"runtimes"`
	}
	_, err := c.do(ctx, http.MethodGet, "/v1/runtimes", nil, &out)
	return out.Runtimes, err
}

// Send posts a message (from the runtime of RuntimeToken, if any).
func (c *Client) Send(ctx context.Context, req MessageRequest) (Message, error) {
	var m Message
	_, err := c.do(ctx, http.MethodPost, "/v1/messages", req, &m)
	return m, err
}

// Outsend records a message for a role on another host in the outbox
// (from the runtime of RuntimeToken, if any); created is false when its
// id was recorded already.
func (c *Client) Outsend(ctx context.Context, req OutboundRequest) (o Outbound, created bool, err error) {
	status, err := c.do(ctx, http.MethodPost, "/v1/outbox", req, &o)
	return o, status == http.StatusCreated, err
}

// Outbox are the outbox's entries of thread ("": every thread).
func (c *Client) Outbox(ctx context.Context, thread string) ([]Outbound, error) {
	q := url.Values{}
	if thread != "" {
		q.Set("thread", thread)
	}
	var out outbox
	_, err := c.do(ctx, http.MethodGet, "/v1/outbox?"+q.Encode(), nil, &out)
	return out.Outbox, err
}

// AwaitTrigger is trigger id once it is over, or after wait (at most
// MaxWait) with it still open.
func (c *Client) AwaitTrigger(ctx context.Context, id string, wait time.Duration) (Trigger, error) {
	var t Trigger
	if id == "" {
		return t, fmt.Errorf("no trigger id: %w", ErrBadInput)
	}
	_, err := c.do(ctx, http.MethodGet, "/v1/triggers/"+url.PathEscape(id)+"?"+url.Values{"wait": {wait.String()}}.Encode(), nil, &t)
	return t, err
}

// Triggers are the recorded triggers f keeps, oldest first.
func (c *Client) Triggers(ctx context.Context, f TriggerFilter) ([]Trigger, error) {
	q := url.Values{}
	for k, v := range map[string]string{"status": string(f.Status), "role": f.Role, "thread": f.Thread, "before": f.Before} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.Open {
		q.Set("open", "1")
	}
	if !f.Since.IsZero() {
		q.Set("since", f.Since.UTC().Format(time.RFC3339Nano))
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var out struct {
		Triggers []Trigger `json:"triggers"`
	}
	_, err := c.do(ctx, http.MethodGet, "/v1/triggers?"+q.Encode(), nil, &out)
	return out.Triggers, err
}

// Events are the audit trail's events after seq after, at most limit (0:
// the API's default); with wait, an empty answer comes only after wait
// (at most MaxWait) has passed with nothing new.
func (c *Client) Events(ctx context.Context, after int64, limit int, wait time.Duration) ([]AuditEvent, error) {
	q := url.Values{"after": {strconv.FormatInt(after, 10)}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if wait > 0 {
		q.Set("wait", wait.String())
	}
	var out struct {
		Events []AuditEvent `json:"events"`
	}
	_, err := c.do(ctx, http.MethodGet, "/v1/events?"+q.Encode(), nil, &out)
	return out.Events, err
}

// Read is the runtime's unread messages (of thread, or all), marked read.
func (c *Client) Read(ctx context.Context, thread string) ([]Message, error) {
	var out messages
	_, err := c.do(ctx, http.MethodPost, "/v1/inbox/read", ReadRequest{Thread: thread}, &out)
	return out.Messages, err
}

// Messages are a thread's messages.
func (c *Client) Messages(ctx context.Context, thread string) ([]Message, error) {
	var out messages
	_, err := c.do(ctx, http.MethodGet, "/v1/threads/"+url.PathEscape(thread)+"/messages", nil, &out)
	return out.Messages, err
}

// Heartbeat records that the runtime of RuntimeToken is alive.
func (c *Client) Heartbeat(ctx context.Context, status string) error {
	var out map[string]bool
	_, err := c.do(ctx, http.MethodPost, "/v1/heartbeat", HeartbeatRequest{Status: status}, &out)
	return err
}

// Talked records a talk that ended in the supervisor's audit.
func (c *Client) Talked(ctx context.Context, r TalkRecord) error {
	var out map[string]bool
	_, err := c.do(ctx, http.MethodPost, "/v1/talks", r, &out)
	return err
}

// Unblock lets a thread a safeguard blocked go on.
func (c *Client) Unblock(ctx context.Context, thread string) (Thread, error) {
	var th Thread
	_, err := c.do(ctx, http.MethodPost, "/v1/threads/"+url.PathEscape(thread)+"/unblock", nil, &th)
	return th, err
}

// Stop stops the runtime of role, its agent given grace (zero: the
// supervisor's default) to exit.
func (c *Client) Stop(ctx context.Context, role string, grace time.Duration) (Runtime, error) {
	var rt Runtime
	req := StopRequest{}
	if grace > 0 {
		req.Grace = grace.String()
	}
	_, err := c.do(ctx, http.MethodPost, "/v1/runtimes/"+url.PathEscape(role)+"/stop", req, &rt)
	return rt, err
}

// Metrics is the metrics page in the Prometheus text format.
func (c *Client) Metrics(ctx context.Context) (string, error) {
	var b []byte
	_, err := c.do(ctx, http.MethodGet, "/metrics", nil, &b)
	return string(b), err
}

// maxAnswer bounds what the client reads of an answer.
const maxAnswer = 64 << 20

// do makes a call with body (JSON, nil for none) and decodes the answer
// into out (a *[]byte takes it as it is). It returns the answer's status.
func (c *Client) do(ctx context.Context, method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.Base, "/")+path, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if _, raw := out.(*[]byte); raw {
		req.Header.Set("Accept", "text/plain")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if c.Operator != "" {
		req.Header.Set(OperatorHeader, c.Operator)
	}
	if c.RuntimeToken != "" {
		req.Header.Set(RuntimeTokenHeader, c.RuntimeToken)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		if notListening(err) {
			return 0, fmt.Errorf("%w: %v", ErrNotRunning, err)
		}
		if cutOff(err) {
			return 0, fmt.Errorf("%w (it may have taken the request): %v", ErrNoAnswer, err)
		}
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("supervisor API: reading the answer to %s %s: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, answerError(resp.StatusCode, b)
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = b
		return resp.StatusCode, nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return resp.StatusCode, fmt.Errorf("supervisor API: the answer to %s %s: %w", method, path, err)
	}
	return resp.StatusCode, nil
}

// answerError is the *APIError of an error answer.
func answerError(status int, b []byte) error {
	var eb errorBody
	if err := json.Unmarshal(b, &eb); err == nil && eb.Error.Code != "" {
		return &APIError{Status: status, Code: eb.Error.Code, Message: eb.Error.Message}
	}
	msg := strings.TrimSpace(string(b))
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &APIError{Status: status, Message: msg}
}

// cutOff says err is a connection the other end closed before it
// answered: a supervisor killed between accepting a request and answering
// it (its listen queue is reset with it).
func cutOff(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// notListening says err is a dial that found no supervisor: no socket
// file, or nobody accepting on it.
func notListening(err error) bool {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}
