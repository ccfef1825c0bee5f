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

func TestRecordSessionInSim(t *testing.T) {
	clock := sim.NewClock()
	m := sim.NewMux(clock)
	m.Add("s", "worker", sim.NewAgent("claude"))
	own := m.Add("s", "recorder", sim.NewAgent("shell"))
	panes, err := m.ListPanes(context.Background(), "s")
	require.NoError(t, err)
	stateDir, out := t.TempDir(), filepath.Join(t.TempDir(), "rec")
	env := map[string]string{"XDG_RUNTIME_DIR": os.Getenv("XDG_RUNTIME_DIR"), "TMUX_PANE": own.Info.ID}
	redactor, err := record.NewRedactor(record.DefaultRedactions)
	require.NoError(t, err)
	output := make(chan tmux.Output)
	detached := false
	var started []any
	s := &record.Session{Mux: m, Clock: clock, Getenv: func(k string) string { return env[k] }, Name: "s", StateDir: stateDir,
		Panes: panes, Out: out, Redactor: redactor,
		Output: func(context.Context) (record.Stream, error) {
			return record.Stream{Output: output, Close: func() error { detached = true; return nil }}, nil
		},
		Started: func(dir string, n int) {
			_, held := state.Holder(filepath.Join(stateDir, record.LockFile))
			started = append(started, dir, n, held)
		}}
	ran := make(chan error, 1)
	go func() {
		_, err := s.Run(context.Background())
		ran <- err
	}()
	output <- tmux.Output{Pane: "%0", Data: []byte("hello\r\n")}
	close(output) // the session ended
	require.NoError(t, <-ran)

	assert.Equal(t, []any{out, 1, true}, started, "one pane recorded (not the recorder's own), the lock held while recording")
	assert.True(t, detached, "the output stream is detached")
	assert.FileExists(t, filepath.Join(out, "worker.cast"))
	assert.NoFileExists(t, filepath.Join(out, "recorder.cast"))
	_, held := state.Holder(filepath.Join(stateDir, record.LockFile))
	assert.False(t, held, "the lock goes with the recording")
	b, err := os.ReadFile(filepath.Join(out, "worker.cast"))
	require.NoError(t, err)
	assert.Contains(t, string(b), `hello\r\n`)
	assert.Equal(t, filepath.Join("recordings", "s-20260102-150405"), record.DefaultOut("s", time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)))
}

// What a pane printed before party delivered an input is written before
// the input, even when both wait for the recorder at once: the output
// already queued is taken before the event log is read.
func TestRecorderOutputBeforeInputInSim(t *testing.T) {
	clock := sim.NewClock()
	m := sim.NewMux(clock)
	m.Add("s", "worker", sim.NewAgent("claude"))
	panes, err := m.ListPanes(context.Background(), "s")
	require.NoError(t, err)
	dir := t.TempDir()
	events := filepath.Join(dir, "events.jsonl")
	rec := &record.Recorder{Mux: m, Clock: clock, Session: "s", Panes: panes, Out: filepath.Join(dir, "rec"), Events: events}
	require.NoError(t, record.MkdirPrivate(rec.Out))
	require.NoError(t, rec.Start(context.Background()))

	output, wake := make(chan tmux.Output, 8), make(chan struct{}, 1)
	output <- tmux.Output{Pane: "%0", Data: []byte("queued> ")}
	output <- tmux.Output{Pane: "%0", Data: []byte("in flight> ")}
	require.NoError(t, state.AppendEvent(events, map[string]any{"kind": "input", "pane": "%0", "text": "typed by party"}))
	wake <- struct{}{}
	ran := make(chan error, 1)
	// Run takes the wake or an output first; either way the input is
	// written after both outputs. A second wake is taken only once the
	// first was handled.
	go func() { ran <- rec.Run(context.Background(), record.Sources{Output: output, Wake: wake}) }()
	wake <- struct{}{}
	close(output)
	require.NoError(t, <-ran)
	require.NoError(t, rec.Close())

	fh, err := os.Open(filepath.Join(rec.Out, "worker.cast"))
	require.NoError(t, err)
	defer fh.Close()
	_, evs, err := record.Read(fh)
	require.NoError(t, err)
	var kinds []string
	for _, e := range evs[1:] {
		kinds = append(kinds, e.Kind+" "+e.Data)
	}
	assert.Equal(t, []string{"o queued> in flight> ", "i typed by party"}, kinds)
}
