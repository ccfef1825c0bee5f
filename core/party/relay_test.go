package party

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

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
