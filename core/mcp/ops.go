package mcp

import (
	"context"
	"time"

	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/task"
)

// Ops are the operations of party the tools call, each as the caller the
// server was started as (the runtime of its token, else the operator).
// core/party implements them over its own operations; a test fakes them.
type Ops interface {
	// InboxRead is the caller's unread messages (of thread, or all),
	// marked read: the caller's read cursor moves, which acknowledges a
	// trigger of that thread.
	InboxRead(ctx context.Context, thread string) ([]supervise.Message, error)
	InboxSend(ctx context.Context, req supervise.MessageRequest) (supervise.Message, error)
	// InboxList is a thread's messages ("": the default thread), as much
	// of it as the caller may see.
	InboxList(ctx context.Context, thread string) ([]supervise.Message, error)
	Heartbeat(ctx context.Context, status string) error
	// Trigger records a trigger; with wait it returns once it ended (or
	// timeout passed: zero is the supervisor's turn timeout).
	Trigger(ctx context.Context, req supervise.TriggerRequest, wait bool, timeout time.Duration) (supervise.Trigger, bool, error)
	TriggerShow(ctx context.Context, id string) (supervise.Trigger, error)
	Runtimes(ctx context.Context) ([]supervise.Runtime, error)
	// Talk delivers text to the agent of role and waits for its answer
	// (timeout zero: defaults.timeout); ctx ending takes back a paste
	// not yet submitted and stops waiting, as Ctrl-C does to party talk.
	Talk(ctx context.Context, role, text string, timeout time.Duration) (TalkAnswer, error)

	Tasks(ctx context.Context, f task.Filter) ([]task.Task, error)
	AddTask(ctx context.Context, t task.NewTask) (task.Task, error)
	UpdateTask(ctx context.Context, u TaskChange) (task.Task, error)
	Task(ctx context.Context, id string) (task.Task, error)

	// Code is err's stable code, the one party's --json errors carry.
	Code(err error) string
}

// TalkAnswer is what a talk brought back.
type TalkAnswer struct {
	Role    string `json:"role" jsonschema:"the role talked to"`
	Pane    string `json:"pane,omitempty" jsonschema:"its tmux pane"`
	Outcome string `json:"outcome" jsonschema:"how the text was delivered: submitted, queued, unconfirmed or failed"`
	Answer  string `json:"answer" jsonschema:"the agent's answer"`
	Via     string `json:"via,omitempty" jsonschema:"where the answer was read: the agent's events, its transcript, the screen or a marker"`
	MS      int64  `json:"ms" jsonschema:"how long the talk took, in milliseconds"`
}

// TaskChange is a change of task ID: a status ("": unchanged), and an
// assignee and a milestone when given (given empty: cleared).
type TaskChange struct {
	ID, Status          string
	Assignee, Milestone *string
}
