package exitcode

import (
	"context"
	"errors"
	"os/exec"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/hosts"
	"github.com/partyhq/party/core/iterm"
	"github.com/partyhq/party/core/mcp"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/notify"
	"github.com/partyhq/party/core/registry"
	"github.com/partyhq/party/core/relay"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/roles"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/spend"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/talk"
	"github.com/partyhq/party/core/task"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/core/usage"
	"github.com/partyhq/party/core/wait"
	"github.com/partyhq/party/core/worktree"
)

// Exit codes, documented in docs/exit-codes.md (make docs writes it from
// this file and docs.go). New ones are appended.
const (
	ExitOK          = 0
	ExitError       = 1
	ExitUsage       = 2 // bad usage, missing config, session not determined
	ExitNotFound    = 3 // pane, role, session or server not found, or pane dead
	ExitTimeout     = 4
	ExitConflict    = 5
	ExitUnconfirmed = 6  // delivered but the submission was not seen
	ExitInputBusy   = 7  // the agent's input box holds someone else's text
	ExitFallback    = 8  // the supervisor cannot trigger that pane: fall back to party send/talk
	ExitBudget      = 9  // the agent's budget is spent: --force --why to go on
	ExitHost        = 10 // another host cannot be reached over SSH, or has no party
	ExitVersion     = 11 // another host runs another party version
	ExitInterrupted = 130
)

// codes maps each known error to its stable code (--json) and exit status.
// It is the one place where errors become exit codes.
var codes = []struct {
	err  error
	code string
	exit int
}{
	{roles.ErrAmbiguous, "ROLE_AMBIGUOUS", ExitNotFound},
	{roles.ErrNotFound, "ROLE_NOT_FOUND", ExitNotFound},
	{roles.ErrUnresolved, "ROUTING_UNRESOLVED", ExitNotFound},
	{deliver.ErrPaneDead, "PANE_DEAD", ExitNotFound},
	{deliver.ErrNotRunning, "AGENT_NOT_RUNNING", ExitNotFound},
	{deliver.ErrDialog, "DIALOG_ON_SCREEN", ExitError},
	{deliver.ErrUnconfirmed, "UNCONFIRMED", ExitUnconfirmed},
	{deliver.ErrEmpty, "EMPTY_MESSAGE", ExitUsage},
	{deliver.ErrInputBusy, "INPUT_NOT_EMPTY", ExitInputBusy},
	{deliver.ErrNotReady, "AGENT_NOT_READY", ExitTimeout},
	{deliver.ErrInterpreted, "INTERPRETED_TEXT", ExitUsage},
	{deliver.ErrNotAgent, "NOT_AN_AGENT", ExitUsage},
	{wait.ErrTimeout, "TIMEOUT", ExitTimeout},
	{wait.ErrTurnFailed, "TURN_FAILED", ExitError},
	{wait.ErrPermission, "PERMISSION_PROMPT", ExitError},
	{wait.ErrInterrupted, "TURN_INTERRUPTED", ExitError},
	{wait.ErrAnswerCut, "ANSWER_CUT", ExitError},
	{talk.ErrBusy, "AGENT_BUSY", ExitConflict},
	{review.ErrNoCoordinator, "NO_COORDINATOR", ExitNotFound},
	{review.ErrNoReview, "NO_REVIEW", ExitConflict},
	{review.ErrEvidence, "EVIDENCE_MISSING", ExitConflict},
	{review.ErrForbidden, "FORBIDDEN", ExitConflict},
	{review.ErrBadState, "USAGE", ExitUsage},
	{review.ErrBadEvent, "USAGE", ExitUsage},
	{review.ErrIllegal, "ILLEGAL_TRANSITION", ExitConflict},
	{review.ErrRunning, "CONFLICT", ExitConflict},
	{review.ErrFindings, "INVALID_FINDINGS", ExitUsage},
	{registry.ErrConflict, "CONFLICT", ExitConflict},
	{mcp.ErrTaken, "CONFLICT", ExitConflict},
	{mcp.ErrOperatorExists, "CONFLICT", ExitConflict},
	{mcp.ErrNoOperator, "NOT_FOUND", ExitNotFound},
	{mcp.ErrAgentCLI, "AGENT_CLI_FAILED", ExitError},
	{relay.ErrStalled, "STALLED", ExitTimeout},
	{relay.ErrRounds, "OUT_OF_ROUNDS", ExitError},
	{session.ErrExists, "SESSION_EXISTS", ExitError},
	{session.ErrNoTeam, "NOT_FOUND", ExitNotFound},
	{notify.ErrRunning, "CONFLICT", ExitConflict},
	{daemon.ErrRunning, "CONFLICT", ExitConflict},
	{iterm.ErrViewTaken, "SESSION_EXISTS", ExitError},
	{session.ErrUnresolved, "SESSION_UNRESOLVED", ExitUsage},
	{session.ErrAgentMissing, "AGENT_MISSING", ExitUsage},
	{task.ErrNoTeam, "NO_TEAM", ExitUsage},
	{task.ErrInvalid, "USAGE", ExitUsage},
	{task.ErrNotFound, "NOT_FOUND", ExitNotFound},
	{task.ErrCorrupt, "STORE_CORRUPT", ExitError},
	{task.ErrUnavailable, "STORE_UNAVAILABLE", ExitError},
	{task.ErrConflict, "CONFLICT", ExitConflict},
	{usage.Err, "USAGE", ExitUsage},
	{tmux.ErrName, "USAGE", ExitUsage},
	{tmux.ErrSocket, "USAGE", ExitUsage},
	{hook.ErrSettingsFile, "USAGE", ExitUsage},
	{hosts.ErrName, "USAGE", ExitUsage},
	{hosts.ErrVersion, "VERSION_MISMATCH", ExitVersion},
	{hosts.ErrNoBridge, "REMOTE_TOO_OLD", ExitVersion},
	{hosts.ErrAuth, "HOST_AUTH_FAILED", ExitHost},
	{hosts.ErrHostKey, "HOST_KEY_UNVERIFIED", ExitHost},
	{hosts.ErrTimeout, "HOST_TIMEOUT", ExitHost},
	{hosts.ErrLost, "HOST_CONNECTION_LOST", ExitHost},
	{hosts.ErrUnreachable, "HOST_UNREACHABLE", ExitHost},
	{hosts.ErrNoParty, "NO_PARTY_THERE", ExitHost},
	{hosts.ErrRemote, "REMOTE_FAILED", ExitError},
	{config.ErrInvalid, "CONFIG_INVALID", ExitUsage},
	{config.ErrUnknownKey, "USAGE", ExitUsage},
	{mux.ErrNoServer, "NO_SERVER", ExitNotFound},
	{mux.ErrNoSession, "NO_SESSION", ExitNotFound},
	{mux.ErrNoPane, "NO_PANE", ExitNotFound},
	{exec.ErrNotFound, "TMUX_MISSING", ExitError},
	{supervise.ErrUnmanaged, "FALLBACK_REQUIRED", ExitFallback},
	{supervise.ErrBlocked, "THREAD_AUTO_BLOCKED", ExitConflict},
	{supervise.ErrIDConflict, "CONFLICT", ExitConflict},
	{supervise.ErrToken, "BAD_TOKEN", ExitUsage},
	{supervise.ErrForbidden, "FORBIDDEN", ExitConflict},
	{supervise.ErrBadInput, "USAGE", ExitUsage},
	{supervise.ErrNotFound, "NOT_FOUND", ExitNotFound},
	{supervise.ErrStore, "STORE_CORRUPT", ExitError},
	{supervise.ErrNotRunning, "NO_SUPERVISOR", ExitNotFound},
	{supervise.ErrNoAnswer, "NO_SUPERVISOR", ExitNotFound},
	{supervise.ErrRunning, "CONFLICT", ExitConflict},
	{supervise.ErrTimeout, "TIMEOUT", ExitTimeout},
	{state.ErrRuntimeDir, "UNSAFE_RUNTIME_DIR", ExitError},
	{supervise.ErrFailed, "SUPERVISOR_FAILED", ExitError},
	{spend.ErrBudget, "BUDGET_EXCEEDED", ExitBudget},
	{worktree.ErrGitMissing, "GIT_MISSING", ExitError},
	{worktree.ErrNotRepo, "NOT_A_REPOSITORY", ExitUsage},
	{worktree.ErrBare, "BARE_REPOSITORY", ExitUsage},
	{worktree.ErrSubmodules, "SUBMODULES", ExitUsage},
	{worktree.ErrNoBase, "BASE_NOT_FOUND", ExitNotFound},
	{worktree.ErrTaken, "WORKTREE_TAKEN", ExitConflict},
	{worktree.ErrDirty, "UNCOMMITTED_CHANGES", ExitConflict},
	{worktree.ErrUnmerged, "UNMERGED", ExitConflict},
	{worktree.ErrConflict, "CONFLICT", ExitConflict},
	{worktree.ErrSetup, "WORKTREE_SETUP_FAILED", ExitError},
	{session.ErrNoWorktree, "NO_WORKTREE", ExitNotFound},
	{context.Canceled, "INTERRUPTED", ExitInterrupted},
	{context.DeadlineExceeded, "TIMEOUT", ExitTimeout},
}

// classExits are the exit statuses of a failed trigger's classes.
var classExits = map[supervise.Class]int{
	supervise.TargetNotFound: ExitNotFound, supervise.PaneDead: ExitNotFound,
	supervise.AckTimeout: ExitTimeout, supervise.DeferTimeout: ExitTimeout, supervise.AgentStalled: ExitTimeout,
	supervise.OperatorBusy: ExitInputBusy, supervise.ThreadBlocked: ExitConflict,
	supervise.FallbackRequired: ExitFallback,
	// SEND_KEYS_ERROR, REGISTRY_DRIFT, TRIGGER_RATE_LIMITED: ExitError
}

// Classify returns the stable code and the exit status of err: a failed
// trigger's are its class's; a supervisor down for a reason
// (*supervise.DownError) has that reason's code and status, when the
// table has it.
func Classify(err error) (string, int) {
	var failed *supervise.FailedError
	if errors.As(err, &failed) {
		if exit, ok := classExits[failed.Class]; ok {
			return string(failed.Class), exit
		}
		return string(failed.Class), ExitError
	}
	var down *supervise.DownError
	if errors.As(err, &down) {
		for _, c := range codes {
			if c.code == down.Code {
				return c.code, c.exit
			}
		}
	}
	// An error another host's party reported has that party's code,
	// and the status this table (or a failed trigger's class) gives it.
	var remote *hosts.RemoteError
	if errors.As(err, &remote) {
		for _, c := range codes {
			if c.code == remote.Code {
				return c.code, c.exit
			}
		}
		if exit, ok := classExits[supervise.Class(remote.Code)]; ok {
			return remote.Code, exit
		}
		return remote.Code, ExitError
	}
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code, c.exit
		}
	}
	return "ERROR", ExitError
}

// ErrorInfo is an error as --json reports it: its stable code and its
// message.
type ErrorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ErrorOf is err as --json reports it; nil for none.
func ErrorOf(err error) *ErrorInfo {
	if err == nil {
		return nil
	}
	code, _ := Classify(err)
	return &ErrorInfo{Code: code, Message: err.Error()}
}

// JSONFielder is an error that carries more than its code and message:
// --json prints its fields beside them ({"error": {"code", "message",
// "id", "fields"}} for a task changed elsewhere).
type JSONFielder interface {
	JSONFields() map[string]any
}

// ErrorJSON is err as --json prints it: its code, its message (message,
// which may differ from err's own), and the fields of the first error in
// its chain that has any (JSONFielder).
func ErrorJSON(err error, code, message string) map[string]any {
	e := map[string]any{}
	var jf JSONFielder
	if errors.As(err, &jf) {
		for k, v := range jf.JSONFields() {
			e[k] = v
		}
	}
	e["code"], e["message"] = code, message
	return e
}
