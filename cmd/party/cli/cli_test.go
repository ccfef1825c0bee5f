package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/route"
	"github.com/partyhq/party/core/session"
)

func testFactory(stdin string) (*Factory, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	env := map[string]string{}
	return &Factory{
		IO:      IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut},
		Getenv:  func(k string) string { return env[k] },
		Environ: func() []string { return nil },
		Getwd:   func() (string, error) { return "/nonexistent", nil },
		Clock:   clock.Real{},
	}, &out, &errOut
}

func TestSendFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    SendOptions
		wantErr bool
	}{
		{"text", []string{"send", "claude", "hi there"}, SendOptions{Role: "claude", Text: "hi there"}, false},
		{"stdin", []string{"send", "codex", "-"}, SendOptions{Role: "codex", Stdin: true}, false},
		{"force", []string{"send", "--force", "codex", "-x"}, SendOptions{Role: "codex", Text: "-x", Force: true}, true},
		{"leading dash after --", []string{"send", "codex", "--", "-x"}, SendOptions{Role: "codex", Text: "-x"}, false},
		{"missing text", []string{"send", "codex"}, SendOptions{}, true},
		{"too many", []string{"send", "codex", "a", "b"}, SendOptions{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := testFactory("")
			var got *SendOptions
			root := NewRootCmd(f)
			for _, c := range root.Commands() {
				if c.Name() == "send" {
					root.RemoveCommand(c)
				}
			}
			root.AddCommand(newSendCmd(f, func(_ context.Context, o *SendOptions) error { got = o; return nil }))
			root.SetArgs(tt.args)
			root.SetOut(f.IO.Out)
			root.SetErr(f.IO.ErrOut)
			err := root.ExecuteContext(context.Background())
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, got)
			assert.Equal(t, tt.want, *got)
		})
	}
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		err  error
		code string
		exit int
	}{
		{fmt.Errorf("x: %w", route.ErrAmbiguous), "ROLE_AMBIGUOUS", 3},
		{fmt.Errorf("x: %w", route.ErrNotFound), "ROLE_NOT_FOUND", 3},
		{fmt.Errorf("x: %w", route.ErrUnresolved), "ROUTING_UNRESOLVED", 3},
		{fmt.Errorf("x: %w", deliver.ErrPaneDead), "PANE_DEAD", 3},
		{fmt.Errorf("x: %w", deliver.ErrDialog), "DIALOG_ON_SCREEN", 1},
		{fmt.Errorf("x: %w", deliver.ErrUnconfirmed), "UNCONFIRMED", 6},
		{fmt.Errorf("x: %w", errNoSession), "SESSION_UNRESOLVED", 2},
		{fmt.Errorf("x: %w", session.ErrExists), "SESSION_EXISTS", 1},
		{context.Canceled, "INTERRUPTED", 130},
		{fmt.Errorf("other"), "ERROR", 1},
	}
	for _, tt := range tests {
		code, exit := classify(tt.err)
		assert.Equal(t, tt.code, code, tt.err.Error())
		assert.Equal(t, tt.exit, exit, tt.err.Error())
	}
}

func TestUsageErrorJSON(t *testing.T) {
	f, out, errOut := testFactory("")
	exit := Run(context.Background(), f, []string{"resolve", "--json"})
	assert.Equal(t, ExitUsage, exit)
	var got struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &got), out.String())
	assert.Equal(t, "USAGE", got.Error.Code)
	assert.Contains(t, errOut.String(), "party resolve --help")

	f, _, errOut = testFactory("")
	assert.Equal(t, ExitUsage, Run(context.Background(), f, []string{"send", "--bogus"}))
	assert.Contains(t, errOut.String(), "unknown flag")
}

func TestReviewSignalFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    review.Event
		wantErr error
	}{
		{"request", []string{"review", "request", "--base", "develop", "--title", "LRU cache"}, review.Event{Kind: review.EvRequest, Base: "develop", Title: "LRU cache"}, nil},
		{"request takes no text", []string{"review", "request", "now"}, review.Event{}, errUsage},
		{"re-review joins its reason", []string{"review", "re-review", "fix:", "F1"}, review.Event{Kind: review.EvReReview, Reason: "fix: F1"}, nil},
		{"needs-discussion", []string{"review", "needs-discussion", "API choice"}, review.Event{Kind: review.EvNeedsDiscussion, Reason: "API choice"}, nil},
		{"resume to a state", []string{"review", "resume", "--to", "verify"}, review.Event{Kind: review.EvResume, To: "verify"}, nil},
		{"resume to nowhere", []string{"review", "resume", "--to", "LUNCH"}, review.Event{}, errUsage},
		{"prompt", []string{"review", "prompt", "is the API fine?"}, review.Event{Kind: review.EvPrompt, Text: "is the API fine?"}, nil},
		{"empty prompt", []string{"review", "prompt", "  "}, review.Event{}, errUsage},
		{"approve", []string{"review", "approve"}, review.Event{Kind: review.EvApprove}, nil},
		{"ask", []string{"ask", "codex", "which cache?"}, review.Event{Kind: review.EvAsk, Role: "codex", Text: "which cache?"}, nil},
		{"ask without question", []string{"ask", "codex"}, review.Event{}, errUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := testFactory("")
			var got *SignalOptions
			capture := func(_ context.Context, o *SignalOptions) error { got = o; return nil }
			root := NewRootCmd(f)
			for _, c := range root.Commands() {
				if c.Name() == "review" || c.Name() == "ask" {
					root.RemoveCommand(c)
				}
			}
			root.AddCommand(newReviewCmd(f, capture), newAskCmd(f, capture))
			root.SetArgs(tt.args)
			root.SetOut(f.IO.Out)
			root.SetErr(f.IO.ErrOut)
			err := root.ExecuteContext(context.Background())
			if tt.wantErr != nil {
				require.Error(t, err)
				assert.ErrorIs(t, err, tt.wantErr)
				assert.Nil(t, got, "nothing runs")
				return
			}
			require.NoError(t, err)
			require.NotNil(t, got)
			assert.Equal(t, tt.want, got.Event)
			assert.Equal(t, signalWait, got.Wait)
		})
	}
}
