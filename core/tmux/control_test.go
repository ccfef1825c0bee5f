package tmux

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/mux"
)

// testServer starts a private tmux server with one session running argv and
// kills it when the test ends.
func testServer(t *testing.T, argv ...string) *Client {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: needs a real tmux server; make test runs it")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is required: %v", err)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	dir, err := os.MkdirTemp("", "ct")
	require.NoError(t, err)
	env := []string{"TMUX_TMPDIR=" + dir, "LC_ALL=C.UTF-8", "PATH=" + os.Getenv("PATH"), "TERM=xterm"}
	c := New(Socket{Name: "ct" + hex.EncodeToString(b[:])}, ExecRunner{Env: env})
	c.Config = os.DevNull
	ctx := context.Background()
	_, err = c.NewSession(ctx, "s", 80, 24, Spawn{Argv: argv})
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = c.Run(context.Background(), "kill-server")
		os.RemoveAll(dir)
	})
	return c
}

func TestControlStreamsOutputAndRunsCommands(t *testing.T) {
	c := testServer(t, "cat")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cc, err := c.Control(ctx, "s", true)
	require.NoError(t, err)
	defer cc.Close()

	panes, err := c.ListPanes(ctx, "s")
	require.NoError(t, err)
	pane := panes[0].ID
	text := "héllo\\ 世界 \t tab"
	require.NoError(t, c.Paste(ctx, pane, []byte(text)))

	var got []byte
	for !strings.Contains(string(got), text) {
		select {
		case o := <-cc.Output():
			if o.Pane == pane {
				got = append(got, o.Data...)
			}
		case <-ctx.Done():
			t.Fatalf("no output; got %q", got)
		}
	}

	screen, err := cc.Capture(ctx, pane)
	require.NoError(t, err)
	assert.Contains(t, screen, "héllo\\ 世界")

	out, err := cc.Command(ctx, "display-message", "-p", "-t", pane, "#{pane_id}")
	require.NoError(t, err)
	assert.Equal(t, pane+"\n", out)

	_, err = cc.Command(ctx, "list-panes", "-t", "=nope:")
	assert.ErrorIs(t, err, mux.ErrNoSession, "classified as a tmux process's failure would be")

	_, err = cc.Command(ctx, "send-keys", "-t", pane, "rm -rf /")
	assert.ErrorIs(t, err, ErrCommand, "text with spaces never goes through control mode")

	// The window keeps its size: the control client ignores sizing.
	panes, err = c.ListPanes(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, 80, panes[0].Width)
}

func TestControlEndsWithSession(t *testing.T) {
	c := testServer(t, "cat")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cc, err := c.Control(ctx, "s", true)
	require.NoError(t, err)
	require.NoError(t, c.KillSession(ctx, "s"))
	select {
	case <-cc.Done():
	case <-ctx.Done():
		t.Fatal("control client outlived its session")
	}
	_, err = cc.Command(ctx, "list-panes")
	assert.ErrorIs(t, err, ErrControlClosed)
	_ = cc.Close()
}

func TestControlMissingSession(t *testing.T) {
	c := testServer(t, "cat")
	_, err := c.Control(context.Background(), "nope", true)
	assert.Error(t, err)
}

func TestUnescapeOutput(t *testing.T) {
	assert.Equal(t, []byte("a\r\n\x1b[0m\\b"), unescapeOutput([]byte(`a\015\012\033[0m\134b`)))
	assert.Equal(t, []byte(`\9x`), unescapeOutput([]byte(`\9x`)), "not an escape")
}

func TestControlRepliesEndOnTheirOwnGuard(t *testing.T) {
	stream := strings.Join([]string{
		"%begin 1700000000 10 0", "%end 1700000000 10 0", // the attach
		"%output %1 hi",
		"%begin 1700000001 11 1",
		"line one",
		"%end 1700000001 12 1", // a pane line that looks like a guard
		"%end 1700000001 11 0",
		"%error 1700000001 11",
		"%begin 9 9 9",
		"last",
		"%end 1700000001 11 1",
		"%begin 1700000002 13 1",
		"%end nope",
		"%error 1700000002 13 1",
		"",
	}, "\n")
	cc := &Control{output: make(chan Output, 8), reply: make(chan controlReply, 2), done: make(chan struct{})}
	first := make(chan error, 1)
	go cc.read(strings.NewReader(stream), first)
	require.NoError(t, <-first)
	o := <-cc.output
	assert.Equal(t, Output{Pane: "%1", Data: []byte("hi")}, o)
	r := <-cc.reply
	require.NoError(t, r.err)
	assert.Equal(t, "line one\n%end 1700000001 12 1\n%end 1700000001 11 0\n%error 1700000001 11\n%begin 9 9 9\nlast\n", r.body)
	r = <-cc.reply
	assert.ErrorIs(t, r.err, ErrCommand)
	assert.Equal(t, "%end nope\n", r.body)
	<-cc.done
}

func TestControlCaptureOfAGuardLikeLine(t *testing.T) {
	c := testServer(t, "sh", "-c", "printf 'a\\n%%end 1 2 1\\n%%error 1 2 1\\nz\\n'; exec cat")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cc, err := c.Control(ctx, "s", false)
	require.NoError(t, err)
	defer cc.Close()
	panes, err := c.ListPanes(ctx, "s")
	require.NoError(t, err)
	var screen string
	for !strings.Contains(screen, "z") && ctx.Err() == nil {
		screen, err = cc.Capture(ctx, panes[0].ID)
		require.NoError(t, err)
	}
	assert.Equal(t, "a\n%end 1 2 1\n%error 1 2 1\nz", screen)
}

// TestSetOptionsOfAnyCount: a real tmux server takes any number of
// options in one SetOptions call (tmux refuses one command line over
// 16 KiB: "command too long"), each set as given.
func TestSetOptionsOfAnyCount(t *testing.T) {
	c := testServer(t, "cat")
	ctx := context.Background()
	var opts []Option
	for i := range 400 {
		opts = append(opts, Option{Target: SessionTarget("s"), Name: fmt.Sprintf("@party_test_%03d", i), Value: strings.Repeat("v", 60) + fmt.Sprint(i)})
	}
	require.NoError(t, c.SetOptions(ctx, opts...))
	out, err := c.Run(ctx, "show-options", "-t", SessionTarget("s"))
	require.NoError(t, err)
	for _, o := range opts {
		assert.Contains(t, string(out), o.Name+" "+o.Value+"\n")
	}
}

// countingRunner is an ExecRunner that counts the tmux processes it ran.
type countingRunner struct {
	ExecRunner
	n *atomic.Int32
}

func (r countingRunner) Run(ctx context.Context, argv []string, stdin []byte) ([]byte, error) {
	r.n.Add(1)
	return r.ExecRunner.Run(ctx, argv, stdin)
}

// TestQueriesOverControl: a client with Queries answers its queries over
// the control connection, with no tmux process, exactly as a tmux process
// answers them (values, screens, failures); commands that write still run
// a process, and once the connection is gone the queries do too.
func TestQueriesOverControl(t *testing.T) {
	c := testServer(t, "cat")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cc, err := c.Control(ctx, "s", false)
	require.NoError(t, err)
	var ran atomic.Int32
	q := New(c.Socket, countingRunner{ExecRunner: c.Runner.(ExecRunner), n: &ran})
	q.Queries = cc

	panes, err := c.ListPanes(ctx, "s")
	require.NoError(t, err)
	pane := panes[0].ID
	text := "héllo 世界\t tab\n%end 1 2 0\n%error x\n'quoted' \"double\" #{pane_id} ; \\"
	require.NoError(t, c.Paste(ctx, pane, []byte(text+"\n")))
	for {
		screen, err := c.Capture(ctx, pane, 0)
		require.NoError(t, err)
		if strings.Count(screen, "double") == 2 { // typed, and cat's echo
			break
		}
		time.Sleep(20 * time.Millisecond)
	}

	byProcess, err := c.ListPanes(ctx, "s")
	require.NoError(t, err)
	overControl, err := q.ListPanes(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, byProcess, overControl)
	p1, s1, err := c.Inspect(ctx, pane)
	require.NoError(t, err)
	p2, s2, err := q.Inspect(ctx, pane)
	require.NoError(t, err)
	assert.Equal(t, p1, p2)
	assert.Equal(t, s1, s2)
	assert.Contains(t, s2, "%end 1 2 0")
	k1, shown1, err := c.LastKey(ctx, pane)
	require.NoError(t, err)
	k2, shown2, err := q.LastKey(ctx, pane)
	require.NoError(t, err)
	assert.Equal(t, k1, k2)
	assert.Equal(t, shown1, shown2)
	r1, err := c.Rows(ctx, pane, 100)
	require.NoError(t, err)
	r2, err := q.Rows(ctx, pane, 100)
	require.NoError(t, err)
	assert.Equal(t, r1, r2)
	h1, err := c.Capture(ctx, pane, 100)
	require.NoError(t, err)
	h2, err := q.Capture(ctx, pane, 100)
	require.NoError(t, err)
	assert.Equal(t, h1, h2)
	_, err = q.Pane(ctx, "%99")
	assert.ErrorIs(t, err, mux.ErrNoPane)
	_, err = q.ListPanes(ctx, "nope")
	assert.ErrorIs(t, err, mux.ErrNoSession)
	assert.Zero(t, ran.Load(), "no tmux process for a query")

	require.NoError(t, q.Paste(ctx, pane, []byte("x")))
	assert.Positive(t, ran.Load(), "a command that writes runs a process")
	_, err = q.ListPanes(ctx, "s  with spaces")
	assert.ErrorIs(t, err, mux.ErrNoSession)
	n := ran.Load()
	require.Greater(t, n, int32(1), "a session name that cannot travel over control runs a process")

	require.NoError(t, cc.Close())
	again, err := q.ListPanes(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, byProcess[0].ID, again[0].ID)
	assert.Greater(t, ran.Load(), n, "once the connection is gone, a process answers")
}

// TestListPanesAsIs: the listing as tmux names it holds ListPanes' panes
// (a program whose path has no space is named alike), with when its
// window last printed, which moves as the pane prints, detached.
func TestListPanesAsIs(t *testing.T) {
	c := testServer(t, "cat")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var panes []mux.Pane
	for { // cat, once the pane's env has exec'd it
		var err error
		panes, err = c.ListPanes(ctx, "s")
		require.NoError(t, err)
		if panes[0].CurrentCommand == "cat" {
			break
		}
		require.NoError(t, ctx.Err(), "the pane runs %q", panes[0].CurrentCommand)
		time.Sleep(20 * time.Millisecond)
	}
	asIs, err := c.ListPanesAsIs(ctx, "s")
	require.NoError(t, err)
	require.Len(t, asIs, len(panes))
	assert.Equal(t, panes[0], asIs[0].Pane)
	first := asIs[0].Activity
	assert.Positive(t, first)

	for time.Now().Unix() <= first { // the next second: activity counts whole ones
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, c.Paste(ctx, panes[0].ID, []byte("x\n")))
	for {
		asIs, err = c.ListPanesAsIs(ctx, "s")
		require.NoError(t, err)
		if asIs[0].Activity > first {
			break
		}
		require.NoError(t, ctx.Err(), "activity still %d, was %d", asIs[0].Activity, first)
		time.Sleep(50 * time.Millisecond)
	}
	_, err = c.ListPanesAsIs(ctx, "nope")
	assert.ErrorIs(t, err, mux.ErrNoSession)
}

// TestSafeArg: what may go over a control connection is ids, flags,
// numbers and formats with Query's separators: never a quote, a
// semicolon, a dollar, a tilde, a space or another control byte.
func TestSafeArg(t *testing.T) {
	for _, a := range []string{"%12", "-t", "=s:", "#{pane_id}\x1fab12\x1f#{pane_pid}\x1eab12\x1e", "@party_role", "a,b.c+d/e|f*g", "-S", "-100"} {
		assert.True(t, safeArg(a), "%q", a)
	}
	for _, a := range []string{"", "it's", `"x"`, "a;b", "$HOME", "~", "a b", "\t", "\n", "é", "\x00", "a\x1b"} {
		assert.False(t, safeArg(a), "%q", a)
	}
}
