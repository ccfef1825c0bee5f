package party

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/exitcode"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/tmux"
)

// noServer is a tmux runner with no server behind it; it counts the calls.
type noServer struct{ calls *int }

func (r noServer) Run(_ context.Context, argv []string, _ []byte) ([]byte, error) {
	*r.calls++
	return nil, &tmux.CmdError{Args: argv, Stderr: "no server running on /tmp/tmux-1/x", ExitCode: 1, Err: mux.ErrNoServer}
}

// testEnv is an Env on a server that is not running, in the working
// directory wd, for the session s; calls counts the tmux calls.
func testEnv(t *testing.T, wd string) (env *Env, stderr *bytes.Buffer, calls *int) {
	t.Helper()
	calls, stderr = new(int), &bytes.Buffer{}
	return &Env{Tmux: tmux.New(tmux.Socket{Name: "party-test"}, noServer{calls}), Clock: clock.Real{},
		Getenv: os.Getenv, Getwd: func() (string, error) { return wd, nil },
		Session: "s", Stderr: stderr, Exe: "/nonexistent/party"}, stderr, calls
}

func TestSendKeepsTheFailedOutcome(t *testing.T) {
	env, _, calls := testEnv(t, t.TempDir())
	s, err := Send(t.Context(), env, SendRequest{Role: "codex", Text: "hi"})
	require.Error(t, err)
	assert.ErrorIs(t, err, mux.ErrNoSession)
	assert.Positive(t, *calls, "the role was looked up")
	assert.Equal(t, Sent{Role: "codex", Result: deliver.Result{Outcome: deliver.Failed}, Error: &exitcode.ErrorInfo{Code: "NO_SESSION", Message: err.Error()}}, s,
		"an unresolved role has no session or pane, failed, and says its error as --json does")
}
