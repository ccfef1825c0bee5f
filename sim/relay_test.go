package sim_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/blocks"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/party"
	"github.com/partyhq/party/core/relay"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/sim"
)

// block is the lines of a tagged block, as an agent prints it.
func block(to, typ, id, body string) []string {
	return []string{fmt.Sprintf(`[[POLI:MSG {"to":%q,"type":%q,"id":%q}]]`, to, typ, id), body, "[[/POLI:MSG]]"}
}

// relayFixture is a planner and an executor pane in one simulated session.
type relayFixture struct {
	clock              *sim.Clock
	mux                *sim.Mux
	planner, executor  *sim.Agent
	plannerP, executeP mux.Pane
	locker             *sim.Locker
}

func newRelayFixture(planner, executor func(prompt string) []string) *relayFixture {
	clock := sim.NewClock()
	m := sim.NewMux(clock)
	f := &relayFixture{clock: clock, mux: m, planner: sim.NewAgent("claude"), executor: sim.NewAgent("codex"), locker: &sim.Locker{}}
	f.planner.Reply, f.executor.Reply = planner, executor
	f.plannerP = m.Add("s", "planner", f.planner).Info
	f.executeP = m.Add("s", "executor", f.executor).Info
	return f
}

func (f *relayFixture) deliverer() *deliver.Deliverer {
	return &deliver.Deliverer{Mux: f.mux, Clock: f.clock, Locker: f.locker}
}

func (f *relayFixture) panes(t *testing.T) *relay.MuxPanes {
	return &relay.MuxPanes{Mux: f.mux, Clock: f.clock, PrimeDir: t.TempDir(),
		Resolve: func(ctx context.Context, role string) (relay.Target, error) {
			panes, err := f.mux.ListPanes(ctx, "s")
			if err != nil {
				return relay.Target{}, err
			}
			for _, p := range panes {
				if p.Role == role {
					return relay.Target{Pane: p.ID, Profile: agent.Lookup(agent.Kind(p.Agent))}, nil
				}
			}
			return relay.Target{}, fmt.Errorf("role %s: %w", role, mux.ErrNoPane)
		},
		Deliverer: func(map[string]string) *deliver.Deliverer { return f.deliverer() },
	}
}

func TestRelayRoundTripInSim(t *testing.T) {
	plannerSaw, executorSaw := 0, 0
	f := newRelayFixture(
		func(prompt string) []string {
			switch {
			case strings.HasPrefix(prompt, "TASK t1:"):
				plannerSaw++
				return block("EXECUTER", "plan", "t1-plan", "build A")
			case strings.HasPrefix(prompt, "TASK t1 RESULT"):
				plannerSaw++
				return block("USER", "report", "t1-report", "A is built")
			}
			return []string{"ready"}
		},
		func(prompt string) []string {
			if strings.HasPrefix(prompt, "TASK t1 PLAN") {
				executorSaw++
				return block("PLANNER", "result", "t1-result", "built A")
			}
			return []string{"ready"}
		})
	f.planner.Think, f.executor.Think = 30*time.Second, 2*time.Minute
	p := f.panes(t)
	var kinds []string
	r := &relay.Relay{Panes: p, Log: func(k string, _ map[string]any) { kinds = append(kinds, k) }}
	task := relay.Task{ID: "t1", Text: "build A", Planner: "planner", Executor: "executor", Rounds: 1, PlanWait: 5 * time.Minute, ExecWait: 15 * time.Minute}
	wall, start := time.Now(), f.clock.Now()

	require.NoError(t, p.Prime(context.Background(), task))
	report, err := r.Run(context.Background(), task)
	require.NoError(t, err)

	assert.Equal(t, "A is built", report)
	assert.Equal(t, 2, plannerSaw, "the planner got the task and the result")
	assert.Equal(t, 1, executorSaw, "the executor got the plan once")
	require.Len(t, f.planner.Submissions, 3, "primer, task, result")
	assert.Contains(t, f.planner.Submissions[0].Text, "You are the PLANNER")
	require.Len(t, f.executor.Submissions, 2, "primer, plan")
	assert.Contains(t, f.executor.Submissions[1].Text, "build A")
	assert.Equal(t, []string{"sent", "block", "route", "sent", "block", "route", "sent", "block", "report"}, kinds)
	assert.GreaterOrEqual(t, f.clock.Now().Sub(start), 3*time.Minute, "the agents' virtual think time passed")
	assert.Less(t, time.Since(wall), 10*time.Second, "in virtual time")

	// Priming is once per pane.
	require.NoError(t, p.Prime(context.Background(), task))
	assert.Len(t, f.planner.Submissions, 3, "no second primer")
}

func TestRelayStallCarriesTheScreenInSim(t *testing.T) {
	f := newRelayFixture(func(string) []string { return []string{"thinking out loud"} }, nil)
	r := &relay.Relay{Panes: f.panes(t)}
	_, err := r.Run(context.Background(), relay.Task{ID: "t2", Text: "x", Planner: "planner", Executor: "executor", Rounds: 1, PlanWait: time.Minute, ExecWait: time.Minute})
	var stall *relay.StallError
	require.ErrorAs(t, err, &stall)
	assert.Contains(t, stall.Screen, "thinking out loud")
}

func TestRelayPaneDiesInSim(t *testing.T) {
	f := newRelayFixture(nil, nil)
	f.planner.DieAfter(10*time.Second, "1")
	f.planner.Think = time.Hour
	r := &relay.Relay{Panes: f.panes(t)}
	_, err := r.Run(context.Background(), relay.Task{ID: "t3", Text: "x", Planner: "planner", Executor: "executor", Rounds: 1, PlanWait: time.Minute, ExecWait: time.Minute})
	assert.ErrorIs(t, err, deliver.ErrPaneDead)
}

// stopClock cancels the run under test once virtual time reaches until.
type stopClock struct {
	*sim.Clock
	until time.Time
	stop  context.CancelFunc
}

func (c stopClock) Sleep(ctx context.Context, d time.Duration) error {
	if !c.Now().Before(c.until) {
		c.stop()
	}
	return c.Clock.Sleep(ctx, d)
}

// newRouter is a switchboard over the fixture's panes, logging into
// events and progress.
func newRouter(t *testing.T, f *relayFixture) (*relay.Router, *[]map[string]any, *strings.Builder) {
	t.Helper()
	panes, err := f.mux.ListPanes(context.Background(), "s")
	require.NoError(t, err)
	var mu sync.Mutex
	events := &[]map[string]any{}
	progress := &strings.Builder{}
	return &relay.Router{Mux: f.mux, Clock: f.clock, Session: "s", Panes: panes, HopLimit: 8, Deliver: f.deliverer(),
		Profile: func(_ string, p mux.Pane) agent.Profile { return agent.Lookup(agent.Kind(p.Agent)) },
		Log: func(ev map[string]any) {
			mu.Lock()
			defer mu.Unlock()
			*events = append(*events, ev)
		},
		Progress: progress}, events, progress
}

func TestSwitchboardForwardsOnceInSim(t *testing.T) {
	f := newRelayFixture(func(prompt string) []string {
		switch prompt {
		case "old":
			return block("executor", "note", "n0", "before the switchboard")
		case "go":
			return append(block("executor", "note", "n1", "hello executor"), block("nobody", "note", "n2", "lost")...)
		}
		return []string{"answer"}
	}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := f.deliverer()
	send := func(text string) {
		_, err := d.Send(ctx, deliver.Request{Pane: f.plannerP.ID, Profile: agent.Lookup(agent.Claude), Text: text})
		require.NoError(t, err)
	}
	send("old")
	f.clock.Advance(time.Minute)
	r, events, progress := newRouter(t, f)
	require.NoError(t, r.Start(ctx))
	send("go")
	r.Clock = stopClock{Clock: f.clock, until: f.clock.Now().Add(time.Minute), stop: cancel}
	wall := time.Now()

	require.NoError(t, r.Run(ctx, nil, nil))

	assert.Less(t, time.Since(wall), 10*time.Second, "in virtual time")
	require.Len(t, f.executor.Submissions, 1, "n1 forwarded exactly once; n0 was there before")
	got := f.executor.Submissions[0].Text
	found, _ := blocks.Parse(got)
	require.Len(t, found, 1, "the executor got one block: %q", got)
	assert.Equal(t, "n1", found[0].ID)
	assert.Equal(t, "planner", found[0].From)
	assert.Equal(t, 1, found[0].Hop)
	assert.Equal(t, "hello executor", found[0].Body)

	var kinds []string
	for _, ev := range *events {
		kinds = append(kinds, fmt.Sprint(ev["kind"], " ", ev["id"]))
	}
	assert.ElementsMatch(t, []string{"route.start <nil>", "route.forward n1", "route.unknown-role n2"}, kinds)
	assert.Equal(t, "party: switchboard on s: 2 roles, hop limit 8\n", strings.SplitAfter(progress.String(), "\n")[0])
	assert.Contains(t, progress.String(), "party: block n1 planner -> executor: submitted\n")
	assert.Contains(t, progress.String(), "party: block n2 from planner to \"nobody\" not forwarded: unknown-role\n")
}

func TestSwitchboardStopsWhenTheSessionEndsInSim(t *testing.T) {
	f := newRelayFixture(nil, nil)
	r, _, _ := newRouter(t, f)
	require.NoError(t, r.Start(context.Background()))
	done := make(chan struct{})
	close(done)
	assert.NoError(t, r.Run(context.Background(), nil, done))
}

func TestRelayJobRetriesAnAbortedTaskInSim(t *testing.T) {
	ready := false
	f := newRelayFixture(
		func(prompt string) []string {
			switch {
			case strings.HasPrefix(prompt, "TASK t4:") && ready:
				return block("EXECUTER", "plan", "t4-plan", "build B")
			case strings.HasPrefix(prompt, "TASK t4 RESULT"):
				return block("USER", "report", "t4-report", "B is built")
			}
			return []string{"thinking"}
		},
		func(prompt string) []string {
			if strings.HasPrefix(prompt, "TASK t4 PLAN") {
				return block("PLANNER", "result", "t4-result", "built B")
			}
			return []string{"ready"}
		})
	stateDir := t.TempDir()
	job := relay.SessionJob(f.panes(t), f.clock, stateDir)
	task := relay.Task{ID: "t4", Text: "build B", Planner: "planner", Executor: "executor", Rounds: 1, PlanWait: time.Minute, ExecWait: time.Minute}

	_, err := job.Run(context.Background(), task)
	var stall *relay.StallError
	require.ErrorAs(t, err, &stall, "the planner never answers the first time")
	saved, err := job.Steps.Load(relay.Latest)
	require.NoError(t, err)
	assert.Equal(t, "plan", saved.Kind, "the aborted step is kept")

	ready = true
	got, report, err := job.Retry(context.Background(), relay.Latest)
	require.NoError(t, err)
	assert.Equal(t, "t4", got.ID)
	assert.Equal(t, "B is built", report)
	_, err = job.Steps.Load("t4")
	assert.ErrorIs(t, err, relay.ErrNoTask, "a finished task is forgotten")
	primers := 0
	for _, s := range f.planner.Submissions {
		if strings.Contains(s.Text, "You are the PLANNER") {
			primers++
		}
	}
	assert.Equal(t, 1, primers, "a retry does not prime again")

	events, err := os.ReadFile(filepath.Join(stateDir, state.EventLog))
	require.NoError(t, err)
	assert.Contains(t, string(events), `"kind":"relay.report"`, "the job logs into the session's event log")
}

// TestSwitchboardHopsByConversationInSim: a ping-pong between two agents
// ends at the hop limit; a new question the user then sends one of them
// (party's delivery logs it as input) starts a new conversation, whose
// first block goes out at hop 1, and whose own ping-pong ends at the
// limit again.
func TestSwitchboardHopsByConversationInSim(t *testing.T) {
	answer := func(suffix, to string) func(string) []string {
		return func(prompt string) []string {
			if found, _ := blocks.Parse(prompt); len(found) == 1 {
				return block(to, "ping", found[0].ID+suffix, "ping")
			}
			switch prompt {
			case "go":
				return block(to, "ping", "p", "first question")
			case "new question":
				return block(to, "ping", "q", "second question")
			}
			return []string{"answer"}
		}
	}
	f := newRelayFixture(answer("a", "executor"), answer("b", "planner"))
	dir := t.TempDir()
	send := func(text string) {
		d := party.NewDeliverer(f.mux, f.clock, func(string) string { return "" }, t.TempDir(), dir, nil)
		_, err := d.Send(context.Background(), deliver.Request{Pane: f.plannerP.ID, Profile: agent.Lookup(agent.Claude), Text: text})
		require.NoError(t, err)
	}
	r, events, _ := newRouter(t, f)
	r.HopLimit, r.Events = 3, filepath.Join(dir, state.EventLog)
	require.NoError(t, r.Start(context.Background()))
	run := func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r.Clock = stopClock{Clock: f.clock, until: f.clock.Now().Add(time.Minute), stop: cancel}
		require.NoError(t, r.Run(ctx, nil, nil))
	}
	send("go")
	run()
	send("new question")
	run()

	var got []string
	for _, ev := range *events {
		if ev["kind"] != "route.start" {
			got = append(got, fmt.Sprint(ev["kind"], " ", ev["id"], " hop ", ev["hop"]))
		}
	}
	assert.Equal(t, []string{
		"route.forward p hop 1", "route.forward pb hop 2", "route.forward pba hop 3", "route.hop-limit pbab hop 4",
		"route.forward q hop 1", "route.forward qb hop 2", "route.forward qba hop 3", "route.hop-limit qbab hop 4",
	}, got)
}

// dialogClock shows a dialog on an agent's screen from show to hide, in
// virtual time, as its sleeps pass those times.
type dialogClock struct {
	*sim.Clock
	agent      *sim.Agent
	show, hide time.Time
}

func (c dialogClock) Sleep(ctx context.Context, d time.Duration) error {
	err := c.Clock.Sleep(ctx, d)
	switch now := c.Now(); {
	case !now.Before(c.hide):
		c.agent.HideDialog()
	case !now.Before(c.show):
		c.agent.ShowDialog()
	}
	return err
}

// TestRelayWaitsOutAnExecutorsDialogInSim: the executor asks a permission
// 30 s into its turn and someone answers it 3.5 min later, past the
// exec timeout: the relay neither nudges into the dialog nor stalls; it
// says so, waits, and takes the result once the turn goes on.
func TestRelayWaitsOutAnExecutorsDialogInSim(t *testing.T) {
	f := newRelayFixture(
		func(prompt string) []string {
			if strings.HasPrefix(prompt, "TASK t1 RESULT") {
				return block("USER", "report", "t1-report", "done")
			}
			if strings.HasPrefix(prompt, "TASK t1:") {
				return block("EXECUTER", "plan", "t1-plan", "run it")
			}
			return []string{"ready"}
		},
		func(prompt string) []string {
			if strings.HasPrefix(prompt, "TASK t1 PLAN") {
				return block("PLANNER", "result", "t1-result", "ran it")
			}
			return []string{"ready"}
		})
	p := f.panes(t)
	task := relay.Task{ID: "t1", Text: "run it", Planner: "planner", Executor: "executor", Rounds: 1, PlanWait: time.Minute, ExecWait: 2 * time.Minute}
	require.NoError(t, p.Prime(context.Background(), task))
	f.executor.Think = 5 * time.Minute
	start := f.clock.Now()
	p.Clock = dialogClock{Clock: f.clock, agent: f.executor, show: start.Add(30 * time.Second), hide: start.Add(4 * time.Minute)}
	var notes, warnings []string
	p.Note = func(kind string, _ map[string]any) { notes = append(notes, kind) }
	p.Warn = func(msg string) { warnings = append(warnings, msg) }
	var kinds []string
	r := &relay.Relay{Panes: p, Log: func(k string, _ map[string]any) { kinds = append(kinds, k) }}

	report, err := r.Run(context.Background(), task)
	require.NoError(t, err)
	assert.Equal(t, "done", report)
	assert.Equal(t, []string{"dialog", "dialog-closed"}, notes)
	require.Len(t, warnings, 2)
	assert.Contains(t, warnings[0], "shows a dialog")
	assert.Contains(t, warnings[1], "the dialog was answered")
	assert.NotContains(t, kinds, "nudge", "no nudge typed into the dialog, none needed after")
	assert.Zero(t, f.executor.DialogKeys, "nothing pressed in the dialog")
}

// TestSwitchboardReadsWhatTheModelWroteInSim: for a pane whose agent
// reports its turns, the switchboard forwards the block of the turn's
// answer in the event log, byte for byte; a block only its screen shows
// goes after HookGrace (its report lacked it).
func TestSwitchboardReadsWhatTheModelWroteInSim(t *testing.T) {
	f := newRelayFixture(func(prompt string) []string {
		if prompt == "screen only" {
			return block("executor", "note", "s1", "from the screen")
		}
		return []string{"answer"}
	}, nil)
	dir := t.TempDir()
	events := filepath.Join(dir, state.EventLog)
	r, _, _ := newRouter(t, f)
	r.Events = events
	for i := range r.Panes {
		if r.Panes[i].Role == "planner" {
			r.Panes[i].Hooks = "claude"
		}
	}
	require.NoError(t, r.Start(context.Background()))
	body := "   - three spaces, **bold**, `code`\n\n```\nfenced\n```"
	answer := "Here.\n[[POLI:MSG {\"to\":\"executor\",\"type\":\"note\",\"id\":\"w1\"}]]\n" + body + "\n[[/POLI:MSG]]"
	require.NoError(t, state.AppendEvent(events, map[string]any{"kind": "turn-complete", "agent": "claude", "pane": f.plannerP.ID, "answer": answer}))
	_, err := f.deliverer().Send(context.Background(), deliver.Request{Pane: f.plannerP.ID, Profile: agent.Lookup(agent.Claude), Text: "screen only"})
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := f.clock.Now()
	var forwardedAt []time.Duration
	r.Clock = stopClock{Clock: f.clock, until: start.Add(30 * time.Second), stop: cancel}
	r.Log = func(ev map[string]any) {
		if ev["kind"] == "route.forward" {
			forwardedAt = append(forwardedAt, f.clock.Now().Sub(start))
		}
	}
	require.NoError(t, r.Run(ctx, nil, nil))

	require.Len(t, f.executor.Submissions, 2)
	found, _ := blocks.ParseText(f.executor.Submissions[0].Text)
	require.Len(t, found, 1)
	assert.Equal(t, "w1", found[0].ID)
	assert.Equal(t, body, found[0].Body, "byte for byte")
	found, _ = blocks.Parse(f.executor.Submissions[1].Text)
	assert.Equal(t, "s1", found[0].ID)
	assert.GreaterOrEqual(t, forwardedAt[1], relay.HookGrace, "a screen block of a hooked pane waits for its report")
}
