package relay

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRetriable(t *testing.T) {
	steps := Steps{Dir: t.TempDir()}
	require.NoError(t, steps.Save(Step{Task: Task{ID: "tk-1"}, Role: "planner"}))
	stall := fmt.Errorf("relay: %w", &StallError{Role: "planner", Want: "plan"})
	tests := []struct {
		name string
		id   string
		err  error
		want bool
	}{
		{"a stall", "tk-1", stall, true},
		{"an interrupt", "tk-1", context.Canceled, true},
		{"out of rounds", "tk-1", ErrRounds, false},
		{"another error", "tk-1", errors.New("pane died"), false},
		{"no step saved", "tk-2", stall, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, steps.Retriable(tt.id, tt.err))
		})
	}
}
