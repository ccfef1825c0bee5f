package wait

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/state"
)

func TestReadLog(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"XDG_RUNTIME_DIR": os.Getenv("XDG_RUNTIME_DIR")}
	getenv := func(k string) string { return env[k] }
	path := filepath.Join(dir, state.EventLog)
	for _, k := range []string{"relay.block", "turn-complete", "relay.step"} {
		require.NoError(t, state.AppendEvent(path, map[string]string{"kind": k}))
	}
	kinds := func(lines [][]byte) []string {
		var out []string
		for _, l := range lines {
			out = append(out, state.EventKind(l))
		}
		return out
	}

	var got [][]byte
	opts := LogOptions{StateDir: dir, Kind: "relay.", Getenv: getenv, Clock: clock.Real{}}
	require.NoError(t, ReadLog(context.Background(), opts, func(l []byte) { got = append(got, l) }))
	assert.Equal(t, []string{"relay.block", "relay.step"}, kinds(got))

	// Following: a new event is read once the session wakes (the clock
	// never ends a pause); the end of ctx ends the follow without an error.
	got = nil
	opts.Clock = neverClock{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts.Kind, opts.Follow = "", true
	err := ReadLog(ctx, opts, func(l []byte) {
		got = append(got, l)
		switch len(got) {
		case 3:
			require.NoError(t, state.AppendEvent(path, map[string]string{"kind": "input"}))
			state.WakeSession(getenv, dir)
		case 4:
			cancel()
		}
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"relay.block", "turn-complete", "relay.step", "input"}, kinds(got))
}

// neverClock's pauses last until their context ends.
type neverClock struct{ clock.Real }

func (neverClock) Sleep(ctx context.Context, _ time.Duration) error {
	<-ctx.Done()
	return ctx.Err()
}
