package session

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/tmux"
)

// switchRunner answers switch-client with err.
type switchRunner struct {
	err  error
	argv [][]string
}

func (r *switchRunner) Run(_ context.Context, argv []string, _ []byte) ([]byte, error) {
	r.argv = append(r.argv, argv)
	return nil, r.err
}

func TestAttach(t *testing.T) {
	ctx := context.Background()
	var warned []string
	warn := func(s string) { warned = append(warned, s) }

	r := &switchRunner{}
	tc := tmux.New(tmux.Socket{Name: "t"}, r)
	require.NoError(t, Attach(ctx, tc, "work", Terminal{InTmux: true}, warn))
	require.Len(t, r.argv, 1)
	assert.Equal(t, []string{"tmux", "-u", "-L", "t", "switch-client", "-t", "=work:"}, r.argv[0], "inside tmux the client switches")
	assert.Empty(t, warned)

	r.err = errors.New("no current client")
	require.NoError(t, Attach(ctx, tc, "work", Terminal{InTmux: true}, warn))
	assert.Equal(t, []string{"session work runs on another server; attach with: tmux -L t attach -t work"}, warned)

	// Outside tmux it runs tmux attach on the terminal: a stand-in
	// binary shows what it is given and how it exits.
	tc.Bin = "sh"
	var out bytes.Buffer
	err := Attach(ctx, tc, "work", Terminal{Out: &out, ErrOut: &out}, warn)
	assert.EqualError(t, err, "tmux attach: exit 2", "sh refuses -u -L: %s", out.String())
	tc.Bin = "/nonexistent/tmux"
	err = Attach(ctx, tc, "work", Terminal{}, warn)
	assert.ErrorContains(t, err, "tmux attach: ")
}
