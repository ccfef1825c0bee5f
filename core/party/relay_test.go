package party

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/relay"
)

func TestRelayTask(t *testing.T) {
	cfg := config.Config{Planner: "claude", Executor: "codex"}
	tests := []struct {
		name string
		opts RelayOptions
		want relay.Task
	}{
		{"the configured roles", RelayOptions{Task: "build it", Rounds: 3, PlanTimeout: time.Minute, ExecTimeout: time.Hour},
			relay.Task{ID: "tk-abcdefgh", Text: "build it", Planner: "claude", Executor: "codex", Rounds: 3, PlanWait: time.Minute, ExecWait: time.Hour}},
		{"roles given", RelayOptions{Task: "t", Planner: "p", Executor: "e", Rounds: 1},
			relay.Task{ID: "tk-abcdefgh", Text: "t", Planner: "p", Executor: "e", Rounds: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, relayTask(tt.opts, cfg, "abcdefghijkl"))
		})
	}
}

func TestRetriable(t *testing.T) {
	steps := relay.Steps{Dir: t.TempDir()}
	require.NoError(t, steps.Save(relay.Step{Task: relay.Task{ID: "tk-1"}, Role: "planner"}))
	stall := fmt.Errorf("relay: %w", &relay.StallError{Role: "planner", Want: "plan"})
	tests := []struct {
		name string
		id   string
		err  error
		want bool
	}{
		{"a stall", "tk-1", stall, true},
		{"an interrupt", "tk-1", context.Canceled, true},
		{"out of rounds", "tk-1", relay.ErrRounds, false},
		{"another error", "tk-1", errors.New("pane died"), false},
		{"no step saved", "tk-2", stall, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, retriable(steps, tt.id, tt.err))
		})
	}
}
