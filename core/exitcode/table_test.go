package exitcode

import (
	"context"
	"fmt"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/hosts"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/roles"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/task"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/core/usage"
)

func TestExitCodes(t *testing.T) {
	tests := []struct {
		err  error
		code string
		exit int
	}{
		{fmt.Errorf("x: %w", roles.ErrAmbiguous), "ROLE_AMBIGUOUS", 3},
		{fmt.Errorf("x: %w", roles.ErrNotFound), "ROLE_NOT_FOUND", 3},
		{fmt.Errorf("x: %w", roles.ErrUnresolved), "ROUTING_UNRESOLVED", 3},
		{fmt.Errorf("x: %w", deliver.ErrPaneDead), "PANE_DEAD", 3},
		{fmt.Errorf("x: %w", deliver.ErrDialog), "DIALOG_ON_SCREEN", 1},
		{fmt.Errorf("x: %w", deliver.ErrUnconfirmed), "UNCONFIRMED", 6},
		{fmt.Errorf("x: %w", session.ErrUnresolved), "SESSION_UNRESOLVED", 2},
		{fmt.Errorf("x: %w", session.ErrExists), "SESSION_EXISTS", 1},
		{fmt.Errorf("x: %w", session.ErrNoTeam), "NOT_FOUND", 3},
		{fmt.Errorf("x: %w", task.ErrNoTeam), "NO_TEAM", 2},
		{fmt.Errorf("x: %w", task.ErrInvalid), "USAGE", 2},
		{fmt.Errorf("x: %w", task.ErrNotFound), "NOT_FOUND", 3},
		{fmt.Errorf("x: %w", task.ErrCorrupt), "STORE_CORRUPT", 1},
		{fmt.Errorf("gh: %w: %w", exec.ErrNotFound, task.ErrUnavailable), "STORE_UNAVAILABLE", 1},
		{fmt.Errorf("x: %w", &task.ConflictError{ID: "1"}), "CONFLICT", 5},
		{fmt.Errorf("start: %w", review.ErrRunning), "CONFLICT", 5},
		{fmt.Errorf("stop: %w", &daemon.StopTimeoutError{PID: 7}), "CONFLICT", 5},
		{fmt.Errorf("list sessions: %w", tmux.ErrSocket), "USAGE", 2},
		{fmt.Errorf("relay role executor: %w", &deliver.NotAgentError{Pane: "%2", Kind: "shell", Why: "shell"}), "NOT_AN_AGENT", 2},
		{fmt.Errorf("x: %w", &hosts.Error{Host: "box", Reason: hosts.ReasonLost}), "HOST_CONNECTION_LOST", 10},
		{fmt.Errorf("x: %w", &hosts.Error{Host: "box", Reason: hosts.ReasonRefused}), "HOST_UNREACHABLE", 10},
		{&hosts.RemoteError{Host: "box", Code: "INPUT_NOT_EMPTY"}, "INPUT_NOT_EMPTY", 7},
		{&hosts.RemoteError{Host: "box", Code: "ACK_TIMEOUT"}, "ACK_TIMEOUT", 4},
		{&hosts.RemoteError{Host: "box", Code: "SOMETHING_NEWER"}, "SOMETHING_NEWER", 1},
		{context.Canceled, "INTERRUPTED", 130},
		{fmt.Errorf("other"), "ERROR", 1},
	}
	for _, tt := range tests {
		code, exit := Classify(tt.err)
		assert.Equal(t, tt.code, code, tt.err.Error())
		assert.Equal(t, tt.exit, exit, tt.err.Error())
	}
}

func TestErrorOf(t *testing.T) {
	assert.Nil(t, ErrorOf(nil))
	err := fmt.Errorf("send to %%1: %w", deliver.ErrInputBusy)
	assert.Equal(t, &ErrorInfo{Code: "INPUT_NOT_EMPTY", Message: err.Error()}, ErrorOf(err))
}

func TestErrorJSONAddsTheFieldsAnErrorCarries(t *testing.T) {
	conflict := fmt.Errorf("update T-1: %w", &task.ConflictError{ID: "T-1", Fields: []task.FieldDiff{{Field: "status", Cached: "pending", Remote: "done"}}})
	assert.Equal(t, map[string]any{"code": "TASK_CONFLICT", "message": "m", "id": "T-1",
		"fields": []task.FieldDiff{{Field: "status", Cached: "pending", Remote: "done"}}}, ErrorJSON(conflict, "TASK_CONFLICT", "m"))
	assert.Equal(t, map[string]any{"code": "USAGE", "message": "bad"}, ErrorJSON(usage.Err, "USAGE", "bad"), "an error without fields: code and message only")
}
