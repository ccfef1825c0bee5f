package party

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/sim"
)

func TestDelivererNotesWhatItPastes(t *testing.T) {
	clk := sim.NewClock()
	m := sim.NewMux(clk)
	p := m.Add("s", "worker", sim.NewAgent("claude"))
	dir := t.TempDir()
	getenv := func(k string) string { return map[string]string{"XDG_RUNTIME_DIR": os.Getenv("XDG_RUNTIME_DIR")}[k] }
	d := NewDeliverer(m, clk, getenv, t.TempDir(), dir, map[string]string{p.Info.ID: "worker"})
	d.Locker = &sim.Locker{}
	res, err := d.Send(context.Background(), deliver.Request{Pane: p.Info.ID, Profile: agent.Lookup(agent.Claude), Text: "hello"})
	require.NoError(t, err)
	assert.Equal(t, deliver.Submitted, res.Outcome)

	lines, _, err := state.ReadFrom(filepath.Join(dir, state.EventLog), 0)
	require.NoError(t, err)
	require.Len(t, lines, 1, "one input event")
	assert.Contains(t, string(lines[0]), `"kind":"input"`)
	assert.Contains(t, string(lines[0]), `"role":"worker"`)
	assert.Contains(t, string(lines[0]), `"text":"hello"`)
	assert.Contains(t, string(lines[0]), clk.Now().UTC().Format(time.RFC3339))

	bare := NewDeliverer(m, clk, getenv, t.TempDir(), "", nil)
	assert.Nil(t, bare.Pasted, "no state dir: nothing is noted")
	assert.Empty(t, bare.Events.Path)
}
