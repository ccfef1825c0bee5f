package remote

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/dash"
	"github.com/partyhq/party/core/hosts"
	"github.com/partyhq/party/sim"
)

// streamRunner plays a remote party dash --stream: it prints lines, then
// exits with exit and stderr (with hang, it stays silent until killed);
// argv is what it was started with.
type streamRunner struct {
	lines  []string
	exit   int
	stderr string
	hang   bool
	argv   [][]string
}

func (r *streamRunner) Start(argv []string) (hosts.Proc, error) {
	r.argv = append(r.argv, argv)
	out, w := io.Pipe()
	p := &streamProc{out: out, done: make(chan struct{}), killed: make(chan struct{}), exit: r.exit, stderr: r.stderr}
	go func() {
		defer close(p.done)
		for _, l := range r.lines {
			if _, err := io.WriteString(w, l+"\n"); err != nil {
				return
			}
		}
		if r.hang {
			<-p.killed
		}
		_ = w.Close()
	}()
	return p, nil
}

type streamProc struct {
	out    *io.PipeReader
	done   chan struct{}
	killed chan struct{}
	kill   sync.Once
	exit   int
	stderr string
}

func (p *streamProc) Read(b []byte) (int, error)  { return p.out.Read(b) }
func (p *streamProc) Write(b []byte) (int, error) { return len(b), nil }
func (p *streamProc) Close() error                { return nil }
func (p *streamProc) Kill() {
	p.kill.Do(func() { close(p.killed) })
	_ = p.out.CloseWithError(errors.New("killed"))
}
func (p *streamProc) Wait() (int, string) { <-p.done; return p.exit, p.stderr }

// classify is the codes these tests need of the error table.
func classify(err error) string {
	var re *hosts.RemoteError
	switch {
	case errors.As(err, &re):
		return re.Code
	case errors.Is(err, hosts.ErrLost):
		return "HOST_CONNECTION_LOST"
	case errors.Is(err, hosts.ErrUnreachable):
		return "HOST_UNREACHABLE"
	}
	return "ERROR"
}

// TestDashWatch: each line the party there writes is the host online with
// its sessions; the connection's end is the host offline with why (a
// connection lost, the remote's own error), said once.
func TestDashWatch(t *testing.T) {
	model := func(sessions ...string) string {
		var parts []string
		for _, s := range sessions {
			parts = append(parts, `{"name":"`+s+`","agents":[]}`)
		}
		return `{"now":"2026-01-01T00:00:00Z","sessions":[` + strings.Join(parts, ",") + `]}`
	}
	tests := []struct {
		name   string
		runner *streamRunner
		online []int // sessions of each online look, in order
		code   string
	}{
		{"each change, then the connection lost", &streamRunner{lines: []string{model("a"), model("a", "b")}, exit: 255,
			stderr: hosts.StartedLine + "\nConnection to 127.0.0.1 closed by remote host.\n"}, []int{1, 2}, "HOST_CONNECTION_LOST"},
		{"another version there", &streamRunner{lines: []string{`{"error":{"code":"VERSION_MISMATCH","message":"the party there is v2"}}`}, exit: 11},
			nil, "VERSION_MISMATCH"},
		{"refused", &streamRunner{exit: 255, stderr: "ssh: connect to host box port 22: Connection refused\n"}, nil, "HOST_UNREACHABLE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := Caller{SSH: tt.runner, Clock: clock.Real{}, Version: "v1", Classify: classify}
			var seen []dash.Host
			c.DashWatch(ctx, hosts.Host{Name: "box", Dest: "me@box", Program: "party"}, func(h dash.Host) {
				seen = append(seen, h)
				if !h.Online {
					cancel() // no second connection
				}
			})
			require.Len(t, seen, len(tt.online)+1)
			for i, n := range tt.online {
				assert.True(t, seen[i].Online)
				assert.Len(t, seen[i].Sessions, n)
			}
			last := seen[len(seen)-1]
			require.NotNil(t, last.Error)
			assert.Equal(t, tt.code, last.Error.Code)
			require.Len(t, tt.runner.argv, 1)
			assert.Equal(t, []string{"'party'", "'dash'", "'--caller-version=v1'", "'--stream'", "'--json'"}, tt.runner.argv[0][len(tt.runner.argv[0])-5:])
		})
	}
}

// TestDashWatchSilence: a party there that says nothing is killed once the
// virtual clock passed dashWait, and the host is offline for timing out;
// no real time passes (a watch on the wall clock never arms the sim
// clock's timer, and fails here).
func TestDashWatchSilence(t *testing.T) {
	clk := sim.NewClock()
	runner := &streamRunner{hang: true}
	c := Caller{SSH: runner, Clock: clk, Version: "v1", Classify: func(err error) string {
		if errors.Is(err, hosts.ErrTimeout) {
			return "HOST_TIMEOUT"
		}
		return classify(err)
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	watch, stop := context.WithCancel(ctx)
	defer stop()
	seen := make(chan dash.Host, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.DashWatch(watch, hosts.Host{Name: "box", Dest: "me@box", Program: "party"}, func(h dash.Host) {
			seen <- h
			stop() // no second connection
		})
	}()

	require.NoError(t, clk.AwaitTimers(ctx, 1), "the watch waits on its clock")
	clk.Advance(dashWait)
	var h dash.Host
	select {
	case h = <-seen:
	case <-ctx.Done():
		require.FailNow(t, "the silent host was not seen offline")
	}
	<-done
	assert.False(t, h.Online)
	require.NotNil(t, h.Error)
	assert.Equal(t, "HOST_TIMEOUT", h.Error.Code)
	assert.Len(t, runner.argv, 1, "one connection")
}
