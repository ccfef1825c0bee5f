package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/task"
)

// fakeOps answers every tool; Talk blocks until its context ends and
// says so on ended.
type fakeOps struct {
	err       error // what every call but Talk fails with, when set
	talkStart chan struct{}
	talkEnded atomic.Bool
	talkDone  chan struct{} // closed when Talk returns, when set
	gotThread string
	gotTrig   supervise.TriggerRequest
}

var errFake = errors.New("fake refusal")

func (f *fakeOps) InboxRead(_ context.Context, thread string) ([]supervise.Message, error) {
	f.gotThread = thread
	return []supervise.Message{{Seq: 1, Thread: "th", From: "boss", To: "w", Text: "hi"}}, f.err
}
func (f *fakeOps) InboxSend(_ context.Context, r supervise.MessageRequest) (supervise.Message, error) {
	return supervise.Message{Seq: 2, Thread: r.Thread, To: r.To, Text: r.Text}, f.err
}
func (f *fakeOps) InboxList(context.Context, string) ([]supervise.Message, error) { return nil, f.err }
func (f *fakeOps) Heartbeat(context.Context, string) error                        { return f.err }
func (f *fakeOps) Trigger(_ context.Context, r supervise.TriggerRequest, _ bool, _ time.Duration) (supervise.Trigger, bool, error) {
	f.gotTrig = r
	return supervise.Trigger{ID: r.ID, Role: r.Role, Status: supervise.Queued}, true, f.err
}
func (f *fakeOps) TriggerShow(_ context.Context, id string) (supervise.Trigger, error) {
	return supervise.Trigger{ID: id}, f.err
}
func (f *fakeOps) Runtimes(context.Context) ([]supervise.Runtime, error) {
	return []supervise.Runtime{{Role: "w", Agent: "claude", Status: "idle"}}, f.err
}
func (f *fakeOps) Talk(ctx context.Context, role, _ string, _ time.Duration) (TalkAnswer, error) {
	close(f.talkStart)
	<-ctx.Done()
	time.Sleep(10 * time.Millisecond) // a take-back takes a moment: Serve must wait for it
	f.talkEnded.Store(true)
	if f.talkDone != nil {
		close(f.talkDone)
	}
	return TalkAnswer{Role: role}, ctx.Err()
}
func (f *fakeOps) Tasks(context.Context, task.Filter) ([]task.Task, error) { return nil, f.err }
func (f *fakeOps) AddTask(_ context.Context, t task.NewTask) (task.Task, error) {
	return task.Task{ID: "1", Title: t.Title, Status: task.Pending}, f.err
}
func (f *fakeOps) UpdateTask(_ context.Context, c TaskChange) (task.Task, error) {
	return task.Task{ID: c.ID}, f.err
}
func (f *fakeOps) Task(_ context.Context, id string) (task.Task, error) {
	return task.Task{ID: id}, f.err
}
func (f *fakeOps) Code(err error) string {
	switch {
	case errors.Is(err, errFake):
		return "FAKE_CODE"
	case errors.Is(err, errUsage), errors.Is(err, task.ErrInvalid):
		return "USAGE"
	case errors.Is(err, context.Canceled):
		return "INTERRUPTED"
	}
	return "ERROR"
}

// session serves ops and returns a client connected to it, and the
// channel Serve's error comes on once the client has gone.
func session(t *testing.T, ops Ops, copts *sdk.ClientOptions) (*sdk.ClientSession, <-chan error) {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- NewServer(ops, Options{}).Serve(context.Background(), st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, copts).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs, served
}

func TestToolsHaveSchemas(t *testing.T) {
	cs, _ := session(t, &fakeOps{}, nil)
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		assert.NotNil(t, tool.InputSchema, "%s has no input schema", tool.Name)
		assert.NotNil(t, tool.OutputSchema, "%s has no output schema", tool.Name)
		assert.NotEmpty(t, tool.Description, "%s has no description", tool.Name)
	}
	assert.ElementsMatch(t, names, Tools)
}

// errorOf is the code and message of a tool error's text.
func errorOf(t *testing.T, res *sdk.CallToolResult) ToolError {
	t.Helper()
	require.True(t, res.IsError, "got a result, want a tool error")
	require.Len(t, res.Content, 1)
	var e struct{ Error ToolError }
	require.NoError(t, json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &e))
	return e.Error
}

func TestToolErrors(t *testing.T) {
	tests := []struct {
		name     string
		ops      *fakeOps
		tool     string
		args     any
		wantCode string
	}{
		{"party's error keeps its code", &fakeOps{err: errFake}, "inbox_read", map[string]any{}, "FAKE_CODE"},
		{"a wrong type fails the schema", &fakeOps{}, "trigger", map[string]any{"role": 5, "text": "x"}, "USAGE"},
		{"a missing field fails the schema", &fakeOps{}, "inbox_send", map[string]any{"to": "w"}, "USAGE"},
		{"an unknown field fails the schema", &fakeOps{}, "heartbeat", map[string]any{"role": "boss"}, "USAGE"},
		{"a negative timeout", &fakeOps{}, "trigger", map[string]any{"role": "w", "text": "x", "timeout_seconds": -1}, "USAGE"},
		{"talk to all", &fakeOps{}, "talk", map[string]any{"role": "all", "text": "x"}, "USAGE"},
		{"an unknown status", &fakeOps{}, "task_list", map[string]any{"status": "someday"}, "USAGE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, _ := session(t, tt.ops, nil)
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tt.tool, Arguments: tt.args})
			require.NoError(t, err)
			e := errorOf(t, res)
			assert.Equal(t, tt.wantCode, e.Code, "message: %s", e.Message)
			assert.NotEmpty(t, e.Message)
			var sc map[string]ToolError
			remarshal(t, res.StructuredContent, &sc)
			assert.Equal(t, map[string]ToolError{"error": e}, sc, "the same error as structured content, no result")
		})
	}
}

func remarshal(t *testing.T, from, to any) {
	t.Helper()
	b, err := json.Marshal(from)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, to))
}

// Every tool's output schema takes a tool error's structured content
// ({"error": {code, message}}) besides its result, and nothing less than
// one of them: Gemini CLI checks an error's against it.
func TestOutputSchemasAllowErrors(t *testing.T) {
	cs, _ := session(t, &fakeOps{}, nil)
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	for _, tool := range res.Tools {
		t.Run(tool.Name, func(t *testing.T) {
			var s jsonschema.Schema
			remarshal(t, tool.OutputSchema, &s)
			rs, err := s.Resolve(nil)
			require.NoError(t, err)
			var party map[string]any
			remarshal(t, map[string]any{"error": map[string]string{"code": "NOT_FOUND", "message": "trigger nope: not found"}}, &party)
			assert.NoError(t, rs.Validate(party), "party's error")
			assert.Error(t, rs.Validate(map[string]any{}), "neither a result nor an error")
			assert.Error(t, rs.Validate(map[string]any{"error": map[string]any{"code": "X"}}), "an error without its message")
			if tool.Name == "trigger_status" {
				// A trigger has an error of its own, a string.
				var failed map[string]any
				remarshal(t, triggerOf(supervise.Trigger{ID: "t1", Role: "w", Thread: "th", Status: supervise.TFailed, Error: "boom"}, false), &failed)
				assert.NoError(t, rs.Validate(failed), "a failed trigger")
			}
		})
	}
}

func TestUnknownToolIsAProtocolError(t *testing.T) {
	cs, _ := session(t, &fakeOps{}, nil)
	_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "inbox_delete"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unknown tool")
	// The server stays up.
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "heartbeat"})
	require.NoError(t, err)
	assert.False(t, res.IsError)
}

func TestTypedResults(t *testing.T) {
	ops := &fakeOps{}
	cs, _ := session(t, ops, nil)
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "inbox_read", Arguments: map[string]any{"thread": "th"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	var ms Messages
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &ms))
	assert.Equal(t, "th", ops.gotThread)
	require.Len(t, ms.Messages, 1)
	assert.Equal(t, "hi", ms.Messages[0].Text)

	// A trigger with wait is given an id, so that its progress names it.
	res, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "trigger", Arguments: map[string]any{"role": "w", "text": "x", "wait": true}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	assert.Regexp(t, `^tr-[0-9a-f]{16}$`, ops.gotTrig.ID)
}

// A talk the client cancels ends, with progress told meanwhile; a client
// that goes mid-talk ends it too, and Serve returns only after it ended.
func TestTalkProgressCancelAndDisconnect(t *testing.T) {
	progress := make(chan *sdk.ProgressNotificationParams, 16)
	ops := &fakeOps{talkStart: make(chan struct{})}
	cs, _ := session(t, ops, &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
		progress <- r.Params
	}})
	ctx, cancel := context.WithCancel(context.Background())
	called := make(chan error, 1)
	go func() {
		p := &sdk.CallToolParams{Name: "talk", Arguments: map[string]any{"role": "w", "text": "x"}}
		p.SetProgressToken("tok-1")
		_, err := cs.CallTool(ctx, p)
		called <- err
	}()
	<-ops.talkStart
	got := <-progress
	assert.Equal(t, "tok-1", got.ProgressToken)
	assert.Contains(t, got.Message, "waiting for w's answer")
	cancel()
	require.ErrorIs(t, <-called, context.Canceled)

	// A client that goes: the server reads the end of its input (as
	// party mcp does when its client dies) with a talk in flight.
	ops2 := &fakeOps{talkStart: make(chan struct{})}
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- NewServer(ops2, Options{}).Serve(context.Background(), &sdk.IOTransport{Reader: serverIn, Writer: serverOut})
	}()
	cs2, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&sdk.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	require.NoError(t, err)
	go func() {
		_, _ = cs2.CallTool(context.Background(), &sdk.CallToolParams{Name: "talk", Arguments: map[string]any{"role": "w", "text": "x"}})
	}()
	<-ops2.talkStart
	require.NoError(t, clientOut.Close())
	require.NoError(t, <-served, "the server ends as its client goes")
	_ = clientIn.Close()
	assert.True(t, ops2.talkEnded.Load(), "Serve returned before the talk the client's going cancelled had ended")
}
