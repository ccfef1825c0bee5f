package tmux

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/mux"
)

// stubRunner answers each call with the next stub and records argv and
// stdin. A stub that nobody called fails the test.
type stubRunner struct {
	t     *testing.T
	stubs []stub
	calls []call
}

type stub struct {
	out []byte
	err error
}

type call struct {
	argv  []string
	stdin []byte
}

func newStub(t *testing.T, stubs ...stub) *stubRunner {
	r := &stubRunner{t: t, stubs: stubs}
	t.Cleanup(func() {
		if len(r.calls) < len(r.stubs) {
			t.Errorf("%d tmux stubs never called", len(r.stubs)-len(r.calls))
		}
	})
	return r
}

func (r *stubRunner) Run(_ context.Context, argv []string, stdin []byte) ([]byte, error) {
	r.calls = append(r.calls, call{argv, stdin})
	if len(r.calls) > len(r.stubs) {
		r.t.Fatalf("unexpected tmux call %q", argv)
	}
	s := r.stubs[len(r.calls)-1]
	return s.out, s.err
}

func TestSocketSelection(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name string
		flag Socket
		env  map[string]string
		want []string
	}{
		{"flag name wins over env", Socket{Name: "a"}, map[string]string{"PARTY_TMUX_SOCKET": "b"}, []string{"-L", "a"}},
		{"flag path", Socket{Path: "/s"}, nil, []string{"-S", "/s"}},
		{"env name", Socket{}, map[string]string{"PARTY_TMUX_SOCKET": "b"}, []string{"-L", "b"}},
		{"env path wins over env name", Socket{}, map[string]string{"PARTY_TMUX_SOCKET": "b", "PARTY_TMUX_SOCKET_PATH": "/p"}, []string{"-S", "/p"}},
		{"nothing: tmux decides ($TMUX or default)", Socket{}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, SocketFromEnv(tt.flag, env(tt.env)).args())
		})
	}
}

func TestQueryUsesUnforgeableSeparators(t *testing.T) {
	r := newStub(t, stub{})
	c := New(Socket{Name: "x"}, r)
	fsep, rsep := "\x1f"+c.tok+"\x1f", "\x1e"+c.tok+"\x1e"
	// A value holding newlines and \x1f stays one field.
	r.stubs[0].out = []byte("%1" + fsep + "a\x1fb\nc" + rsep + "\n%2" + fsep + "d" + rsep + "\n")
	rows, err := c.Query(context.Background(), []string{"#{pane_id}", "#{@party_role}"}, "list-panes", "-a")
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"%1", "a\x1fb\nc"}, {"%2", "d"}}, rows)
	argv := r.calls[0].argv
	assert.Equal(t, []string{"tmux", "-u", "-L", "x", "list-panes", "-a", "-F"}, argv[:7])
	assert.Equal(t, "#{pane_id}"+fsep+"#{@party_role}"+rsep, argv[7])
}

func TestQueryAsksAgainWhenTheConnectionWasLost(t *testing.T) {
	lost := &CmdError{Stderr: "server exited unexpectedly", Err: mux.ErrNoServer}
	r := newStub(t, stub{err: lost}, stub{err: lost}, stub{})
	c := New(Socket{Name: "x"}, r)
	fsep, rsep := c.seps()
	r.stubs[2].out = []byte("%1" + fsep + "a" + rsep + "\n")
	rows, err := c.Query(context.Background(), []string{"#{pane_id}", "#{@party_role}"}, "list-panes", "-a")
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"%1", "a"}}, rows)

	// A server that is not there is said at once.
	gone := &CmdError{Stderr: "no server running on /tmp/tmux-0/x", Err: mux.ErrNoServer}
	r = newStub(t, stub{err: gone})
	c = New(Socket{Name: "x"}, r)
	_, err = c.Query(context.Background(), []string{"#{pane_id}"}, "list-panes", "-a")
	assert.ErrorIs(t, err, mux.ErrNoServer)
	assert.Len(t, r.calls, 1)
}

func TestPasteSendsTextOnStdinOnly(t *testing.T) {
	r := newStub(t, stub{})
	c := New(Socket{Name: "x"}, r)
	text := []byte("end;\n-flag $(x) `y`")
	require.NoError(t, c.Paste(context.Background(), "%3", text))
	got := r.calls[0]
	assert.Equal(t, text, got.stdin)
	for _, a := range got.argv {
		assert.NotContains(t, a, "$(x)", "text never appears in argv")
	}
	s := strings.Join(got.argv, " ")
	assert.Regexp(t, `load-buffer -b party-\w+ - ; paste-buffer -p -r -d -b party-\w+ -t %3$`, s)
}

func TestPasteFailureDeletesBuffer(t *testing.T) {
	fail := &CmdError{Stderr: "can't find pane: %9", Err: mux.ErrNoPane}
	r := newStub(t, stub{err: fail}, stub{})
	c := New(Socket{}, r)
	err := c.Paste(context.Background(), "%9", []byte("x"))
	require.Error(t, err)
	assert.ErrorIs(t, err, mux.ErrNoPane)
	assert.Equal(t, "delete-buffer", r.calls[1].argv[2])
}

func TestClassify(t *testing.T) {
	tests := []struct {
		stderr string
		want   error
	}{
		{"no server running on /tmp/tmux-0/x", mux.ErrNoServer},
		{"error connecting to /tmp/tmux-0/x (No such file or directory)", mux.ErrNoServer},
		{"can't find session: nope", mux.ErrNoSession},
		{"can't find pane: %99", mux.ErrNoPane},
		{"can't find window: 7", mux.ErrNoPane},
		{"unknown command: foo", ErrCommand},
	}
	for _, tt := range tests {
		t.Run(tt.stderr, func(t *testing.T) {
			assert.True(t, errors.Is(classify(tt.stderr), tt.want))
		})
	}
}

func TestSpawnNeverUsesAShell(t *testing.T) {
	assert.Equal(t, []string{"-c", "/w##1", "-e", "A=1", "--", "env", "--", "claude"},
		Spawn{Cwd: "/w#1", Env: []string{"A=1"}, Argv: []string{"claude"}}.args(),
		"one word goes through env, not sh -c")
	assert.Equal(t, []string{"--", "codex", "-c", "x=$(y)"}, Spawn{Argv: []string{"codex", "-c", "x=$(y)"}}.args())
	assert.Empty(t, Spawn{}.args(), "no command: tmux's default shell")
}

func TestSetOptionsKeepTrailingSemicolon(t *testing.T) {
	r := newStub(t, stub{})
	c := New(Socket{}, r)
	require.NoError(t, c.SetOptions(context.Background(),
		Option{Target: "%1", Name: "@party_role", Value: "x;"}, Option{Scope: "-p", Target: "%2", Name: "@a", Value: ";"}))
	assert.Equal(t, [][]string{{"set-option", "-t", "%1", "@party_role", "x;"}, {"set-option", "-p", "-t", "%2", "@a", ";"}},
		tmuxCommands(r.calls[0].argv[2:]))
}

func TestCommandNameOfAPathWithASpace(t *testing.T) {
	tests := []struct{ tmux, argv0, want string }{
		{"John", "/home/John Smith/bin/claude", "claude"},
		{"claude", "/usr/bin/claude", "claude"},
		{"node", "node", "node"},
		{"bash", "-bash", "bash"},
		{"sh", "/bin/sh", "sh"},
		{"other", "/home/John Smith/bin/claude", "other"}, // not tmux's cut: tmux's value stands
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, commandName(tt.tmux, tt.argv0), tt.argv0)
	}
}

func TestSocketPathThatIsNoSocketIsRefused(t *testing.T) {
	dir, err := os.MkdirTemp("", "sk") // short: a socket path has ~100 bytes
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, []byte("root:x:0:0"), 0o600))
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	tests := []struct {
		name string
		path string
		ok   bool
	}{
		{"a socket", sock, true},
		{"nothing yet: a server made there makes it", filepath.Join(dir, "new"), true},
		{"no -S", "", true},
		{"a file", file, false},
		{"a directory", dir, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Socket{Path: tt.path}.Check()
			if tt.ok {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrSocket)
			c := New(Socket{Path: tt.path}, newStub(t)) // a call fails the test
			_, err = c.ListSessions(context.Background())
			assert.ErrorIs(t, err, ErrSocket, "not taken for a server that does not run")
		})
	}
}
