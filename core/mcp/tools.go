package mcp

import (
	"context"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/task"
)

// The tools' arguments and results. The SDK derives each tool's input and
// output schema from these types: a field without omitempty is required,
// the jsonschema tag is its description.

// ThreadArgs name a thread.
type ThreadArgs struct {
	Thread string `json:"thread,omitempty" jsonschema:"the thread (default: every thread for inbox_read, the thread default for inbox_list)"`
}

// Messages are a list of messages.
type Messages struct {
	Messages []Message `json:"messages" jsonschema:"the messages, oldest first"`
}

// Message is one message of a thread.
type Message struct {
	Seq    int64     `json:"seq" jsonschema:"its number in the store"`
	Thread string    `json:"thread" jsonschema:"its thread"`
	From   string    `json:"from" jsonschema:"who sent it: a role, else the operator's name for the sender"`
	To     string    `json:"to" jsonschema:"the role it is for"`
	Text   string    `json:"text" jsonschema:"the message"`
	At     time.Time `json:"at" jsonschema:"when it was sent"`
	// ID and State are a message to another host's (To is ROLE@HOST):
	// recorded in this session's outbox, which forwards it.
	ID    string `json:"id,omitempty" jsonschema:"a message to another host: its id"`
	State string `json:"state,omitempty" jsonschema:"a message to another host: pending, forwarded or failed"`
}

// SendArgs are inbox_send's arguments.
type SendArgs struct {
	To     string `json:"to" jsonschema:"the role whose inbox gets the message; ROLE@HOST: a role on another host (forwarded once by the supervisor)"`
	Thread string `json:"thread,omitempty" jsonschema:"the thread (default: default)"`
	Text   string `json:"text" jsonschema:"the message"`
}

// HeartbeatArgs are heartbeat's arguments.
type HeartbeatArgs struct {
	Status string `json:"status,omitempty" jsonschema:"what the agent is doing, one line"`
}

// Done is the result of a call that returns nothing else.
type Done struct {
	OK bool `json:"ok" jsonschema:"always true"`
}

// TriggerArgs are trigger's arguments.
type TriggerArgs struct {
	Role   string `json:"role" jsonschema:"the role of the supervised agent to trigger"`
	Text   string `json:"text" jsonschema:"the work, as the agent will read it"`
	Thread string `json:"thread,omitempty" jsonschema:"the thread it belongs to (default: default)"`
	Reason string `json:"reason,omitempty" jsonschema:"why, one line (shown in the envelope)"`
	ID     string `json:"id,omitempty" jsonschema:"its id, the idempotency key: the same id given twice is one trigger (default: a new one)"`
	Wait   bool   `json:"wait,omitempty" jsonschema:"wait until the trigger ends and return its answer"`
	// TimeoutSeconds bounds the wait.
	TimeoutSeconds int `json:"timeout_seconds,omitempty" jsonschema:"how long wait waits, in seconds (default: supervise.turnTimeout)"`
}

// IDArgs name a trigger or a task.
type IDArgs struct {
	ID string `json:"id" jsonschema:"the id"`
}

// Trigger is a trigger and where it stands.
type Trigger struct {
	ID        string    `json:"id" jsonschema:"its id"`
	Role      string    `json:"role" jsonschema:"the role it is for"`
	Thread    string    `json:"thread" jsonschema:"its thread"`
	From      string    `json:"from,omitempty" jsonschema:"the role that asked for it (none: the operator)"`
	Status    string    `json:"status" jsonschema:"queued, deferred, triggering, delivered, retrying, acked, fallback_resume, spawn_recovery, completed or failed"`
	Class     string    `json:"class,omitempty" jsonschema:"why it failed, or why it waits"`
	Error     string    `json:"error,omitempty" jsonschema:"what went wrong, in words"`
	AckSource string    `json:"ack_source,omitempty" jsonschema:"what acknowledged it: cursor, heartbeat, event, line, answer or resume"`
	Answer    *string   `json:"answer,omitempty" jsonschema:"the agent's answer, once it completed"`
	Created   bool      `json:"created,omitempty" jsonschema:"this call recorded it (false: the id existed)"`
	CreatedAt time.Time `json:"created_at" jsonschema:"when it was recorded"`
}

// Runtimes are the supervisor's runtimes.
type Runtimes struct {
	Runtimes []Runtime `json:"runtimes" jsonschema:"the agent panes party started"`
}

// Runtime is an agent pane party started, as the supervisor records it.
type Runtime struct {
	Role          string    `json:"role" jsonschema:"its role"`
	Agent         string    `json:"agent" jsonschema:"claude, codex, gemini or generic"`
	Status        string    `json:"status" jsonschema:"where it stands (idle, busy, stalled, …)"`
	Target        string    `json:"target" jsonschema:"its tmux target"`
	Pane          string    `json:"pane" jsonschema:"its tmux pane"`
	OperatorBusy  bool      `json:"operator_busy" jsonschema:"a person is typing in it"`
	LastHeartbeat time.Time `json:"last_heartbeat_at,omitzero" jsonschema:"its last heartbeat"`
	Heartbeat     string    `json:"heartbeat_status,omitempty" jsonschema:"what its last heartbeat said"`
	LastTrigger   string    `json:"last_trigger_id,omitempty" jsonschema:"its last trigger"`
}

// TalkArgs are talk's arguments.
type TalkArgs struct {
	Role           string `json:"role" jsonschema:"the role of the agent to talk to"`
	Text           string `json:"text" jsonschema:"the message"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"how long to wait for the answer, in seconds, time queued behind other talks included (default: defaults.timeout)"`
}

// TaskListArgs select tasks.
type TaskListArgs struct {
	Milestone string `json:"milestone,omitempty" jsonschema:"only the tasks of this milestone"`
	Status    string `json:"status,omitempty" jsonschema:"only the tasks in this status: pending, in_progress or done"`
	Assignee  string `json:"assignee,omitempty" jsonschema:"only the tasks assigned to this role"`
}

// Tasks are a list of tasks.
type Tasks struct {
	Tasks []Task `json:"tasks" jsonschema:"the tasks"`
}

// Task is one of a team's tasks.
type Task struct {
	ID        string    `json:"id" jsonschema:"its id"`
	Title     string    `json:"title" jsonschema:"what is to be done"`
	Status    string    `json:"status" jsonschema:"pending, in_progress or done"`
	Assignee  string    `json:"assignee,omitempty" jsonschema:"the role it is assigned to"`
	Milestone string    `json:"milestone,omitempty" jsonschema:"its milestone"`
	Issue     int       `json:"issue,omitempty" jsonschema:"its GitHub issue (github store)"`
	Created   time.Time `json:"created" jsonschema:"when it was added"`
	Updated   time.Time `json:"updated" jsonschema:"when it last changed"`
}

// TaskAddArgs are task_add's arguments.
type TaskAddArgs struct {
	Title     string `json:"title" jsonschema:"what is to be done"`
	ID        string `json:"id,omitempty" jsonschema:"its id (default: the next number)"`
	Milestone string `json:"milestone,omitempty" jsonschema:"its milestone"`
	Assignee  string `json:"assignee,omitempty" jsonschema:"the role it is assigned to"`
}

// TaskUpdateArgs are task_update's arguments.
type TaskUpdateArgs struct {
	ID        string  `json:"id" jsonschema:"the task"`
	Status    string  `json:"status,omitempty" jsonschema:"its new status: pending, in_progress or done"`
	Assignee  *string `json:"assignee,omitempty" jsonschema:"its new assignee, a role (empty: nobody)"`
	Milestone *string `json:"milestone,omitempty" jsonschema:"its new milestone (empty: none)"`
}

// Empty are the arguments of a tool that takes none.
type Empty struct{}

// tools registers every tool on srv.
func (s *Server) tools(srv *sdk.Server) {
	add(s, srv, "inbox_read", "Read your unread messages (of one thread, or all) and mark them read: reading a thread acknowledges the trigger that told you of it.",
		func(ctx context.Context, _ *sdk.CallToolRequest, a ThreadArgs) (Messages, error) {
			ms, err := s.ops.InboxRead(ctx, a.Thread)
			return messagesOf(ms), err
		})
	add(s, srv, "inbox_send", "Put a message into a role's inbox; the supervisor triggers that agent to read it. The message is from you.",
		func(ctx context.Context, _ *sdk.CallToolRequest, a SendArgs) (Message, error) {
			m, err := s.ops.InboxSend(ctx, supervise.MessageRequest{To: a.To, Thread: a.Thread, Text: a.Text})
			return messageOf(m), err
		})
	add(s, srv, "inbox_list", "List the messages of a thread that you may see (yours: from you or to you; the operator: all).",
		func(ctx context.Context, _ *sdk.CallToolRequest, a ThreadArgs) (Messages, error) {
			ms, err := s.ops.InboxList(ctx, a.Thread)
			return messagesOf(ms), err
		})
	add(s, srv, "heartbeat", "Tell the supervisor you are alive, and what you are doing; it acknowledges a trigger delivered to you.",
		func(ctx context.Context, _ *sdk.CallToolRequest, a HeartbeatArgs) (Done, error) {
			return Done{OK: true}, s.ops.Heartbeat(ctx, a.Status)
		})
	add(s, srv, "trigger", "Give a supervised agent a piece of work; the supervisor delivers it once and sees it acknowledged. With wait, return once it ended, with the agent's answer.",
		s.trigger)
	add(s, srv, "trigger_status", "Show a trigger you asked for or that is for you, and where it stands.",
		func(ctx context.Context, _ *sdk.CallToolRequest, a IDArgs) (Trigger, error) {
			t, err := s.ops.TriggerShow(ctx, a.ID)
			return triggerOf(t, false), err
		})
	add(s, srv, "runtimes", "List the team's supervised agents: role, agent, status.",
		func(ctx context.Context, _ *sdk.CallToolRequest, _ Empty) (Runtimes, error) {
			rts, err := s.ops.Runtimes(ctx)
			out := Runtimes{Runtimes: make([]Runtime, 0, len(rts))}
			for _, r := range rts {
				out.Runtimes = append(out.Runtimes, Runtime{Role: r.Role, Agent: r.Agent, Status: string(r.Status), Target: r.Target, Pane: r.Pane,
					OperatorBusy: r.OperatorBusy, LastHeartbeat: r.LastHeartbeat, Heartbeat: r.Heartbeat, LastTrigger: r.LastTrigger})
			}
			return out, err
		})
	add(s, srv, "talk", "Send a message to another agent of the team and wait for its answer.",
		s.talk)
	add(s, srv, "task_list", "List the team's tasks, optionally of one milestone, status or assignee.",
		func(ctx context.Context, _ *sdk.CallToolRequest, a TaskListArgs) (Tasks, error) {
			f := task.Filter{Milestone: a.Milestone, Assignee: a.Assignee}
			if a.Status != "" {
				st, err := task.ParseStatus(a.Status)
				if err != nil {
					return Tasks{}, err
				}
				f.Status = st
			}
			ts, err := s.ops.Tasks(ctx, f)
			out := Tasks{Tasks: make([]Task, 0, len(ts))}
			for _, t := range ts {
				out.Tasks = append(out.Tasks, taskOf(t))
			}
			return out, err
		})
	add(s, srv, "task_add", "Add a task to the team's list.",
		func(ctx context.Context, _ *sdk.CallToolRequest, a TaskAddArgs) (Task, error) {
			t, err := s.ops.AddTask(ctx, task.NewTask{ID: a.ID, Title: a.Title, Milestone: a.Milestone, Assignee: a.Assignee})
			return taskOf(t), err
		})
	add(s, srv, "task_update", "Change a task's status, assignee or milestone.",
		func(ctx context.Context, _ *sdk.CallToolRequest, a TaskUpdateArgs) (Task, error) {
			t, err := s.ops.UpdateTask(ctx, TaskChange(a))
			return taskOf(t), err
		})
	add(s, srv, "task_show", "Show one task.",
		func(ctx context.Context, _ *sdk.CallToolRequest, a IDArgs) (Task, error) {
			t, err := s.ops.Task(ctx, a.ID)
			return taskOf(t), err
		})
}

// trigger records a trigger and, with wait, waits for its end, telling
// the client's progress token meanwhile.
func (s *Server) trigger(ctx context.Context, req *sdk.CallToolRequest, a TriggerArgs) (Trigger, error) {
	timeout, err := seconds(a.TimeoutSeconds)
	if err != nil {
		return Trigger{}, err
	}
	tr := supervise.TriggerRequest{ID: a.ID, Role: a.Role, Thread: a.Thread, Reason: a.Reason, Text: a.Text}
	if a.Wait {
		if tr.ID == "" {
			// Named here, so that the progress can say which.
			tr.ID = supervise.NewID()
		}
		defer s.progress(ctx, req, fmt.Sprintf("waiting for trigger %s to %s to end", tr.ID, a.Role))()
	}
	t, created, err := s.ops.Trigger(ctx, tr, a.Wait, timeout)
	return triggerOf(t, created), err
}

// talk talks to an agent and waits for its answer, telling the client's
// progress token meanwhile.
func (s *Server) talk(ctx context.Context, req *sdk.CallToolRequest, a TalkArgs) (TalkAnswer, error) {
	timeout, err := seconds(a.TimeoutSeconds)
	if err != nil {
		return TalkAnswer{}, err
	}
	if a.Role == "all" {
		return TalkAnswer{}, fmt.Errorf("%w: talk to one role at a time (\"all\" is party talk's)", errUsage)
	}
	defer s.progress(ctx, req, "waiting for "+a.Role+"'s answer")()
	return s.ops.Talk(ctx, a.Role, a.Text, timeout)
}

// seconds is a timeout in seconds as a duration; zero is the default.
func seconds(n int) (time.Duration, error) {
	if n < 0 {
		return 0, fmt.Errorf("%w: timeout_seconds %d: want 0 (the default) or more", errUsage, n)
	}
	return time.Duration(n) * time.Second, nil
}

func messagesOf(ms []supervise.Message) Messages {
	out := Messages{Messages: make([]Message, 0, len(ms))}
	for _, m := range ms {
		out.Messages = append(out.Messages, messageOf(m))
	}
	return out
}

func messageOf(m supervise.Message) Message {
	out := Message{Seq: m.Seq, Thread: m.Thread, From: m.From, To: m.To, Text: m.Text, At: m.At}
	if m.Forward != nil {
		out.ID, out.State = m.ID, string(m.Forward.State)
	}
	return out
}

func triggerOf(t supervise.Trigger, created bool) Trigger {
	return Trigger{ID: t.ID, Role: t.Role, Thread: t.Thread, From: t.From, Status: string(t.Status), Class: string(t.Class),
		Error: t.Error, AckSource: t.AckSource, Answer: t.Answer, Created: created, CreatedAt: t.Created}
}

func taskOf(t task.Task) Task {
	return Task{ID: t.ID, Title: t.Title, Status: string(t.Status), Assignee: t.Assignee, Milestone: t.Milestone,
		Issue: t.Issue, Created: t.Created, Updated: t.Updated}
}
