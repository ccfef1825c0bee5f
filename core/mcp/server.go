package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/usage"
)

// errUsage is a tool's argument the schema lets through and the tool
// cannot use.
var errUsage = usage.Err

// ProgressEvery is how often a long call tells the client's progress
// token that it still waits.
const ProgressEvery = 5 * time.Second

// Options are what a Server takes besides the operations.
type Options struct {
	Version string      // party's version, told to the client
	Clock   clock.Clock // for progress; nil is the wall clock
}

// Server is party's MCP server: the tools over ops.
type Server struct {
	ops   Ops
	clock clock.Clock
	srv   *sdk.Server
}

// NewServer is a server of party's tools over ops.
func NewServer(ops Ops, opts Options) *Server {
	s := &Server{ops: ops, clock: opts.Clock}
	if s.clock == nil {
		s.clock = clock.Real{}
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	s.srv = sdk.NewServer(&sdk.Implementation{Name: "party", Version: version}, &sdk.ServerOptions{
		Instructions: "party's team operations: your inbox (inbox_read acknowledges the trigger that told you of it), triggers to supervised agents, talk to another agent and wait for its answer, the team's tasks. You act as your own pane's runtime.",
	})
	s.srv.AddReceivingMiddleware(toolErrors)
	s.tools(s.srv)
	return s
}

// Tools are the names of the server's tools, in the order they were
// added.
var Tools = []string{"inbox_read", "inbox_send", "inbox_list", "heartbeat", "trigger", "trigger_status", "runtimes", "talk",
	"task_list", "task_add", "task_update", "task_show"}

// Serve serves one client on t until it goes (or ctx ends). The calls in
// flight then are cancelled, and Serve returns once they have ended: the
// SDK's connection is done only when no call is left
// (TestTalkProgressCancelAndDisconnect holds it to that).
func (s *Server) Serve(ctx context.Context, t sdk.Transport) error {
	return s.srv.Run(ctx, t)
}

// add registers the tool name, whose handler h returns a typed result or
// a party error; the error becomes a tool error carrying its code.
func add[In, Out any](s *Server, srv *sdk.Server, name, description string, h func(context.Context, *sdk.CallToolRequest, In) (Out, error)) {
	out, err := outputSchema[Out]()
	if err != nil {
		panic(fmt.Sprintf("mcp: tool %s: %v", name, err)) // the types are party's own
	}
	sdk.AddTool(srv, &sdk.Tool{Name: name, Description: description, OutputSchema: out},
		func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, Out, error) {
			out, err := h(ctx, req, in)
			if err != nil {
				var zero Out
				return nil, zero, &ToolError{Code: s.ops.Code(err), Message: err.Error(), err: err}
			}
			return nil, out, nil
		})
}

// ToolError is a failed call as the client gets it: party's error code
// and message, its text party's --json error.
type ToolError struct {
	Code    string `json:"code" jsonschema:"party's error code (the one error table's)"`
	Message string `json:"message" jsonschema:"what went wrong"`
	err     error
}

// Error is the JSON text of the tool error: {"error":{"code","message"}}.
func (e *ToolError) Error() string {
	b, _ := json.Marshal(map[string]*ToolError{"error": e})
	return string(b)
}

func (e *ToolError) Unwrap() error { return e.err }

// outputSchema is the output schema of a tool whose result is Out: the
// one the SDK would derive from Out, which also lets through a tool
// error's structured content, {"error": {code, message}}: a property
// "error" of that shape (or, where Out has an "error" of its own, either),
// and Out's required properties required unless "error" is there
// (anyOf). A client that checks an error's structured content against the
// output schema — Gemini CLI 0.61 does, taking an error's JSON text for it
// when there is none — then finds it valid and passes the error on.
func outputSchema[Out any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[Out](&jsonschema.ForOptions{})
	if err != nil {
		return nil, err
	}
	e, err := jsonschema.For[ToolError](&jsonschema.ForOptions{})
	if err != nil {
		return nil, err
	}
	e.Description = "party's error, when the call failed (isError): its code and message"
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	if own, ok := s.Properties[errorKey]; ok {
		e = &jsonschema.Schema{AnyOf: []*jsonschema.Schema{own, e}}
	}
	s.Properties[errorKey] = e
	if len(s.Required) > 0 {
		s.AnyOf = []*jsonschema.Schema{{Required: s.Required}, {Required: []string{errorKey}}}
		s.Required = nil
	}
	return s, nil
}

// errorKey is the key of a tool error's structured content.
const errorKey = "error"

// toolErrors gives every tool error party's shape: a tool error that is
// not a ToolError — arguments the SDK found failing the tool's schema —
// becomes a ToolError with the code USAGE; and each carries, besides its
// text, the same {"error": {code, message}} as structured content, which
// the tool's output schema allows (outputSchema).
func toolErrors(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*sdk.CallToolResult)
		if err != nil || !ok || !r.IsError {
			return res, err
		}
		cause := r.GetError()
		if cause == nil {
			return res, err
		}
		var te *ToolError
		if !errors.As(cause, &te) {
			te = &ToolError{Code: "USAGE", Message: cause.Error(), err: cause}
			r.Content = nil
			r.SetError(te)
		}
		r.StructuredContent = map[string]*ToolError{errorKey: te}
		return res, err
	}
}
