package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
)

// fakeReview denies every Bash command with deny and records signals.
type fakeReview struct {
	deny    string
	signals []Event
}

func (r *fakeReview) Gate(string, string) string { return r.deny }
func (r *fakeReview) Signal(_ string, ev Event) error {
	r.signals = append(r.signals, ev)
	return nil
}

// fakeSessions knows one pane, %1, of session s with state dir dir.
type fakeSessions struct{ dir string }

func (f fakeSessions) PaneSession(_ context.Context, id string) (string, error) {
	if id != "%1" {
		return "", mux.ErrNoPane
	}
	return "s", nil
}
func (f fakeSessions) SessionInfo(_ context.Context, name string) (tmux.SessionInfo, error) {
	return tmux.SessionInfo{Name: name, StateDir: f.dir}, nil
}

// clockAt is a clock that stays at at; its timers are the wall clock's.
type clockAt struct {
	clock.Real
	at time.Time
}

func (c clockAt) Now() time.Time                                   { return c.at }
func (c clockAt) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

func TestRecord(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name     string
		agent    string
		env      map[string]string
		stdin    string
		payload  string
		deny     string
		wantKind string // "" when nothing is recorded
		wantOut  string
		wantErr  bool
	}{
		{name: "claude stop by PARTY_STATE_DIR", agent: "claude", env: map[string]string{"PARTY_STATE_DIR": "DIR", "TMUX_PANE": "%7"},
			stdin: `{"hook_event_name":"Stop","last_assistant_message":"done"}`, wantKind: TurnComplete},
		{name: "claude by the pane's session", agent: "claude", env: map[string]string{"TMUX_PANE": "%1"},
			stdin: `{"hook_event_name":"Stop"}`, wantKind: TurnComplete},
		{name: "the gate denies", agent: "claude", env: map[string]string{"PARTY_STATE_DIR": "DIR"}, deny: "no",
			stdin: `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"party review request"}}`, wantKind: ToolUse,
			wantOut: `"permissionDecision": "deny"`},
		{name: "codex notify", agent: "codex-notify", env: map[string]string{"PARTY_STATE_DIR": "DIR"},
			payload: `{"type":"agent-turn-complete","last-assistant-message":"a"}`, wantKind: TurnComplete},
		{name: "gemini outside party", agent: "gemini", env: map[string]string{},
			stdin: `{"hook_event_name":"AfterAgent","prompt_response":"x"}`},
		{name: "no session", agent: "claude", env: map[string]string{}, stdin: `{"hook_event_name":"Stop"}`, wantErr: true},
		{name: "a pane of no party session", agent: "claude", env: map[string]string{"TMUX_PANE": "%2"}, stdin: `{"hook_event_name":"Stop"}`, wantErr: true},
		{name: "bad payload", agent: "claude", env: map[string]string{"PARTY_STATE_DIR": "DIR"}, stdin: `{`, wantErr: true},
		{name: "unknown agent", agent: "vim", env: map[string]string{"PARTY_STATE_DIR": "DIR"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			env := map[string]string{"XDG_RUNTIME_DIR": os.Getenv("XDG_RUNTIME_DIR")}
			for k, v := range tt.env {
				env[k] = strings.ReplaceAll(v, "DIR", dir)
			}
			var out bytes.Buffer
			rv := &fakeReview{deny: tt.deny}
			err := Record(context.Background(), Deps{Getenv: func(k string) string { return env[k] }, Clock: clockAt{at: at},
				Tmux: fakeSessions{dir: dir}, In: strings.NewReader(tt.stdin), Out: &out, Review: rv}, tt.agent, []byte(tt.payload))
			lines, _, rerr := state.ReadFrom(filepath.Join(dir, state.EventLog), 0)
			require.NoError(t, rerr)
			if tt.wantErr {
				assert.Error(t, err)
				assert.Empty(t, lines)
				return
			}
			require.NoError(t, err)
			if tt.wantKind == "" {
				assert.Empty(t, lines)
				return
			}
			require.Len(t, lines, 1)
			var ev Event
			require.NoError(t, json.Unmarshal(lines[0], &ev))
			assert.Equal(t, tt.wantKind, ev.Kind)
			assert.Equal(t, at, ev.Time)
			assert.Equal(t, env["TMUX_PANE"], ev.Pane)
			assert.Equal(t, []Event{ev}, rv.signals, "the review is told")
			if tt.wantOut == "" {
				assert.Empty(t, out.String())
			} else {
				assert.Contains(t, out.String(), tt.wantOut)
			}
		})
	}
}

// TestRecordThatCannotAppendTellsTheWaiters: an event log no hook can
// append to (here a directory in its place) is an error, and the session's
// waiters get a report of what was lost, at once.
func TestRecordThatCannotAppendTellsTheWaiters(t *testing.T) {
	dir, run := t.TempDir(), os.Getenv("XDG_RUNTIME_DIR") // the test home's: short enough for sockets
	require.NoError(t, os.Mkdir(filepath.Join(dir, state.EventLog), 0o700))
	env := map[string]string{"XDG_RUNTIME_DIR": run, "PARTY_STATE_DIR": dir, "TMUX_PANE": "%4"}
	getenv := func(k string) string { return env[k] }
	w, err := state.ListenSession(getenv, dir)
	require.NoError(t, err)
	defer w.Close()
	err = Record(context.Background(), Deps{Getenv: getenv, Clock: clockAt{at: time.Now()}, Tmux: fakeSessions{dir: dir},
		In: strings.NewReader(`{"hook_event_name":"UserPromptSubmit","prompt":"q","transcript_path":"/t.jsonl"}`), Out: io.Discard,
		Review: &fakeReview{}}, "claude", nil)
	require.Error(t, err)
	select {
	case <-w.C:
	case <-time.After(5 * time.Second):
		t.Fatal("no report")
	}
	r, ok := w.Report("%4")
	require.True(t, ok)
	assert.Contains(t, r.Error, "event log")
	var ev Event
	require.NoError(t, json.Unmarshal(r.Event, &ev))
	assert.Equal(t, PromptSubmit, ev.Kind)
	assert.Equal(t, "/t.jsonl", ev.Transcript)
	assert.Empty(t, ev.Prompts, "the report says what was lost, not its text")
}

// TestRecordThatCannotAppendLeavesANote: a waiter that starts after the
// hook failed (none listened then) learns of it from the note the hook
// left, unless it began after it; the pane's next hook that records
// removes the note.
func TestRecordThatCannotAppendLeavesANote(t *testing.T) {
	dir, run := t.TempDir(), os.Getenv("XDG_RUNTIME_DIR")
	events := filepath.Join(dir, state.EventLog)
	require.NoError(t, os.Mkdir(events, 0o700))
	env := map[string]string{"XDG_RUNTIME_DIR": run, "PARTY_STATE_DIR": dir, "TMUX_PANE": "%4"}
	getenv := func(k string) string { return env[k] }
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	record := func() error {
		return Record(context.Background(), Deps{Getenv: getenv, Clock: clockAt{at: at}, Tmux: fakeSessions{dir: dir},
			In: strings.NewReader(`{"hook_event_name":"Stop","last_assistant_message":"a","transcript_path":"/t.jsonl"}`), Out: io.Discard,
			Review: &fakeReview{}}, "claude", nil)
	}
	require.Error(t, record())

	r, ok := LastUnheard(getenv, dir, "%4", at)
	require.True(t, ok, "a turn that began before the failure hears of it")
	assert.Contains(t, r.Error, "event log")
	var ev Event
	require.NoError(t, json.Unmarshal(r.Event, &ev))
	assert.Equal(t, TurnComplete, ev.Kind)
	assert.Empty(t, ev.Answer, "the note says what was lost, not its text")
	_, ok = LastUnheard(getenv, dir, "%4", at.Add(time.Second))
	assert.False(t, ok, "a turn that began after it does not")
	_, ok = LastUnheard(getenv, dir, "%5", at)
	assert.False(t, ok, "another pane's")

	require.NoError(t, os.Remove(events))
	require.NoError(t, record())
	_, ok = LastUnheard(getenv, dir, "%4", at)
	assert.False(t, ok, "the pane's hooks record again")
}
