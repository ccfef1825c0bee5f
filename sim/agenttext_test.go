package sim_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/relay"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/sim"
)

func TestSwitchboardRefusesShellsAndProgramsInSim(t *testing.T) {
	f := newRelayFixture(func(prompt string) []string {
		var to []string
		switch prompt { // the screen shows 10 lines: two blocks a prompt
		case "go":
			to = []string{"sh", "tui"}
		case "go on":
			to = []string{"opted", "executor"}
		}
		out := []string{"answer"}
		for _, role := range to {
			out = append(out, block(role, "note", "to-"+role, "touch /tmp/pwned")...)
		}
		return out
	}, nil)
	sh, tui, opted := sim.NewAgent("shell"), sim.NewAgent("generic"), sim.NewAgent("shell")
	f.mux.Add("s", "sh", sh)
	f.mux.Add("s", "tui", tui)
	f.mux.Add("s", "opted", opted)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, events, progress := newRouter(t, f)
	r.Allowed = func(role string) bool { return role == "opted" }
	require.NoError(t, r.Start(ctx))
	send := func(text string) {
		_, err := f.deliverer().Send(ctx, deliver.Request{Pane: f.plannerP.ID, Profile: agent.Lookup(agent.Claude), Text: text})
		require.NoError(t, err)
	}
	send("go")
	r.Clock = stopClock{Clock: f.clock, until: f.clock.Now().Add(time.Minute), stop: cancel}
	require.NoError(t, r.Run(ctx, nil, nil))
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	send("go on")
	r.Clock = stopClock{Clock: f.clock, until: f.clock.Now().Add(time.Minute), stop: cancel}
	require.NoError(t, r.Run(ctx, nil, nil))

	assert.Empty(t, sh.Submissions, "the shell got nothing")
	assert.Empty(t, tui.Submissions, "the program got nothing")
	assert.Len(t, opted.Submissions, 1, "the role the user opted in got its block")
	assert.Len(t, f.executor.Submissions, 1, "the agent got its block")
	byID := map[string]map[string]any{}
	for _, ev := range *events {
		if id, ok := ev["id"].(string); ok {
			byID[id] = ev
		}
	}
	assert.Equal(t, "route.refused-shell", byID["to-sh"]["kind"])
	assert.Equal(t, "shell", byID["to-sh"]["agent"])
	assert.Equal(t, "route.refused-program", byID["to-tui"]["kind"])
	assert.Equal(t, "generic", byID["to-tui"]["agent"])
	assert.Equal(t, "route.forward", byID["to-opted"]["kind"])
	assert.Equal(t, "route.forward", byID["to-executor"]["kind"])
	assert.Contains(t, progress.String(), `to "sh" not forwarded: refused-shell (`)
}

func TestRelayRefusesAShellBeforeSendingAnythingInSim(t *testing.T) {
	f := newRelayFixture(nil, nil)
	sh := sim.NewAgent("shell")
	shP := f.mux.Add("s", "sh", sh)
	stateDir := t.TempDir()
	job := relay.SessionJob(f.panes(t), f.clock, stateDir)

	_, err := job.Run(context.Background(), relay.Task{ID: "t9", Text: "x", Planner: "planner", Executor: "sh", Rounds: 1, PlanWait: time.Minute, ExecWait: time.Minute})

	var refused *deliver.NotAgentError
	require.ErrorAs(t, err, &refused)
	assert.Equal(t, shP.Info.ID, refused.Pane)
	assert.Contains(t, err.Error(), "relay role sh")
	assert.Empty(t, sh.Submissions)
	assert.Empty(t, f.planner.Submissions, "not even the planner was primed")
	b, err := os.ReadFile(filepath.Join(stateDir, state.EventLog))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"kind":"relay.refused-shell"`)
	assert.Contains(t, string(b), fmt.Sprintf(`"pane":%q`, shP.Info.ID))
}
