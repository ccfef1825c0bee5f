package supervise

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/partyhq/party/core/clock"
)

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

// outsend records a message for a role on another host in the outbox.
func (s *Server) outsend(w http.ResponseWriter, r *http.Request, c Caller) (int, any, error) {
	var req OutboundRequest
	if err := s.decode(w, r, &req); err != nil {
		return 0, nil, err
	}
	o, created, err := s.Service.Outsend(r.Context(), c, req)
	if created {
		return http.StatusCreated, o, err
	}
	return http.StatusOK, o, err
}

// outbox is the outbox's entries of ?thread= (none: every thread).
func (s *Server) outbox(w http.ResponseWriter, r *http.Request, c Caller) (int, any, error) {
	out, err := s.Service.Outbox(r.Context(), c, r.URL.Query().Get("thread"))
	return http.StatusOK, outbox{nonNil(out)}, err
}

type outbox struct {
	Outbox []Outbound `json:"outbox"`
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

// talked records a talk that ended in the audit.
func (s *Server) talked(w http.ResponseWriter, r *http.Request, c Caller) (int, any, error) {
	var req TalkRecord
	if err := s.decode(w, r, &req); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]bool{"ok": true}, s.Service.Talked(r.Context(), c, req)
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
	clk := s.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	timer := clk.NewTimer(wait)
	defer timer.Stop()
	for {
		changed := s.Service.Changed()
		done, err := look()
		if done || err != nil || wait == 0 {
			return err
		}
		select {
		case <-changed:
		case <-timer.C():
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
