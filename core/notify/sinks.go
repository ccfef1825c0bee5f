package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/partyhq/party/core/tmux"
)

// The sinks, as notify.sinks names them.
const (
	SinkTmux     = "tmux"
	SinkTerminal = "terminal"
	SinkDesktop  = "desktop"
	SinkWebhook  = "webhook"
)

// SinkNames are the sinks in the order they are told.
var SinkNames = []string{SinkTmux, SinkTerminal, SinkDesktop, SinkWebhook}

// Result is what one sink did with a notification, as party notify test
// --json prints it: "sent", "skipped" (with why: off, nothing to tell it
// through) or "failed" (with the error).
type Result struct {
	Sink   string `json:"sink"`
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// Tmux is what the tmux and terminal sinks need of the tmux client
// (*tmux.Client).
type Tmux interface {
	Run(ctx context.Context, args ...string) ([]byte, error)
	Query(ctx context.Context, fields []string, args ...string) ([][]string, error)
}

// Sinks tell a notification. Zero fields turn their sink off: no Tmux, no
// tmux or terminal sink; no Webhook URL, no webhook.
type Sinks struct {
	On      map[string]bool // the sinks switched on (notify.sinks)
	Tmux    Tmux
	Session string
	// Webhook is the URL POSTed to; Topic, when set, is the ntfy topic
	// (the URL is then the ntfy server's root).
	Webhook, Topic string
	HTTP           *http.Client
	// LookPath and Exec run the desktop's notifier; GOOS picks it.
	LookPath func(string) (string, error)
	Exec     func(ctx context.Context, argv []string) error
	GOOS     string
	// Display is how long the tmux message stays.
	Display time.Duration
}

// Tell tells ev through every sink and says what each did. A sink that
// fails does not keep the others from telling.
func (s Sinks) Tell(ctx context.Context, ev Event) []Result {
	var out []Result
	for _, name := range SinkNames {
		if !s.On[name] {
			out = append(out, Result{Sink: name, Status: "skipped", Detail: "off in notify.sinks"})
			continue
		}
		var detail string
		var err error
		switch name {
		case SinkTmux:
			detail, err = s.tellTmux(ctx, ev)
		case SinkTerminal:
			detail, err = s.tellTerminal(ctx, ev)
		case SinkDesktop:
			detail, err = s.tellDesktop(ctx, ev)
		case SinkWebhook:
			detail, err = s.tellWebhook(ctx, ev)
		}
		switch {
		case errors.Is(err, errSkip):
			out = append(out, Result{Sink: name, Status: "skipped", Detail: detail})
		case err != nil:
			out = append(out, Result{Sink: name, Status: "failed", Detail: err.Error()})
		default:
			out = append(out, Result{Sink: name, Status: "sent", Detail: detail})
		}
	}
	return out
}

// errSkip is a sink with nothing to tell through.
var errSkip = errors.New("skipped")

// Line is the one line a notification is shown as: "party[SESSION]
// ROLE: TITLE: BODY".
func (ev Event) Line() string {
	who := "party[" + ev.Session + "]"
	if ev.Role != "" {
		who += " " + ev.Role
	}
	s := who + ": " + ev.Title
	if ev.Body != "" {
		s += ": " + ev.Body
	}
	return Plain(s)
}

// Client is a tmux client attached to the session or to one of its views.
type Client struct {
	TTY, Termname string
	Control       bool
}

// clients are the clients of s.Session and of its iTerm2 views that a
// person looks at: those on a terminal.
func (s Sinks) clients(ctx context.Context) ([]Client, error) {
	rows, err := s.Tmux.Query(ctx, []string{"#{client_tty}", "#{client_termname}", "#{client_control_mode}", "#{session_name}", "#{@party_view_of}"}, "list-clients")
	if err != nil {
		return nil, fmt.Errorf("clients of %s: %w", s.Session, err)
	}
	var out []Client
	for _, r := range rows {
		if r[0] == "" {
			continue // party's own control clients read a pipe: nobody looks at them
		}
		if r[3] == s.Session || r[4] == s.Session {
			out = append(out, Client{TTY: r[0], Termname: r[1], Control: r[2] == "1"})
		}
	}
	return out, nil
}

// pane is ev's pane, else the session's active pane.
func (s Sinks) pane(ctx context.Context, ev Event) (id, tty string, err error) {
	target := ev.Pane
	if target == "" {
		target = tmux.SessionTarget(s.Session)
	}
	rows, err := s.Tmux.Query(ctx, []string{"#{pane_id}", "#{pane_tty}"}, "display-message", "-p", "-t", target)
	if err != nil || len(rows) != 1 {
		return "", "", fmt.Errorf("pane %s: %w", target, err)
	}
	return rows[0][0], rows[0][1], nil
}

// tellTmux shows the line on every client of the session for s.Display
// and rings the bell in the pane.
func (s Sinks) tellTmux(ctx context.Context, ev Event) (string, error) {
	if s.Tmux == nil || s.Session == "" {
		return "no session", errSkip
	}
	clients, err := s.clients(ctx)
	if err != nil {
		return "", err
	}
	ms := strconv.FormatInt(s.Display.Milliseconds(), 10)
	for _, c := range clients {
		// The message is a format: Literal keeps what an agent wrote
		// from being expanded.
		if _, err := s.Tmux.Run(ctx, "display-message", "-c", c.TTY, "-d", ms, "--", tmux.Literal(ev.Line())); err != nil {
			return "", err
		}
	}
	id, tty, err := s.pane(ctx, ev)
	if err != nil {
		return "", err
	}
	// A BEL written to the pane's terminal is output of the pane: tmux
	// flags the window and passes the bell on (bell-action).
	if err := writeTTY(tty, "\a"); err != nil {
		return "", fmt.Errorf("bell in %s: %w", id, err)
	}
	return fmt.Sprintf("%d client(s), bell in %s", len(clients), id), nil
}

// tellTerminal writes OSC 9 and OSC 777 to every plain client's terminal
// (wrapped for an outer tmux), and into the pane for control-mode
// clients, which read the pane's output (%output) and act on the escapes
// themselves; tmux ignores them in a pane.
func (s Sinks) tellTerminal(ctx context.Context, ev Event) (string, error) {
	if s.Tmux == nil || s.Session == "" {
		return "no session", errSkip
	}
	clients, err := s.clients(ctx)
	if err != nil {
		return "", err
	}
	if len(clients) == 0 {
		return "no client attached", errSkip
	}
	seq := OSC9(ev.Line()) + OSC777("party: "+ev.Title, ev.Body)
	control, plain := 0, 0
	var errs []error
	for _, c := range clients {
		if c.Control {
			control++
			continue
		}
		out := seq
		if Nested(c.Termname) {
			out = Passthrough(OSC9(ev.Line())) + Passthrough(OSC777("party: "+ev.Title, ev.Body))
		}
		if err := writeTTY(c.TTY, out); err != nil {
			errs = append(errs, fmt.Errorf("client %s: %w", c.TTY, err))
			continue
		}
		plain++
	}
	if control > 0 {
		id, tty, err := s.pane(ctx, ev)
		if err == nil {
			err = writeTTY(tty, seq)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("pane %s: %w", id, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d plain, %d control-mode client(s)", plain, control), nil
}

// writeTTY writes s to the terminal at path in one write, never waiting
// on it (a terminal stopped by ^S must not stop the notifier).
func writeTTY(path, s string) error {
	if !strings.HasPrefix(path, "/dev/") {
		return fmt.Errorf("%q is not a terminal device", path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.WriteString(f, s)
	return err
}

// desktopArgv is the argv of the system's notifier for ev, nil when it
// has none.
func (s Sinks) desktopArgv(ev Event) []string {
	title := Plain("party: " + ev.Title)
	body := Plain(ev.Body)
	if body == "" {
		body = "session " + Plain(ev.Session)
	}
	if p, err := s.LookPath("notify-send"); err == nil {
		return []string{p, "--app-name=party", "--", title, body}
	}
	if s.GOOS == "darwin" {
		if p, err := s.LookPath("osascript"); err == nil {
			// The texts are arguments of the script, never part of it.
			return []string{p, "-e", "on run argv", "-e", "display notification (item 2 of argv) with title (item 1 of argv)", "-e", "end run", title, body}
		}
	}
	return nil
}

func (s Sinks) tellDesktop(ctx context.Context, ev Event) (string, error) {
	argv := s.desktopArgv(ev)
	if argv == nil {
		return "no notify-send or osascript", errSkip
	}
	if err := s.Exec(ctx, argv); err != nil {
		return "", fmt.Errorf("%s: %w", argv[0], err)
	}
	return argv[0], nil
}

// Payload is the webhook's JSON body: ntfy's publish message (topic,
// title, message, tags, priority) and party's fields beside it.
type Payload struct {
	Topic    string   `json:"topic,omitempty"`
	Title    string   `json:"title"`
	Message  string   `json:"message"`
	Tags     []string `json:"tags"`
	Priority int      `json:"priority"`
	Event    Event    `json:"party"`
}

// NewPayload is the webhook body of ev.
func NewPayload(topic string, ev Event) Payload {
	prio := 3
	switch ev.Kind {
	case Permission, Dialog, Failed, Discussion, Trigger, Stalled:
		prio = 4
	}
	msg := ev.Body
	if msg == "" {
		msg = ev.Title
	}
	return Payload{Topic: topic, Title: Plain("party: " + ev.Title), Message: Plain(msg),
		Tags: []string{"party", string(ev.Kind)}, Priority: prio, Event: ev}
}

func (s Sinks) tellWebhook(ctx context.Context, ev Event) (string, error) {
	if s.Webhook == "" {
		return "no notify.webhook in the user's configuration", errSkip
	}
	b, err := json.Marshal(NewPayload(s.Topic, ev))
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Webhook, bytes.NewReader(b))
	if err != nil {
		return "", fmt.Errorf("webhook: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	hc := s.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("webhook: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("webhook: %s", resp.Status)
	}
	return resp.Status, nil
}
