package party

import (
	"context"
	"io"
	"time"

	"github.com/partyhq/party/core/blocks"
	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/dash"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/launch"
	"github.com/partyhq/party/core/notify"
	"github.com/partyhq/party/core/record"
	"github.com/partyhq/party/core/registry"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/task"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/core/wait"
	"github.com/partyhq/party/core/worktree"
)

// The types of the lower packages that commands fill or print, named here
// so that the CLI imports core/party only (cmd/party/cli's import test).

type (
	// Clock is the source of time (core/clock).
	Clock = clock.Clock
	// RealClock is the wall clock.
	RealClock = clock.Real
	// TmuxRunner runs tmux (core/tmux); a test passes a stub.
	TmuxRunner = tmux.Runner
	// Socket names the tmux server (-L name or -S path).
	Socket = tmux.Socket
	// LogOptions are party log's filters (core/wait).
	LogOptions = wait.LogOptions
	// StartOptions are party start's inputs (core/session).
	StartOptions = session.StartOptions
	// AgentSession is what a stored team knows of an agent's own session
	// (core/session).
	AgentSession = session.AgentSession
	// Terminal is the terminal a command attaches to (core/session).
	Terminal = session.Terminal
	// Setting is one configuration key's value and source (core/config).
	Setting = config.Setting
	// RegistryEntry is one name of ./.party/agents.json (core/registry).
	RegistryEntry = registry.Entry
	// NotifyResult is what one notification sink did (core/notify).
	NotifyResult = notify.Result
	// NotifyStatus says whether the notifier of a session runs.
	NotifyStatus = notify.Status
	// TriggerRecord, Message, MessageRequest, AuditEvent and Runtime are
	// the supervisor's (core/supervise).
	Runtime        = supervise.Runtime
	TriggerRecord  = supervise.Trigger
	Message        = supervise.Message
	MessageRequest = supervise.MessageRequest
	AuditEvent     = supervise.AuditEvent
	// DashModel is what party dash shows (core/dash).
	DashModel = dash.Model
	// Listed is one party session on the server (core/session).
	Listed = session.Listed
	// Tree is an agent's git worktree, MergeOptions how party merge merges
	// it (core/worktree).
	Tree         = worktree.Tree
	MergeOptions = worktree.MergeOptions
)

// AllAgents in StartOptions.Worktree gives every agent pane a worktree.
const AllAgents = session.AllAgents

// ExecSpec is the hidden subcommand a pane runs to start its program
// (core/launch).
const ExecSpec = launch.Subcommand

// ErrHookPayload is a hook payload party could not read (core/hook).
var ErrHookPayload = hook.ErrPayload

// Exec replaces this process with the program of the spec at path
// (launch.Exec); it returns only on failure.
func Exec(path string, environ []string) error { return launch.Exec(path, environ) }

// ParseDuration reads a duration as flags and config take it: 500ms, 2s,
// or milliseconds (config.ParseDuration).
func ParseDuration(s string) (time.Duration, error) { return config.ParseDuration(s) }

// CheckFlag checks d, given to flag, against the bounds of config key
// (config.CheckFlag).
func CheckFlag(flag, key string, d time.Duration) error { return config.CheckFlag(flag, key, d) }

// ConfigKeys names the configuration keys; trusted: those only a trusted
// repository's file may set (config.KeyNames).
func ConfigKeys(trusted bool) []string { return config.KeyNames(trusted) }

// FormatEvent is one event-log line as party log prints it
// (state.FormatEvent); false for a line it cannot read.
func FormatEvent(line []byte, loc *time.Location) (string, bool) { return state.FormatEvent(line, loc) }

// DashPlain is the dashboard m as plain text (dash.Plain).
func DashPlain(m DashModel) string { return dash.Plain(m) }

// Blocks are the tagged blocks of text and the malformed ones' errors
// (blocks.Parse).
func Blocks(text string) ([]blocks.Block, []blocks.Error) { return blocks.Parse(text) }

// Sessions lists the party sessions on env's server (session.List).
func Sessions(ctx context.Context, env *Env) ([]Listed, error) { return session.List(ctx, env.Tmux) }

// ReadRecording reads an asciicast recording (record.Read).
func ReadRecording(r io.Reader) (record.Header, []record.Event, error) { return record.Read(r) }

// PlayRecording writes events to w at their times, scaled by speed, or at
// once with noDelay (record.Play).
func PlayRecording(ctx context.Context, c Clock, w io.Writer, events []record.Event, speed float64, noDelay bool) error {
	return record.Play(ctx, c, w, events, speed, noDelay)
}

// SetConfig sets key to value in the local configuration file of the
// working directory, or the global one, and returns the file's path
// (config.SetIn).
func SetConfig(env *Env, global bool, key, value string) (string, error) {
	cwd, err := env.Getwd()
	if err != nil {
		return "", err
	}
	return config.SetIn(env.Getenv, cwd, global, key, value, env.Clock.Now())
}

// The task types party pm's commands fill (core/task).
type (
	NewTask      = task.NewTask
	TaskFilter   = task.Filter
	TaskTerminal = task.Terminal
)

// TaskDone is the status of a finished task.
const TaskDone = task.Done

// ParseTaskStatus reads a task status: pending, in_progress or done.
func ParseTaskStatus(s string) (task.Status, error) { return task.ParseStatus(s) }

// Printable is s with what a terminal would act on made visible
// (task.Printable).
func Printable(s string) string { return task.Printable(s) }

// The review coordinator's types and helpers that party review's commands
// fill and print (core/review).
type (
	ReviewEvent       = review.Event
	ReviewEventKind   = review.EventKind
	ReviewPhase       = review.Phase
	ReviewState       = review.Status
	ReviewProc        = daemon.Proc
	ReviewEvidenceRow = review.EvidenceRow
)

// The kinds of review signals the commands send.
const (
	ReviewRequest         = review.EvRequest
	ReviewResume          = review.EvResume
	ReviewPrompt          = review.EvPrompt
	ReviewSelfReview      = review.EvSelfReview
	ReviewApprove         = review.EvApprove
	ReviewReReview        = review.EvReReview
	ReviewNeedsDiscussion = review.EvNeedsDiscussion
	ReviewAsk             = review.EvAsk
	ReviewEvidence        = review.EvEvidence
	ReviewClearEvidence   = review.EvClearEvidence
)

// ParseReviewState checks s names a review state (review.ParseState).
func ParseReviewState(s string) error {
	_, err := review.ParseState(s)
	return err
}

// ParseEvidenceKind reads a kind of review evidence (review.ParseKind).
func ParseEvidenceKind(s string) (review.Kind, error) { return review.ParseKind(s) }

// ReviewLabel is a review state and phase as party prints them
// (review.Label).
func ReviewLabel(s review.State, p ReviewPhase) string { return review.Label(s, p) }

// WriteReviewStatus prints s and the coordinator proc as party review
// status does (review.WriteStatus).
func WriteReviewStatus(w io.Writer, s ReviewState, proc ReviewProc, now time.Time) {
	review.WriteStatus(w, s, proc, now)
}
