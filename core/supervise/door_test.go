package supervise

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/daemon"
)

// A reader's call finds no supervisor: it reads the records the last one
// left. Also when the supervisor still held its lock and said it served
// as the call was made (its tmux server just killed, its socket gone),
// and went while it was waited for.
func TestReaderFallsBackToTheRecords(t *testing.T) {
	for _, tt := range []struct {
		name    string
		serving bool // a supervisor holds the lock and its ProcFile says serving, with no socket
	}{
		{name: "none runs"},
		{name: "one said it served and went", serving: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stateDir := t.TempDir()
			dir := Dir(stateDir)
			require.NoError(t, os.MkdirAll(dir, 0o700))
			st, err := Open(filepath.Join(dir, StoreFile))
			require.NoError(t, err)
			require.NoError(t, st.Close())
			run := t.TempDir()
			getenv := func(k string) string {
				if k == "XDG_RUNTIME_DIR" {
					return run
				}
				return ""
			}
			if tt.serving {
				release, err := daemon.Hold(context.Background(), clock.Real{}, dir)
				require.NoError(t, err)
				t.Cleanup(release)
				require.NoError(t, WriteProc(dir, ProcState{State: ProcServing, PID: os.Getpid(), Socket: filepath.Join(run, "gone.sock")}))
			}
			d := &Door{StateDir: stateDir, Clock: clock.Real{}, Getenv: getenv}
			read := false
			got, err := CallOr(context.Background(), d,
				func(d *Door) (string, error) { _, err := d.Runtimes(context.Background()); return "api", err },
				func(*Ops, Caller) (string, error) { read = true; return "records", nil })
			require.NoError(t, err)
			assert.Equal(t, "records", got)
			assert.True(t, read)
		})
	}
}
