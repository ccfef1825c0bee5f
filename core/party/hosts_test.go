package party

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/exitcode"
	"github.com/partyhq/party/core/hosts"
	"github.com/partyhq/party/core/roles"
	"github.com/partyhq/party/core/supervise"
)

// remoteRunner plays ssh to hosts whose party runs in this process: the
// remote words (unquoted) pick the answer; supervise bridge runs Bridge
// over the door rig's supervisor. Each argv is recorded.
type remoteRunner struct {
	mu      sync.Mutex
	argv    [][]string
	version string
	remote  *Env
	// fail, when set, is the exit status and stderr of every run.
	fail *struct {
		exit   int
		stderr string
	}
	// answers are what a remote party prints (out) and its exit status,
	// by its words after the program; stdin what each run read.
	answers map[string]answer
	stdin   []string
	callers []string // the versions given by --caller-version
}

// answer is what a remote party run prints and exits with.
type answer struct {
	exit        int
	out, stderr string
}

func (r *remoteRunner) Start(argv []string) (hosts.Proc, error) {
	r.mu.Lock()
	r.argv = append(r.argv, argv)
	r.mu.Unlock()
	var words []string
	for _, w := range argv[slicesIndex(argv, "--")+2:] {
		w = strings.Trim(w, "'")
		if v, ok := strings.CutPrefix(w, "--caller-version="); ok {
			r.mu.Lock()
			r.callers = append(r.callers, v)
			r.mu.Unlock()
			continue // what a party of this version answers is the fake's
		}
		words = append(words, w)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &pipeProc{in: inW, out: outR, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		defer outW.Close()
		if r.fail != nil {
			p.exit, p.stderr = r.fail.exit, r.fail.stderr
			return
		}
		joined := strings.Join(words[1:], " ")
		if a, ok := r.answers[joined]; ok {
			in, _ := io.ReadAll(inR)
			r.mu.Lock()
			r.stdin = append(r.stdin, string(in))
			r.mu.Unlock()
			_, _ = io.WriteString(outW, a.out)
			p.exit, p.stderr = a.exit, a.stderr
			return
		}
		switch joined {
		case "version --json":
			_, _ = io.WriteString(outW, `{"version": "`+r.version+`", "bridge": 1}`+"\n")
		case "ls --json":
			_, _ = io.WriteString(outW, `[{"name": "s", "roles": ["claude"]}]`+"\n")
		case "supervise bridge --session=s":
			if r.remote == nil { // a party of r.version, which says hello only
				_, _ = io.WriteString(outW, `{"bridge": 1, "version": "`+r.version+`"}`+"\n")
				return
			}
			if err := Bridge(context.Background(), r.remote, inR, outW); err != nil {
				p.exit = 1
			}
		default:
			p.exit, p.stderr = 2, "party: unknown command"
		}
	}()
	return p, nil
}

func slicesIndex(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

type pipeProc struct {
	in     *io.PipeWriter
	out    *io.PipeReader
	done   chan struct{}
	exit   int
	stderr string
}

func (p *pipeProc) Read(b []byte) (int, error)  { return p.out.Read(b) }
func (p *pipeProc) Write(b []byte) (int, error) { return p.in.Write(b) }
func (p *pipeProc) Close() error                { return p.in.Close() }
func (p *pipeProc) Kill() {
	p.in.CloseWithError(errors.New("killed"))
	p.out.CloseWithError(errors.New("killed"))
}
func (p *pipeProc) Wait() (int, string) { <-p.done; return p.exit, p.stderr }

// localEnv is an Env whose config names host box, running ssh with r.
func localEnv(t *testing.T, r hosts.Runner, config string) *Env {
	dir := t.TempDir()
	vars := map[string]string{"XDG_CONFIG_HOME": filepath.Join(dir, "config"), "HOME": dir, "XDG_STATE_HOME": filepath.Join(dir, "state")}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "config", "party"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config", "party", "config.json"), []byte(config), 0o644))
	return &Env{Getenv: func(k string) string { return vars[k] }, Getwd: func() (string, error) { return dir, nil },
		Clock: clock.Real{}, SSH: r}
}

func TestHostsThroughTheBridge(t *testing.T) {
	ctx := context.Background()
	rig := newDoorRig(t)
	r := &remoteRunner{version: Version(func(string) string { return "" }), remote: rig.env("")}
	env := localEnv(t, r, `{"hosts": {"box": {"ssh": "me@box", "party": "/opt/party"}}}`)

	views, err := Hosts(ctx, env, nil)
	require.NoError(t, err)
	require.Len(t, views, 1)
	v := views[0]
	assert.Nil(t, v.Error)
	assert.Equal(t, hosts.Host{Name: "box", Dest: "me@box", Program: "/opt/party", Configured: true}, v.Host)
	assert.True(t, v.Reachable)
	require.Len(t, v.Sessions, 1)
	assert.Equal(t, "s", v.Sessions[0].Name)
	require.Len(t, v.Sessions[0].Runtimes, 1, "the runtimes came through the bridge")
	assert.Equal(t, "claude", v.Sessions[0].Runtimes[0].Role)
	require.Len(t, r.argv, 3)
	for _, argv := range r.argv {
		assert.Equal(t, []string{"ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "-o", "ServerAliveInterval=10", "-o", "ServerAliveCountMax=3",
			"-T", "--", "me@box", "'/opt/party'"}, argv[:13])
	}

	// A trigger to claude@box: the text in the API call's body, never
	// on the command line.
	text := "$(touch pwned); `x` \"q\" 'it''s'\n"
	res, err := Trigger(ctx, env, TriggerOptions{TriggerRequest: supervise.TriggerRequest{ID: "t1", Role: "claude@box", Text: text}})
	require.NoError(t, err)
	assert.True(t, res.Created)
	got, err := rig.store.Trigger(ctx, "t1")
	require.NoError(t, err)
	assert.Equal(t, text, got.Text, "byte for byte")
	assert.Equal(t, "claude", got.Role)
	for _, argv := range r.argv {
		assert.NotContains(t, strings.Join(argv, " "), "pwned")
	}

	_, err = Trigger(ctx, env, TriggerOptions{TriggerRequest: supervise.TriggerRequest{Role: "reviewer@box", Text: "x"}})
	assert.ErrorIs(t, err, roles.ErrNotFound, "no session there has the role")

	// Inside an agent's pane: the call there would be the operator's.
	n := len(r.argv)
	inPane := *env
	inPane.Getenv = func(k string) string {
		if k == "PARTY_RUNTIME_TOKEN" {
			return "tok-claude"
		}
		return env.Getenv(k)
	}
	_, err = Trigger(ctx, &inPane, TriggerOptions{TriggerRequest: supervise.TriggerRequest{Role: "claude@box", Text: "x"}})
	assert.ErrorIs(t, err, supervise.ErrForbidden)
	assert.Len(t, r.argv, n, "no ssh ran")
}

func TestHostsTellWhy(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		runner    *remoteRunner
		code      string
		exit      int
		reachable bool
	}{
		{"auth", &remoteRunner{fail: &struct {
			exit   int
			stderr string
		}{255, "me@box: Permission denied (publickey).\n"}}, "HOST_AUTH_FAILED", exitcode.ExitHost, false},
		{"no party", &remoteRunner{fail: &struct {
			exit   int
			stderr string
		}{127, "bash: line 1: party: command not found\n"}}, "NO_PARTY_THERE", exitcode.ExitHost, false},
		{"another version", &remoteRunner{version: "v0.0.1-old"}, "VERSION_MISMATCH", exitcode.ExitVersion, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := localEnv(t, tt.runner, `{"hosts": {"box": {"ssh": "me@box"}}}`)
			views, err := Hosts(ctx, env, nil)
			require.NoError(t, err)
			require.Len(t, views, 1)
			require.NotNil(t, views[0].Error)
			assert.Equal(t, tt.code, views[0].Error.Code)
			assert.Equal(t, tt.reachable, views[0].Reachable)

			_, err = Trigger(ctx, env, TriggerOptions{TriggerRequest: supervise.TriggerRequest{Role: "claude@box", Text: "x"}})
			code, exit := Classify(err)
			assert.Equal(t, tt.code, code)
			assert.Equal(t, tt.exit, exit)
		})
	}
	env := localEnv(t, &remoteRunner{}, `{}`)
	_, err := Hosts(ctx, env, []string{"me@box;touch pwned"})
	code, exit := Classify(err)
	assert.Equal(t, []any{"USAGE", exitcode.ExitUsage}, []any{code, exit})
}
