package notify

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testEvent = Event{Kind: Permission, Session: "work", Role: "claude", Pane: "%3", Title: "claude asks for permission",
	Body: "Bash rm -rf #{build}", At: time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC), Key: "k"}

func TestWebhook(t *testing.T) {
	var got []byte
	var ctype string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		ctype = r.Header.Get("Content-Type")
	}))
	defer srv.Close()
	s := Sinks{On: map[string]bool{SinkWebhook: true}, Webhook: srv.URL, Topic: "agents"}
	res := s.Tell(context.Background(), testEvent)
	assert.Equal(t, Result{Sink: SinkWebhook, Status: "sent", Detail: "200 OK"}, res[3])
	assert.Equal(t, "application/json", ctype)
	var p map[string]any
	require.NoError(t, json.Unmarshal(got, &p))
	assert.Equal(t, "agents", p["topic"])
	assert.Equal(t, "party: claude asks for permission", p["title"])
	assert.Equal(t, "Bash rm -rf #{build}", p["message"])
	assert.Equal(t, []any{"party", "permission"}, p["tags"])
	assert.Equal(t, float64(4), p["priority"])
	assert.Equal(t, "claude", p["party"].(map[string]any)["role"])

	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusForbidden) }))
	defer bad.Close()
	s.Webhook = bad.URL
	res = s.Tell(context.Background(), testEvent)
	assert.Equal(t, "failed", res[3].Status)
	assert.Contains(t, res[3].Detail, "403")

	s.Webhook = ""
	res = s.Tell(context.Background(), testEvent)
	assert.Equal(t, "skipped", res[3].Status)
	for _, r := range res[:3] {
		assert.Equal(t, Result{Sink: r.Sink, Status: "skipped", Detail: "off in notify.sinks"}, r)
	}
}

func TestDesktop(t *testing.T) {
	var ran [][]string
	s := Sinks{On: map[string]bool{SinkDesktop: true}, GOOS: "darwin",
		Exec: func(_ context.Context, argv []string) error { ran = append(ran, argv); return nil }}
	s.LookPath = func(name string) (string, error) {
		if name == "osascript" {
			return "/usr/bin/osascript", nil
		}
		return "", errors.New("not found")
	}
	res := s.Tell(context.Background(), testEvent)
	assert.Equal(t, Result{Sink: SinkDesktop, Status: "sent", Detail: "/usr/bin/osascript"}, res[2])
	require.Len(t, ran, 1)
	assert.Equal(t, []string{"/usr/bin/osascript", "-e", "on run argv", "-e", "display notification (item 2 of argv) with title (item 1 of argv)",
		"-e", "end run", "party: claude asks for permission", "Bash rm -rf #{build}"}, ran[0], "the texts are arguments, never script")

	s.GOOS = "linux"
	res = s.Tell(context.Background(), testEvent)
	assert.Equal(t, "skipped", res[2].Status)
	s.LookPath = func(name string) (string, error) { return "/usr/bin/" + name, nil }
	s.Tell(context.Background(), testEvent)
	assert.Equal(t, []string{"/usr/bin/notify-send", "--app-name=party", "--", "party: claude asks for permission", "Bash rm -rf #{build}"}, ran[1])
}

// fakeTmux answers list-clients and display-message -p with rows and
// records the commands run.
type fakeTmux struct {
	mu      sync.Mutex
	clients [][]string
	pane    []string
	ran     [][]string
}

func (f *fakeTmux) Run(_ context.Context, args ...string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ran = append(f.ran, args)
	return nil, nil
}

func (f *fakeTmux) Query(_ context.Context, _ []string, args ...string) ([][]string, error) {
	switch args[0] {
	case "list-clients":
		return f.clients, nil
	case "display-message":
		return [][]string{f.pane}, nil
	}
	return nil, errors.New("unexpected " + args[0])
}

// openPty is a terminal whose output the test reads.
func openPty(t *testing.T) (*os.File, string) {
	ptmx, tty, err := pty.Open()
	require.NoError(t, err)
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	return ptmx, tty.Name()
}

func readSome(t *testing.T, f *os.File, want string) string {
	var got strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(got.String(), want) {
		require.NoError(t, f.SetReadDeadline(time.Now().Add(5*time.Second)))
		n, err := f.Read(buf)
		require.NoError(t, err, "read so far: %q", got.String())
		got.Write(buf[:n])
	}
	return got.String()
}

// TestTerminalAndTmux: a plain client's terminal gets OSC 9 and OSC 777,
// a nested one gets them wrapped for passthrough, a control-mode client's
// go into the pane; the tmux message is a literal, the bell goes into
// the pane.
func TestTerminalAndTmux(t *testing.T) {
	plain, plainTTY := openPty(t)
	nested, nestedTTY := openPty(t)
	pane, paneTTY := openPty(t)
	f := &fakeTmux{pane: []string{"%3", paneTTY}, clients: [][]string{
		{plainTTY, "xterm-256color", "0", "work", ""},
		{nestedTTY, "tmux-256color", "0", "work", ""},
		{"/dev/pts/999", "xterm", "1", "work-iterm", "work"},
		{"/dev/pts/998", "xterm", "0", "other", ""},
		{"", "xterm", "1", "work", ""}, // the supervisor's own control client
	}}
	s := Sinks{On: map[string]bool{SinkTmux: true, SinkTerminal: true}, Tmux: f, Session: "work", Display: 8 * time.Second}
	res := s.Tell(context.Background(), testEvent)
	assert.Equal(t, Result{Sink: SinkTmux, Status: "sent", Detail: "3 client(s), bell in %3"}, res[0])
	assert.Equal(t, Result{Sink: SinkTerminal, Status: "sent", Detail: "2 plain, 1 control-mode client(s)"}, res[1])

	line := "party[work] claude: claude asks for permission: Bash rm -rf #{build}"
	osc := "\x1b]9;" + line + "\a\x1b]777;notify;party: claude asks for permission;Bash rm -rf #{build}\a"
	assert.Equal(t, osc, readSome(t, plain, "#{build}\a\x1b]777"+";notify;party: claude asks for permission;Bash rm -rf #{build}\a"))
	wrapped := readSome(t, nested, "\x1b\\\x1bPtmux;")
	assert.True(t, strings.HasPrefix(wrapped, "\x1bPtmux;\x1b\x1b]9;party[work]"), "%q", wrapped)
	assert.Equal(t, "\a"+osc, readSome(t, pane, osc), "the bell, then the escapes for the control-mode client")
	assert.Equal(t, []string{"display-message", "-c", plainTTY, "-d", "8000", "--", "party[work] claude: claude asks for permission: Bash rm -rf ##{build}"}, f.ran[0])
	assert.Len(t, f.ran, 3, "a message on each client of the session and its view")
}

func TestOSC(t *testing.T) {
	assert.Equal(t, "\x1b]9;ab c\a", OSC9("a\x1bb\nc\a"))
	assert.Equal(t, "\x1b]777;notify;a,b;c;d\a", OSC777("a;b", "c;d"))
	assert.Equal(t, "\x1bPtmux;\x1b\x1b]9;x\a\x1b\\", Passthrough(OSC9("x")))
	assert.True(t, Nested("screen-256color"))
	assert.False(t, Nested("xterm-256color"))
}
