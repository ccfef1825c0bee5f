package party

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"slices"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/partyhq/party/core/mcp"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/task"
)

// ServeMCP is party mcp: party's MCP server (core/mcp) on in and out
// until the client goes, its tools party's operations over env, as the
// command's caller (the runtime of $PARTY_RUNTIME_TOKEN, else the
// operator), each call through the supervisor's API.
func ServeMCP(ctx context.Context, env *Env, in io.Reader, out io.Writer) error {
	ops := mcpOps{env: env}
	if token := env.Getenv("PARTY_MCP_TOKEN"); token != "" {
		// A named operator's (party mcp token add), whatever pane it runs in.
		stateDir, name, err := supervisorScope(ctx, env)
		if err != nil {
			return err
		}
		op, ok, err := mcpOperators(env, stateDir).Lookup(token)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("$PARTY_MCP_TOKEN is no operator's of session %s (revoked, or of another session): %w", name, supervise.ErrToken)
		}
		id := mcp.Identity{Operator: true, Name: op}
		ops = mcpOps{env: env.as(id, stateDir, name), from: op}
	}
	s := mcp.NewServer(ops, mcp.Options{Clock: env.Clock})
	return s.Serve(ctx, &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
}

// nopWriteCloser is w with a Close that does nothing: the process's
// stdout is not the server's to close.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// mcpOps are core/mcp's operations: party's own, over env; from names a
// named operator, the sender of its messages.
type mcpOps struct {
	env  *Env
	from string
}

var _ mcp.Ops = mcpOps{}

func (o mcpOps) InboxRead(ctx context.Context, thread string) ([]supervise.Message, error) {
	return InboxRead(ctx, o.env, thread)
}

func (o mcpOps) InboxSend(ctx context.Context, req supervise.MessageRequest) (supervise.Message, error) {
	req.From = o.from
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
	return do(ctx, force, dryRun)
}

// MCPHTTPOptions say where party mcp serves streamable HTTP: Addr, a
// loopback HOST:PORT (a bearer token required), or Socket, a unix socket
// of its own (0600; no token is the operator).
type MCPHTTPOptions struct {
	Addr, Socket string
	// Ready is told the URL served and the operator token's file once
	// it listens.
	Ready func(url, tokenFile string)
}

// ServeMCPHTTP is party mcp --http/--socket: party's MCP server over
// streamable HTTP for the session env picks (mcp.HTTP) until ctx ends.
// Each client acts as its bearer token's identity: the operator's token
// (the session's mcp.token, made on first use) is the operator, a
// runtime's token (the session's record holds its hash) that runtime.
func ServeMCPHTTP(ctx context.Context, env *Env, opts MCPHTTPOptions) error {
	stateDir, name, err := supervisorScope(ctx, env)
	if err != nil {
		return err
	}
	tokenFile := filepath.Join(stateDir, "mcp.token")
	op, err := mcp.OperatorToken(tokenFile)
	if err != nil {
		return err
	}
	var ln net.Listener
	url := "http://party/"
	if opts.Socket != "" {
		ln, err = supervise.ListenUnix(opts.Socket)
	} else {
		ln, err = supervise.ListenTCP(opts.Addr)
		if err == nil {
			url = "http://" + ln.Addr().String() + "/"
		}
	}
	if err != nil {
		return err
	}
	h := mcp.NewHTTP(mcp.HTTPOptions{Operator: op, Unix: opts.Socket != "",
		Verify: func(_ context.Context, token string) (mcp.Identity, error) {
			return mcp.Verify(token, op, mcpOperators(env, stateDir), func() (map[string]string, error) {
				rec, err := session.ReadRecord(stateDir)
				return rec.Tokens, err
			})
		},
		Server: func(id mcp.Identity) *mcp.Server {
			return mcp.NewServer(mcpOps{env: env.as(id, stateDir, name), from: id.Name}, mcp.Options{Clock: env.Clock})
		}})
	if opts.Ready != nil {
		opts.Ready(url, tokenFile)
	}
	return h.Serve(ctx, ln, env.Warnf)
}

// as is env acting as id in the session of stateDir: id's runtime token
// and role in place of the process's, the session fixed.
func (e *Env) as(id mcp.Identity, stateDir, name string) *Env {
	c := *e
	c.Session = ""
	role := id.Role
	if id.Operator {
		role = id.Name // a named operator's task changes are its own
	}
	vars := map[string]string{"PARTY_RUNTIME_TOKEN": id.Token, "PARTY_ROLE": role, "PARTY_STATE_DIR": stateDir, "PARTY_SESSION": name,
		"PARTY_OPERATOR": id.Name}
	c.Getenv = func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		return e.Getenv(k)
	}
	return &c
}

// mcpOperators are the named operator identities of the session of
// stateDir (mcp.Operators), none of them a role of the session.
func mcpOperators(env *Env, stateDir string) mcp.Operators {
	root, _ := env.StateRoot()
	o := mcp.Operators{Path: filepath.Join(stateDir, mcp.OperatorsFile), Root: root}
	if rec, err := session.ReadRecord(stateDir); err == nil {
		for role := range rec.Launch {
			o.Reserved = append(o.Reserved, role)
		}
	}
	return o
}

// MCPToken is a named operator identity as party mcp token prints it.
type MCPToken struct {
	Name    string    `json:"name"`
	Token   string    `json:"token,omitempty"` // once, when made
	Created time.Time `json:"created,omitzero"`
	Session string    `json:"session"`
}

// MCPTokenAdd makes the token of the named operator name in the session
// env picks (mcp.Operators.Add).
func MCPTokenAdd(ctx context.Context, env *Env, name string) (MCPToken, error) {
	stateDir, session, err := supervisorScope(ctx, env)
	if err != nil {
		return MCPToken{}, err
	}
	now := env.Clock.Now()
	token, err := mcpOperators(env, stateDir).Add(name, now)
	return MCPToken{Name: name, Token: token, Created: now.UTC(), Session: session}, err
}

// MCPTokenRevoke takes the named operator name's token out.
func MCPTokenRevoke(ctx context.Context, env *Env, name string) error {
	stateDir, _, err := supervisorScope(ctx, env)
	if err != nil {
		return err
	}
	return mcpOperators(env, stateDir).Revoke(name)
}

// MCPTokens are the session's named operators.
func MCPTokens(ctx context.Context, env *Env) ([]MCPToken, error) {
	stateDir, session, err := supervisorScope(ctx, env)
	if err != nil {
		return nil, err
	}
	ops, err := mcpOperators(env, stateDir).List()
	out := make([]MCPToken, 0, len(ops))
	for _, o := range ops {
		out = append(out, MCPToken{Name: o.Name, Created: o.Created, Session: session})
	}
	return out, err
}
