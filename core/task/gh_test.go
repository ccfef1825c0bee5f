package task

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A GitHub that takes the connection and never answers is unavailable
// once the call's limit passes, not waited for.
func TestGhThatNeverAnswersIsUnavailable(t *testing.T) {
	bin, err := exec.LookPath("gh")
	require.NoError(t, err, "the real gh is required (apt-get install -y gh; .ci/run installs it)")
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
	g := execGh{bin: bin, limit: 500 * time.Millisecond, env: []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "GH_HOST=" + ln.Addr().String(),
		"GH_ENTERPRISE_TOKEN=x", "GH_CONFIG_DIR=" + t.TempDir(),
	}}
	_, err = g.Run(context.Background(), []string{"api", "repos/o/r"}, nil)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), "GitHub did not answer within 500ms")

	// The caller's own cancellation is not GitHub's fault.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = g.Run(ctx, []string{"api", "repos/o/r"}, nil)
	assert.False(t, errors.Is(err, ErrUnavailable), "got %v", err)
	assert.ErrorIs(t, err, context.Canceled)
}
