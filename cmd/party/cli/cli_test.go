package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/exitcode"
	"github.com/partyhq/party/core/party"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/task"
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

// execute runs args on party's command tree with cmds in place of the
// commands of the same names (built with a runF that captures options).
func execute(f *Factory, args []string, cmds ...*cobra.Command) error {
	root := NewRootCmd(f)
	for _, c := range root.Commands() {
		for _, r := range cmds {
			if c.Name() == r.Name() {
				root.RemoveCommand(c)
			}
		}
	}
	root.AddCommand(cmds...)
	root.SetArgs(args)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	return root.ExecuteContext(context.Background())
}

func TestUsageErrorJSON(t *testing.T) {
	f, out, errOut := testFactory("")
	exit := Run(context.Background(), f, []string{"resolve", "--json"})
	assert.Equal(t, exitcode.ExitUsage, exit)
	var got struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &got), out.String())
	assert.Equal(t, "USAGE", got.Error.Code)
	assert.Contains(t, errOut.String(), "party resolve --help")

	f, _, errOut = testFactory("")
	assert.Equal(t, exitcode.ExitUsage, Run(context.Background(), f, []string{"send", "--bogus"}))
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
		{"request takes no text", []string{"review", "request", "now"}, review.Event{}, party.ErrUsage},
		{"re-review joins its reason", []string{"review", "re-review", "fix:", "F1"}, review.Event{Kind: review.EvReReview, Reason: "fix: F1"}, nil},
		{"needs-discussion", []string{"review", "needs-discussion", "API choice"}, review.Event{Kind: review.EvNeedsDiscussion, Reason: "API choice"}, nil},
		{"resume to a state", []string{"review", "resume", "--to", "verify"}, review.Event{Kind: review.EvResume, To: "verify"}, nil},
		{"resume to nowhere", []string{"review", "resume", "--to", "LUNCH"}, review.Event{}, party.ErrUsage},
		{"prompt", []string{"review", "prompt", "is the API fine?"}, review.Event{Kind: review.EvPrompt, Text: "is the API fine?"}, nil},
		{"empty prompt", []string{"review", "prompt", "  "}, review.Event{}, party.ErrUsage},
		{"approve", []string{"review", "approve"}, review.Event{Kind: review.EvApprove}, nil},
		{"ask", []string{"ask", "codex", "which cache?"}, review.Event{Kind: review.EvAsk, Role: "codex", Text: "which cache?"}, nil},
		{"ask without question", []string{"ask", "codex"}, review.Event{}, party.ErrUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := testFactory("")
			var got *party.SignalOptions
			capture := func(_ context.Context, o *party.SignalOptions) error { got = o; return nil }
			err := execute(f, tt.args, newReviewCmd(f, capture), newAskCmd(f, capture))
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

// capture is a runF that keeps the options it is given in got.
func capture[O any](got *any) func(context.Context, *O) error {
	return func(_ context.Context, o *O) error { *got = *o; return nil }
}

func TestCommandArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want any // nil: a usage error
	}{
		{"talk with delay and timeout", []string{"talk", "codex", "hi", "--delay", "500ms", "--wait", "--timeout", "2m"},
			party.TalkOptions{Role: "codex", Text: "hi", Delay: 500 * time.Millisecond, Wait: true, Timeout: 2 * time.Minute}},
		{"talk all from stdin, milliseconds", []string{"talk", "all", "-", "--delay", "250"}, party.TalkOptions{Role: "all", Text: "-", Delay: 250 * time.Millisecond}},
		{"talk bad delay", []string{"talk", "codex", "hi", "--delay", "soon"}, nil},
		{"talk timeout 0 when given", []string{"talk", "codex", "hi", "--timeout", "0"}, nil},
		{"check default lines", []string{"check", "claude"}, party.CheckOptions{Role: "claude", Lines: 40}},
		{"check lines", []string{"check", "claude", "5"}, party.CheckOptions{Role: "claude", Lines: 5}},
		{"check zero lines", []string{"check", "claude", "0"}, nil},
		{"stop a session", []string{"stop", "s"}, StopOptions{Session: "s"}},
		{"resolve", []string{"resolve", "planner"}, ResolveOptions{Role: "planner"}},
		{"hooks user", []string{"hooks", "install", "--user", "--dry-run"}, HooksInstallOptions{User: true, DryRun: true}},
		{"hooks user and project", []string{"hooks", "install", "--user", "--project"}, nil},
		{"replay", []string{"replay", "x.cast", "--speed", "2"}, ReplayOptions{File: "x.cast", Speed: 2}},
		{"replay at speed 0", []string{"replay", "x.cast", "--speed", "0"}, nil},
		{"instructions", []string{"instructions", "codex"}, InstructionsOptions{Agent: "codex"}},
		{"instructions of another agent", []string{"instructions", "gemini"}, nil},
		{"hook codex", []string{"hook", "codex-notify", `{"x":1}`}, HookOptions{Agent: "codex-notify", Payload: []byte(`{"x":1}`)}},
		{"start", []string{"--session", "s", "start", "--pane", "a=claude", "--pane", "b", "--no-attach"},
			StartOptions{StartOptions: session.StartOptions{Name: "s", Panes: []string{"a=claude", "b"}, Size: "200x50"}, NoAttach: true}},
		{"start supervised, a window per role", []string{"start", "--supervise", "--layout", "windows", "--pane", "a"},
			StartOptions{StartOptions: session.StartOptions{Panes: []string{"a"}, Size: "200x50", Layout: "windows", Supervise: true}}},
		{"send text", []string{"send", "claude", "hi there"}, party.SendRequest{Role: "claude", Text: "hi there"}},
		{"send stdin", []string{"send", "codex", "-"}, party.SendRequest{Role: "codex", Text: "-"}},
		{"send: a text with a leading dash is an unknown flag (-- before it sends it)", []string{"send", "--force", "codex", "-x"}, nil},
		{"send a leading dash after --", []string{"send", "codex", "--", "-x"}, party.SendRequest{Role: "codex", Text: "-x"}},
		{"send without text", []string{"send", "codex"}, nil},
		{"send two texts", []string{"send", "codex", "a", "b"}, nil},
		{"pm init", []string{"pm", "init", "--name", "crew"}, PMInitOptions{Name: "crew"}},
		{"pm task add", []string{"pm", "task", "add", "lexer", "--milestone", "M1", "--assignee", "executor", "--id", "M1-1", "--actor", "planner"},
			PMTaskAddOptions{PMFlags: PMFlags{Actor: "planner"}, Title: "lexer", Milestone: "M1", Assignee: "executor", ID: "M1-1"}},
		{"pm update clears the assignee", []string{"pm", "task", "update", "3", "--status", "done", "--assignee", "", "--force"},
			PMTaskUpdateOptions{ID: "3", Status: "done", AssigneeGiven: true, Force: true}},
		{"pm update milestone", []string{"pm", "--repo", "o/r", "task", "update", "3", "--milestone", "M2"},
			PMTaskUpdateOptions{PMFlags: PMFlags{Repo: "o/r"}, ID: "3", Milestone: "M2", MilestoneGiven: true}},
		{"pm list filters", []string{"pm", "task", "list", "--status", "pending", "--assignee", "codex"},
			PMTaskListOptions{Status: "pending", Assignee: "codex"}},
		{"pm doc set", []string{"pm", "doc", "7", "--set", "-"}, PMDocOptions{ID: "7", Set: "-"}},
		{"pm log of a task", []string{"pm", "log", "7"}, PMLogOptions{ID: "7"}},
		{"pm task done", []string{"pm", "task", "done", "7", "--force"}, PMTaskDoneOptions{ID: "7", Force: true}},
		{"pm milestone add", []string{"pm", "milestone", "add", "M"}, PMMilestoneAddOptions{Name: "M"}},
		{"pm jump", []string{"pm", "jump", "--actor", "a"}, PMJumpOptions{PMFlags: PMFlags{Actor: "a"}}},
		{"pm show needs an id", []string{"pm", "task", "show"}, nil},
		{"pm add takes one title", []string{"pm", "task", "add", "a", "b"}, nil},
		{"relay: unset roles are the config's", []string{"relay", "t"}, party.RelayOptions{Task: "t", Rounds: 3, PlanTimeout: 5 * time.Minute, ExecTimeout: 15 * time.Minute}},
		{"relay roles and timeouts", []string{"relay", "t", "--planner", "p", "--executor", "e", "--plan-timeout", "20s", "--exec-timeout", "500"},
			party.RelayOptions{Task: "t", Planner: "p", Executor: "e", Rounds: 3, PlanTimeout: 20 * time.Second, ExecTimeout: 500 * time.Millisecond}},
		{"relay retry", []string{"relay", "--retry", "last"}, party.RelayOptions{Retry: "last", Rounds: 3, PlanTimeout: 5 * time.Minute, ExecTimeout: 15 * time.Minute}},
		{"relay retry takes no task", []string{"relay", "--retry", "last", "t"}, nil},
		{"relay zero rounds", []string{"relay", "t", "--rounds", "0"}, nil},
		{"relay bad timeout", []string{"relay", "t", "--plan-timeout", "soon"}, nil},
		{"route detached", []string{"route", "--detach", "--hop-limit", "3"}, party.RouteOptions{HopLimit: 3, Detach: true}},
		{"route hop limit 0", []string{"route", "--hop-limit", "0"}, nil},
		{"record", []string{"record", "--out", "d", "--redact", "a", "--redact", "b"}, party.RecordOptions{Out: "d", Redact: []string{"a", "b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := testFactory("")
			var got any
			err := execute(f, tt.args, newTalkCmd(f, capture[party.TalkOptions](&got)), newCheckCmd(f, capture[party.CheckOptions](&got)),
				newStopCmd(f, capture[StopOptions](&got)), newResolveCmd(f, capture[ResolveOptions](&got)),
				newHooksCmd(f, capture[HooksInstallOptions](&got)), newReplayCmd(f, capture[ReplayOptions](&got)),
				newInstructionsCmd(f, capture[InstructionsOptions](&got)), newHookCmd(f, capture[HookOptions](&got)),
				newStartCmd(f, capture[StartOptions](&got)), newSendCmd(f, capture[party.SendRequest](&got)), newPMCmd(f, pmRunFs{init: capture[PMInitOptions](&got), milestoneAdd: capture[PMMilestoneAddOptions](&got), taskAdd: capture[PMTaskAddOptions](&got),
					taskList: capture[PMTaskListOptions](&got), taskUpdate: capture[PMTaskUpdateOptions](&got), taskDone: capture[PMTaskDoneOptions](&got),
					doc: capture[PMDocOptions](&got), log: capture[PMLogOptions](&got), jump: capture[PMJumpOptions](&got)}),
				newRelayCmd(f, capture[party.RelayOptions](&got)), newRouteCmd(f, capture[party.RouteOptions](&got)), newRecordCmd(f, capture[party.RecordOptions](&got)))
			if tt.want == nil {
				assert.ErrorIs(t, err, party.ErrUsage)
				assert.Nil(t, got, "nothing runs")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestConflictErrorJSON(t *testing.T) {
	f, out, _ := testFactory("")
	f.JSON = true
	root := NewRootCmd(f)
	for _, c := range root.Commands() {
		if c.Name() == "pm" {
			root.RemoveCommand(c)
		}
	}
	conflict := &task.ConflictError{ID: "1", Fields: []task.FieldDiff{{Field: "status", Cached: "pending", Remote: "done"}}}
	root.AddCommand(newPMCmd(f, pmRunFs{taskDone: func(context.Context, *PMTaskDoneOptions) error { return fmt.Errorf("update: %w", conflict) }}))
	code, exit := exitcode.Classify(fmt.Errorf("x: %w", conflict))
	assert.Equal(t, "CONFLICT", code)
	assert.Equal(t, exitcode.ExitConflict, exit)
	exit = runRoot(context.Background(), f, root, []string{"pm", "task", "done", "1", "--json"})
	assert.Equal(t, exitcode.ExitConflict, exit)
	var got struct {
		Error struct {
			Code   string           `json:"code"`
			ID     string           `json:"id"`
			Fields []task.FieldDiff `json:"fields"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &got), out.String())
	assert.Equal(t, "CONFLICT", got.Error.Code)
	assert.Equal(t, "1", got.Error.ID)
	assert.Equal(t, conflict.Fields, got.Error.Fields)
}

func TestFlagErrorBeforeJSONIsJSON(t *testing.T) {
	f, out, _ := testFactory("")
	assert.Equal(t, exitcode.ExitUsage, Run(context.Background(), f, []string{"talk", "codex", "hi", "--timeout", "soon", "--json"}))
	var got struct {
		Error struct{ Code string } `json:"error"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &got), out.String())
	assert.Equal(t, "USAGE", got.Error.Code)

	f, out, _ = testFactory("")
	assert.Equal(t, exitcode.ExitUsage, Run(context.Background(), f, []string{"talk", "codex", "--bogus", "--", "--json"}))
	assert.Empty(t, out.String(), "after -- it is text, not the flag")
}

// An unknown command, or a group of commands run without one, is a usage
// error (exit 2) everywhere in the tree, never cobra's help and exit 0.
func TestUnknownSubcommandsAreUsageErrors(t *testing.T) {
	f, _, _ := testFactory("")
	var groups [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		// A command that runs itself and has subcommands (party trigger
		// ROLE TEXT, party trigger show ID; party sessions, party sessions
		// forget NAME; party mcp, party mcp install AGENT) reads other
		// words as its arguments.
		runsItself := slices.Equal(path, []string{"trigger"}) || slices.Equal(path, []string{"sessions"}) || slices.Equal(path, []string{"mcp"})
		if c.HasSubCommands() && !runsItself {
			groups = append(groups, path)
		}
		for _, sub := range c.Commands() {
			if sub.Name() != "help" && sub.Name() != "completion" {
				walk(sub, append(append([]string{}, path...), sub.Name()))
			}
		}
	}
	walk(NewRootCmd(f), []string{})
	require.Subset(t, groups, [][]string{{}, {"review"}, {"coordinator"}, {"evidence"}, {"pm"}, {"pm", "task"}, {"agents"}, {"config"}})
	for _, path := range groups {
		t.Run("party "+strings.Join(append(path, "frobnicate"), " "), func(t *testing.T) {
			f, out, errOut := testFactory("")
			assert.Equal(t, exitcode.ExitUsage, Run(context.Background(), f, append(path, "frobnicate")))
			assert.Empty(t, out.String(), "no help on stdout")
			assert.Contains(t, errOut.String(), `unknown command "frobnicate"`)
		})
		if len(path) == 0 {
			continue
		}
		t.Run("party "+strings.Join(path, " "), func(t *testing.T) {
			f, out, errOut := testFactory("")
			assert.Equal(t, exitcode.ExitUsage, Run(context.Background(), f, path))
			assert.Empty(t, out.String())
			assert.Contains(t, errOut.String(), "needs a command")
		})
	}
	f, out, _ := testFactory("")
	assert.Equal(t, exitcode.ExitOK, Run(context.Background(), f, nil), "party alone prints its help")
	assert.Contains(t, out.String(), "Available Commands")
	f, out, _ = testFactory("")
	assert.Equal(t, exitcode.ExitOK, Run(context.Background(), f, []string{"pm", "task", "--help"}))
	assert.NotContains(t, out.String(), "party pm task [flags]", "a group does not run alone")
}

// party hook never fails the agent that runs it: exit 0 whatever its
// arguments, the problem on stderr.
func TestHookAlwaysExitsZero(t *testing.T) {
	for _, args := range [][]string{{"hook"}, {"hook", "bogus"}, {"hook", "codex-notify", "a", "b"}, {"hook", "claude"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			f, _, errOut := testFactory("not json")
			assert.Equal(t, exitcode.ExitOK, Run(context.Background(), f, args))
			assert.NotEmpty(t, errOut.String(), "the problem is said on stderr")
		})
	}
}

// TestTriggerArgumentsAreUsageErrors: party trigger takes ROLE and TEXT,
// or a subcommand; anything else is a usage error (exit 2).
func TestTriggerArgumentsAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"trigger"}, {"trigger", "claude"}, {"trigger", "show"}, {"trigger", "a", "b", "c"}} {
		f, out, _ := testFactory("")
		assert.Equal(t, exitcode.ExitUsage, Run(context.Background(), f, args), "%v", args)
		assert.Empty(t, out.String())
	}
}

// TestSocketFlagsBothAreUsageError: -L and -S together name the tmux
// server two ways: a usage error (exit 2) saying so, before any command
// runs.
func TestSocketFlagsBothAreUsageError(t *testing.T) {
	for _, args := range [][]string{{"-L", "a", "-S", "b", "ls"}, {"ls", "--socket", "a", "--socket-path", "b"}, {"-L", "a", "-S", "b", "trigger", "list"}} {
		f, out, errOut := testFactory("")
		assert.Equal(t, exitcode.ExitUsage, Run(context.Background(), f, args), "%v", args)
		assert.Empty(t, out.String())
		assert.Contains(t, errOut.String(), "-L/--socket and -S/--socket-path", "%v", args)
	}
}

// group is a command named name holding cmds, to run a leaf under its
// real path with a capturing runF.
func group(name string, cmds ...*cobra.Command) *cobra.Command {
	g := &cobra.Command{Use: name}
	g.AddCommand(cmds...)
	return g
}

func TestSubcommandArgs(t *testing.T) {
	remark := "the reviewer"
	tests := []struct {
		name string
		args []string
		cmd  func(f *Factory, got *any) *cobra.Command
		want any // nil: a usage error
	}{
		{"config set --global", []string{"config", "set", "k", "v", "--global"},
			func(f *Factory, got *any) *cobra.Command {
				return group("config", newConfigSetCmd(f, capture[ConfigSetOptions](got)))
			}, ConfigSetOptions{Key: "k", Value: "v", Global: true}},
		{"config get takes one key", []string{"config", "get"},
			func(f *Factory, got *any) *cobra.Command {
				return group("config", newConfigGetCmd(f, capture[ConfigGetOptions](got)))
			}, nil},
		{"agents update with a remark", []string{"agents", "update", "rev", "%3", remark},
			func(f *Factory, got *any) *cobra.Command {
				return group("agents", newAgentsRegisterCmd(f, true, capture[AgentsRegisterOptions](got)))
			}, AgentsRegisterOptions{Name: "rev", Pane: "%3", Remark: &remark, Update: true}},
		{"trigger list --status", []string{"trigger", "list", "--status", "failed"},
			func(f *Factory, got *any) *cobra.Command {
				return group("trigger", newTriggerListCmd(f, capture[TriggerListOptions](got)))
			}, TriggerListOptions{Status: "failed", Limit: 50}},
		{"trigger list pages", []string{"trigger", "list", "--limit", "0", "--since", "2h", "--before", "t9"},
			func(f *Factory, got *any) *cobra.Command {
				return group("trigger", newTriggerListCmd(f, capture[TriggerListOptions](got)))
			}, TriggerListOptions{Limit: 0, Since: "2h", Before: "t9"}},
		{"inbox send", []string{"inbox", "send", "--to", "codex", "--thread", "t", "hi"},
			func(f *Factory, got *any) *cobra.Command {
				return group("inbox", newInboxSendCmd(f, capture[party.MessageRequest](got)))
			}, party.MessageRequest{To: "codex", Thread: "t", Text: "hi"}},
		{"inbox send needs --to", []string{"inbox", "send", "hi"},
			func(f *Factory, got *any) *cobra.Command {
				return group("inbox", newInboxSendCmd(f, capture[party.MessageRequest](got)))
			}, nil},
		{"supervise start --listen", []string{"supervise", "start", "--listen", "127.0.0.1:0"},
			func(f *Factory, got *any) *cobra.Command {
				return group("supervise", newSuperviseStartCmd(f, capture[party.RunOptions](got)))
			}, party.RunOptions{Listen: "127.0.0.1:0"}},
		{"runtime stop --grace", []string{"runtime", "stop", "codex", "--grace", "2s"},
			func(f *Factory, got *any) *cobra.Command {
				return group("runtime", newRuntimeStopCmd(f, capture[party.RuntimeStopOptions](got)))
			}, party.RuntimeStopOptions{Role: "codex", Grace: 2 * time.Second}},
		{"log --kind", []string{"log", "--kind", "relay.", "-f"},
			func(f *Factory, got *any) *cobra.Command { return newLogCmd(f, capture[party.LogOptions](got)) },
			party.LogOptions{Kind: "relay.", Follow: true}},
		{"heartbeat default status", []string{"heartbeat"},
			func(f *Factory, got *any) *cobra.Command { return newHeartbeatCmd(f, capture[HeartbeatOptions](got)) },
			HeartbeatOptions{Status: "active"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := testFactory("")
			var got any
			err := execute(f, tt.args, tt.cmd(f, &got))
			if tt.want == nil {
				assert.Error(t, err)
				assert.Nil(t, got, "nothing runs")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestReviewWriteArgs(t *testing.T) {
	f, _, _ := testFactory("")
	var findings *FindingsOptions
	require.NoError(t, execute(f, []string{"findings", "{}"}, newFindingsCmd(f, func(_ context.Context, o *FindingsOptions) error { findings = o; return nil })))
	assert.Equal(t, "{}", findings.JSON)

	var answer *AnswerOptions
	answerCmd := func() *cobra.Command {
		return newAnswerCmd(f, func(_ context.Context, o *AnswerOptions) error { answer = o; return nil })
	}
	require.NoError(t, execute(f, []string{"answer", "2", "LRU"}, answerCmd()))
	assert.Equal(t, AnswerOptions{N: 2, Text: "LRU"}, *answer)
	for _, bad := range [][]string{{"answer", "x", "LRU"}, {"answer", "0", "LRU"}, {"answer", "1", " "}, {"answer", "1"}} {
		answer = nil
		err := execute(f, bad, answerCmd())
		assert.ErrorIs(t, err, party.ErrUsage, bad)
		assert.Nil(t, answer, "nothing runs")
	}
}
