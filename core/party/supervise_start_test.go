package party

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/exitcode"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
)

func TestSupervisorFailedErrorIsItsCode(t *testing.T) {
	for _, tc := range []struct {
		name, code   string
		wantCode     string
		wantExitCode int
	}{
		{"a corrupt store", "STORE_CORRUPT", "STORE_CORRUPT", exitcode.ExitError},
		{"an unsafe runtime dir", "UNSAFE_RUNTIME_DIR", "UNSAFE_RUNTIME_DIR", exitcode.ExitError},
		{"a session gone", "NO_SESSION", "NO_SESSION", exitcode.ExitNotFound},
		{"a code without an error", "ERROR", "SUPERVISOR_FAILED", exitcode.ExitError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, exit := Classify(&SupervisorFailedError{Code: tc.code, Message: "m"})
			assert.Equal(t, tc.wantCode, code)
			assert.Equal(t, tc.wantExitCode, exit)
		})
	}
}

func TestSupervisorProcStates(t *testing.T) {
	for _, tc := range []struct {
		name      string
		daemon    *supervise.ProcState
		kept      bool // the keeper's lock is held
		wantState string
		wantDown  bool
	}{
		{"never started", nil, false, SupervisorStopped, false},
		{"stopped after serving", &supervise.ProcState{State: supervise.ProcServing}, false, SupervisorStopped, false},
		{"a run failed, restarted", &supervise.ProcState{State: supervise.ProcFailed, Error: &supervise.Failure{Code: "STORE_CORRUPT", Message: "bad"}}, true, SupervisorRestarting, true},
		{"a run failed, nothing restarts it", &supervise.ProcState{State: supervise.ProcFailed, Error: &supervise.Failure{Code: "STORE_CORRUPT", Message: "bad"}}, false, SupervisorFailed, true},
		{"given up", &supervise.ProcState{State: supervise.ProcGaveUp, Error: &supervise.Failure{Code: "STORE_CORRUPT", Message: "bad"}}, false, SupervisorFailed, true},
		{"keeper before its first run", nil, true, SupervisorStarting, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stateDir := t.TempDir()
			dir := supervise.Dir(stateDir)
			require.NoError(t, state.MkdirPrivate(dir))
			if tc.daemon != nil {
				require.NoError(t, supervise.WriteProc(dir, *tc.daemon))
			}
			if tc.kept {
				release, err := state.Hold(context.Background(), clock.Real{}, filepath.Join(dir, daemon.KeeperLock))
				require.NoError(t, err)
				defer release()
			}
			env := &Env{Getenv: func(string) string { return "" }}
			p := supervisorProc(env, stateDir)
			assert.Equal(t, tc.wantState, p.State)
			down := p.Down()
			assert.Equal(t, tc.wantDown, down != nil, "down: %v", down)
			if tc.wantDown {
				code, _ := Classify(down)
				assert.Equal(t, "STORE_CORRUPT", code)
				assert.Contains(t, p.Describe(), "STORE_CORRUPT: bad")
			}
		})
	}
}
