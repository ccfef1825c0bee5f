package sim_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/record"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
	"github.com/partyhq/party/sim"
)

func TestRecorderInSim(t *testing.T) {
	clock := sim.NewClock()
	m := sim.NewMux(clock)
	a := sim.NewAgent("claude")
	p := m.Add("s", "worker", a)
	m.Add("s", "", sim.NewAgent("shell"))
	panes, err := m.ListPanes(context.Background(), "s")
	require.NoError(t, err)
	dir := t.TempDir()
	events := filepath.Join(dir, "events.jsonl")
	require.NoError(t, state.AppendEvent(events, map[string]any{"kind": "input", "pane": "%0", "text": "before"}))
	redactor, err := record.NewRedactor(record.DefaultRedactions)
	require.NoError(t, err)
	out := filepath.Join(dir, "rec")
	require.NoError(t, record.MkdirPrivate(out))
	rec := &record.Recorder{Mux: m, Clock: clock, Session: "s", Panes: panes, Out: out, Events: events, Redactor: redactor}
	require.NoError(t, rec.Start(context.Background()))
	assert.Equal(t, 2, rec.Recording())

	output, wake, tick := make(chan tmux.Output), make(chan struct{}), make(chan time.Time)
	ran := make(chan error, 1)
	go func() { ran <- rec.Run(context.Background(), record.Sources{Output: output, Wake: wake, Tick: tick}) }()
	// An unbuffered send returns once the recorder took it, and the
	// recorder takes the next only when it has handled the one before:
	// settle returns when everything sent so far is handled.
	settle := func() { output <- tmux.Output{Pane: "%9", Data: []byte("not recorded\r\n")} }
	clock.Advance(time.Second)
	output <- tmux.Output{Pane: "%0", Data: []byte("hello\r\n")}
	settle()
	clock.Advance(time.Second)
	require.NoError(t, state.AppendEvent(events, map[string]any{"kind": "input", "pane": "%0", "text": "typed by party"}))
	wake <- struct{}{}
	settle()
	clock.Advance(time.Second)
	p.Info.Width = 100
	tick <- clock.Now()
	tick <- clock.Now() // no change: no second resize
	close(output)       // the session ended
	require.NoError(t, <-ran)
	require.NoError(t, rec.Close())

	fh, err := os.Open(filepath.Join(out, "worker.cast"))
	require.NoError(t, err)
	defer fh.Close()
	h, evs, err := record.Read(fh)
	require.NoError(t, err)
	assert.Equal(t, "s worker", h.Title)
	var got []record.Event
	for _, e := range evs {
		got = append(got, record.Event{Time: e.Time, Kind: e.Kind, Data: e.Data})
	}
	require.Len(t, got, 4, "screen, output, input, resize: %v", got)
	assert.Equal(t, "o", got[0].Kind)
	assert.Equal(t, 0.0, got[0].Time)
	assert.Equal(t, record.Event{Time: 1, Kind: "o", Data: "hello\r\n"}, got[1])
	assert.Equal(t, record.Event{Time: 2, Kind: "i", Data: "typed by party"}, got[2], "only inputs logged after the start")
	assert.Equal(t, record.Event{Time: 3, Kind: "r", Data: "100x40"}, got[3])
	assert.FileExists(t, filepath.Join(out, "1.cast"), "an untagged pane is named by its id")
	b, err := os.ReadFile(filepath.Join(out, "events.jsonl"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "typed by party", "the event log is copied beside the casts")
}

func TestRecorderStopsOnCancelInSim(t *testing.T) {
	clock := sim.NewClock()
	m := sim.NewMux(clock)
	m.Add("s", "worker", sim.NewAgent("claude"))
	panes, _ := m.ListPanes(context.Background(), "s")
	dir := t.TempDir()
	rec := &record.Recorder{Mux: m, Clock: clock, Session: "s", Panes: panes, Out: dir, Events: filepath.Join(dir, "none.jsonl")}
	require.NoError(t, rec.Start(context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.NoError(t, rec.Run(ctx, record.Sources{}))
	assert.NoError(t, rec.Close())
	assert.NoFileExists(t, filepath.Join(dir, "events.jsonl"), "no event log to copy")
}
