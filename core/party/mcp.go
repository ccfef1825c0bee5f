package party

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/partyhq/party/core/mcp"
	"github.com/partyhq/party/core/registry"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/task"
)

// ServeMCP is party mcp: party's MCP server (core/mcp) on in and out
// until the client goes, its tools party's operations over env, as the
// command's caller (the runtime of $PARTY_RUNTIME_TOKEN, else the
// operator), each call through the supervisor's API.
func ServeMCP(ctx context.Context, env *Env, in io.Reader, out io.Writer) error {
	s := mcp.NewServer(mcpOps{env}, mcp.Options{Clock: env.Clock})
	return s.Serve(ctx, &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
}

// nopWriteCloser is w with a Close that does nothing: the process's
// stdout is not the server's to close.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// mcpOps are core/mcp's operations: party's own, over env.
type mcpOps struct{ env *Env }

var _ mcp.Ops = mcpOps{}

func (o mcpOps) InboxRead(ctx context.Context, thread string) ([]supervise.Message, error) {
	return InboxRead(ctx, o.env, thread)
}

func (o mcpOps) InboxSend(ctx context.Context, req supervise.MessageRequest) (supervise.Message, error) {
	return InboxSend(ctx, o.env, req)
}

func (o mcpOps) InboxList(ctx context.Context, thread string) ([]supervise.Message, error) {
	return InboxList(ctx, o.env, thread)
}

func (o mcpOps) Heartbeat(ctx context.Context, status string) error {
	return Heartbeat(ctx, o.env, status)
}

func (o mcpOps) Trigger(ctx context.Context, req supervise.TriggerRequest, wait bool, timeout time.Duration) (supervise.Trigger, bool, error) {
	res, err := Trigger(ctx, o.env, TriggerOptions{TriggerRequest: req, Wait: wait, Timeout: timeout})
	return res.Trigger, res.Created, err
}

func (o mcpOps) TriggerShow(ctx context.Context, id string) (supervise.Trigger, error) {
	return TriggerShow(ctx, o.env, id)
}

func (o mcpOps) Runtimes(ctx context.Context) ([]supervise.Runtime, error) {
	return Runtimes(ctx, o.env)
}

func (o mcpOps) Talk(ctx context.Context, role, text string, timeout time.Duration) (mcp.TalkAnswer, error) {
	out, err := Talk(ctx, o.env, TalkOptions{Role: role, Text: text, Wait: true, Timeout: timeout})
	if err != nil {
		return mcp.TalkAnswer{}, err
	}
	r := out[0] // one role: core/mcp refuses "all"
	a := mcp.TalkAnswer{Role: r.Role, Pane: r.Pane, Outcome: string(r.Outcome), Via: r.Via, MS: r.MS}
	if r.Answer != nil {
		a.Answer = *r.Answer
	}
	return a, r.Err
}

func (o mcpOps) Tasks(ctx context.Context, f task.Filter) ([]task.Task, error) {
	pm, err := OpenPM(ctx, o.env, PMOptions{})
	if err != nil {
		return nil, err
	}
	return pm.Store.Tasks(ctx, f)
}

func (o mcpOps) AddTask(ctx context.Context, t task.NewTask) (task.Task, error) {
	pm, err := OpenPM(ctx, o.env, PMOptions{})
	if err != nil {
		return task.Task{}, err
	}
	return pm.Store.AddTask(ctx, pm.Actor, t)
}

func (o mcpOps) UpdateTask(ctx context.Context, c mcp.TaskChange) (task.Task, error) {
	pm, err := OpenPM(ctx, o.env, PMOptions{})
	if err != nil {
		return task.Task{}, err
	}
	u := TaskUpdate{ID: c.ID, Status: c.Status, AssigneeGiven: c.Assignee != nil, MilestoneGiven: c.Milestone != nil}
	if c.Assignee != nil {
		u.Assignee = *c.Assignee
	}
	if c.Milestone != nil {
		u.Milestone = *c.Milestone
	}
	return pm.Update(ctx, u)
}

func (o mcpOps) Task(ctx context.Context, id string) (task.Task, error) {
	pm, err := OpenPM(ctx, o.env, PMOptions{})
	if err != nil {
		return task.Task{}, err
	}
	return pm.Store.Task(ctx, id)
}

// Code is err's code in the one error table.
func (mcpOps) Code(err error) string {
	code, _ := Classify(err)
	return code
}

// InstallMCP is party mcp install AGENT (install) and party mcp uninstall
// AGENT: party's MCP server, this binary's mcp, in the agent's own user
// configuration (mcp.Installer), its CLI found on PATH.
func InstallMCP(ctx context.Context, env *Env, agent string, install, force, dryRun bool) (mcp.Installed, error) {
	if !slices.Contains(mcp.Agents, agent) {
		return mcp.Installed{}, fmt.Errorf("%w: agent %q: want claude, codex or gemini", ErrUsage, agent)
	}
	exe, err := env.Executable()
	if err != nil {
		return mcp.Installed{}, err
	}
	root, err := env.StateRoot()
	if err != nil {
		return mcp.Installed{}, err
	}
	i := mcp.Installer{Agent: agent, Exe: exe, Env: session.MCPEnv(), Getenv: env.Getenv,
		Runner: mcp.ExecRunner{Env: env.Environ}, Root: root}
	if agent != mcp.Gemini { // gemini's settings are merged, not written by its CLI
		cwd, err := env.Getwd()
		if err != nil {
			return mcp.Installed{}, err
		}
		if i.Bin, err = session.LookPath(agent, env.Getenv("PATH"), cwd); err != nil {
			return mcp.Installed{}, err
		}
	}
	do := i.Uninstall
	if install {
		do = i.Install
	}
	res, err := do(ctx, force, dryRun)
	if errors.Is(err, mcp.ErrTaken) {
		// CONFLICT until the error table lists mcp.ErrTaken.
		err = fmt.Errorf("%w (%w)", err, registry.ErrConflict)
	}
	return res, err
}
