package github

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/task"
)

// A GitHub that takes the connection and never answers is unavailable
// once the call's limit passes, not waited for. The full run proves it
// with the real gh; -short with a gh that hangs as that gh does.
func TestGhThatNeverAnswersIsUnavailable(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "gh")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755))
	if !testing.Short() {
		var err error
		bin, err = exec.LookPath("gh")
		require.NoError(t, err, "the real gh is required (apt-get install -y gh; .ci/run installs it)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { <-done; c.Close() }() // hold it, say nothing
		}
	}()
	limit := 500 * time.Millisecond
	if testing.Short() {
		limit = 100 * time.Millisecond
	}
	g := execRunner{bin: bin, limit: limit, env: []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "GH_HOST=" + ln.Addr().String(),
		"GH_ENTERPRISE_TOKEN=x", "GH_CONFIG_DIR=" + t.TempDir(),
	}}
	_, err = run(context.Background(), g, []string{"api", "repos/o/r"}, nil)
	require.ErrorIs(t, err, task.ErrUnavailable)
	assert.Contains(t, err.Error(), "GitHub did not answer within "+limit.String())

	// The caller's own cancellation is not GitHub's fault.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = run(ctx, g, []string{"api", "repos/o/r"}, nil)
	assert.False(t, errors.Is(err, task.ErrUnavailable), "got %v", err)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestClassifyGhFailures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		exit   int
		stdout string
		stderr string
		kind   error
		http   int
		says   string
	}{
		{"refused token", 1, `{"message":"Bad credentials"}`, "gh: Bad credentials (HTTP 401)", task.ErrUnavailable, 401, "GH_ENTERPRISE_TOKEN for GH_HOST): Bad credentials"},
		{"not logged in", 4, "", "To get started with GitHub CLI, please run:  gh auth login", task.ErrUnavailable, 0, "refused gh's credentials"},
		{"forbidden", 1, `{"message":"Resource not accessible"}`, "gh: Resource not accessible (HTTP 403)", task.ErrUnavailable, 403, "HTTP 403"},
		{"GitHub failing", 1, "", "gh: Server Error (HTTP 502)", task.ErrUnavailable, 502, "GitHub is failing (HTTP 502)"},
		{"offline", 1, "", `Get "https://api.github.com/repos/o/r": dial tcp: lookup api.github.com: no such host`, task.ErrUnavailable, 0, "cannot reach GitHub (offline?)"},
		{"refused connection", 1, "", `Post "https://127.0.0.1:9/api/v3/x": dial tcp 127.0.0.1:9: connect: connection refused`, task.ErrUnavailable, 0, "connection refused"},
		{"not found", 1, `{"message":"Not Found"}`, "gh: Not Found (HTTP 404)", task.ErrNotFound, 404, "HTTP 404: Not Found"},
		{"validation", 1, `{"message":"Validation Failed"}`, "gh: Validation Failed (HTTP 422)", task.ErrInvalid, 422, "HTTP 422: Validation Failed"},
		{"something else", 1, "", "unknown flag: --frobnicate", nil, 0, "exit 1: unknown flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &Error{Args: []string{"api", "repos/o/r"}, ExitCode: tc.exit, Stderr: tc.stderr}
			classify(e, []byte(tc.stdout))
			assert.Equal(t, tc.http, e.HTTP)
			if tc.kind == nil {
				assert.NoError(t, e.Unwrap())
			} else {
				assert.ErrorIs(t, e, tc.kind)
			}
			assert.Contains(t, e.Error(), tc.says)
			assert.Contains(t, e.Error(), "gh api repos/o/r: ")
		})
	}
}

// stubRunner answers every run the same.
type stubRunner struct {
	stdout, stderr string
	exit           int
	err            error
}

func (s stubRunner) Run(context.Context, []string, []byte) ([]byte, []byte, int, error) {
	return []byte(s.stdout), []byte(s.stderr), s.exit, s.err
}

// run makes what a Runner reports an answer or a typed failure.
func TestRunMakesFailuresErrors(t *testing.T) {
	args := []string{"api", "user"}
	out, err := run(context.Background(), stubRunner{stdout: `{"login":"x"}`}, args, nil)
	require.NoError(t, err)
	assert.Equal(t, `{"login":"x"}`, string(out))

	for _, tc := range []struct {
		name string
		r    stubRunner
		kind error
		says string
	}{
		{"a failed run is classified", stubRunner{stdout: `{"message":"Not Found"}`, stderr: "gh: Not Found (HTTP 404)\n", exit: 1}, task.ErrNotFound, "gh api user: HTTP 404: Not Found"},
		{"gh missing", stubRunner{exit: -1, err: exec.ErrNotFound}, task.ErrUnavailable, "not installed or not on PATH"},
		{"no answer", stubRunner{exit: -1, err: fmt.Errorf("%w within 1m0s", ErrNoAnswer)}, task.ErrUnavailable, "GitHub did not answer within 1m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(context.Background(), tc.r, args, nil)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.ErrorIs(t, err, tc.kind)
			assert.Contains(t, err.Error(), tc.says)
		})
	}
	_, err = run(context.Background(), stubRunner{exit: -1, err: errors.New("fork: no memory")}, args, nil)
	require.Error(t, err)
	assert.NotErrorIs(t, err, task.ErrUnavailable, "a run that failed for another reason is not GitHub's")
	assert.Contains(t, err.Error(), "gh api user: fork: no memory")
}
